import os
import sys

import pytest

# The suite tests the installed package (a venv, or pip --target DIR on
# PYTHONPATH, as scripts/sift.sh does). `python -m pytest` run from python/
# puts the source tree first on sys.path, and its sift/ has no built
# extension: step past it to the installed copy.
SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
try:
    import sift._sift  # noqa: F401
except ImportError:
    sys.modules.pop("sift", None)
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != SOURCE_DIR]
    try:
        import sift._sift  # noqa: F401,F811
    except ImportError as e:
        raise ImportError(
            "the sift package is not installed: see the README's Python section "
            "(pip install --no-build-isolation ./python)"
        ) from e


@pytest.fixture
def db_path(tmp_path):
    return str(tmp_path / "db")


@pytest.fixture
def db(db_path):
    import sift

    d = sift.DB(db_path, create_if_missing=True)
    yield d
    d.close()


def fill(db, n, value=b"v"):
    """Keys b'k00000'.. with values value + key."""
    with db.write_batch() as b:
        for i in range(n):
            k = b"k%05d" % i
            b.put(k, value + k)
