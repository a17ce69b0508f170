import os
import sys

import pytest

# Run against the package built into the tree when it is not installed
# (scripts/sift.sh points PYTHONPATH at its install target instead).
try:
    import sift  # noqa: F401
except ImportError:  # pragma: no cover - depends on how the suite is run
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
    import sift  # noqa: F401


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
