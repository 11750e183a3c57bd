import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import boardtest  # noqa: E402,F401  (puts the repository root on sys.path)
from boards import boardspec, build  # noqa: E402


@pytest.fixture(scope="session")
def builds(tmp_path_factory):
    """Every board's build (mpy-cross with its -march), in a temp folder: {name: BuildOutput}."""
    root = tmp_path_factory.mktemp("boards")
    return {b.name: build.build(b, root / b.name) for b in boardspec.load_all()}
