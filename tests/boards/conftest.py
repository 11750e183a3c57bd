import pytest

from boards import boardspec, build


@pytest.fixture(scope="session")
def builds(tmp_path_factory):
    """Every board's build (mpy-cross with its -march), in a temp folder: {name: BuildOutput}."""
    root = tmp_path_factory.mktemp("boards")
    return {b.name: build.build(b, root / b.name) for b in boardspec.load_all()}
