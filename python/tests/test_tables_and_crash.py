"""TableWriter and ingest, damaged tables, and a writer killed mid-run."""
import glob
import os
import signal
import subprocess
import sys
import textwrap

import pytest

import sift


def write_table(path, items, **kwargs):
    with sift.TableWriter(str(path), **kwargs) as w:
        for k, v in items:
            if v is None:
                w.delete(k)
            else:
                w.put(k, v)
    return w


def test_table_writer_and_ingest(db, tmp_path):
    db.put(b"t001", b"old")
    db.put(b"u", b"keep")
    path = tmp_path / "a.sst"
    w = sift.TableWriter(str(path), block_size=1024, block_restart_interval=8,
                         compression=None, bloom_filter_bits=12, filter_kind="binary_fuse")
    assert w.path == str(path) and not w.finished
    for i in range(1000):
        w.put(b"t%03d" % i, b"v%d" % i)
    w.delete(b"t999a")
    info = w.finish()
    assert w.finished
    assert info["smallest_key"] == b"t000" and info["largest_key"] == b"t999a"
    assert info["num_entries"] == 1001
    assert info["file_size"] == os.path.getsize(path)
    db.ingest([str(path)])
    assert db.get(b"t001") == b"v1"  # the ingested value shadows the older one
    assert db.get(b"u") == b"keep"
    assert os.path.exists(path)  # the caller's file is left alone
    path2 = tmp_path / "b.sst"
    write_table(path2, [(b"x1", b"1"), (b"x2", None)])
    db.ingest(str(path2), move_files=True, verify_checksums=False)
    assert db.get(b"x1") == b"1"


def test_table_writer_errors(tmp_path, db):
    w = sift.TableWriter(str(tmp_path / "c.sst"))
    w.put(b"b", b"1")
    with pytest.raises(sift.Error):
        w.put(b"a", b"1")  # out of order
    with pytest.raises(sift.Error):
        w.finish()
    with pytest.raises(RuntimeError):
        w.put(b"c", b"1")  # finished
    empty = sift.TableWriter(str(tmp_path / "d.sst"))
    with pytest.raises(sift.Error):
        empty.finish()  # nothing added
    w2 = sift.TableWriter(tmp_path / "e.sst")
    with pytest.raises(TypeError):
        w2.put("a", b"1")
    with pytest.raises(TypeError):
        w2.put(b"a", "1")
    with pytest.raises(ValueError):
        sift.TableWriter(str(tmp_path / "f.sst"), compression="lz4")
    with pytest.raises(sift.IOError):
        sift.TableWriter(str(tmp_path / "no" / "dir.sst"))
    with pytest.raises(KeyError):
        with sift.TableWriter(str(tmp_path / "g.sst")) as w3:
            w3.put(b"a", b"1")
            raise KeyError
    assert w3.finished  # abandoned
    with pytest.raises(sift.IOError):
        db.ingest([str(tmp_path / "missing.sst")])
    with pytest.raises(sift.Error):
        db.ingest([])


def test_damaged_table_raises_corruption_error(db_path):
    with sift.DB(db_path, create_if_missing=True, compression=None) as db:
        for i in range(5000):
            db.put(b"k%05d" % i, b"value-%05d" % i * 4)
        db.flush()
    (table,) = glob.glob(os.path.join(db_path, "*.sst"))
    size = os.path.getsize(table)
    with open(table, "r+b") as f:
        f.seek(size // 4)
        f.write(b"\x00" * 4096)
    with sift.DB(db_path, allow_mmap_reads=False, lru_cache_size=0) as db:
        with pytest.raises(sift.CorruptionError):
            for _ in db.iterator(verify_checksums=True):
                pass


WRITER = textwrap.dedent(
    """
    import sys
    sys.path[:0] = {path!r}
    import sift
    db = sift.DB(sys.argv[1], create_if_missing=True, write_buffer_size=64 << 10)
    i = 0
    while True:
        db.put(b"key%08d" % i, b"value%08d" % i * 8, sync={sync})
        if i % 10 == 0:
            with db.write_batch(sync={sync}) as b:
                b.put(b"batch%08d" % i, b"x")
                b.delete(b"key%08d" % (i - 5))
        print(i, flush=True)  # acknowledged
        i += 1
    """
)


@pytest.mark.parametrize("sync", [True, False])
def test_killed_writer_loses_no_acknowledged_write(tmp_path, sync):
    """A process killed with SIGKILL mid-run: every write it acknowledged
    (synced or not: a process crash keeps the OS's page cache) reads back."""
    db_path = str(tmp_path / "db")
    code = WRITER.format(path=[os.path.dirname(os.path.dirname(sift.__file__))], sync=sync)
    proc = subprocess.Popen([sys.executable, "-c", code, db_path],
                            stdout=subprocess.PIPE, text=True)
    last = -1
    try:
        for line in proc.stdout:
            last = int(line)
            if last >= 3000:
                break
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert last >= 3000, "the writer stopped early"
    with sift.DB(db_path) as db:
        for i in range(last + 1):
            deleted = i % 10 == 5 and i + 5 <= last
            want = None if deleted else b"value%08d" % i * 8
            assert db.get(b"key%08d" % i) == want, i
            if i % 10 == 0:
                assert db.get(b"batch%08d" % i) == b"x"
        # And the database is whole: a full scan reads without error.
        assert sum(1 for _ in db) > last // 2
        recovery = db.get_property(b"sift.recovery")
        assert recovery is not None
