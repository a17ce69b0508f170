"""WriteBatch, Snapshot and PrefixedDB."""
import pytest

import sift
from conftest import fill


def test_write_batch(db):
    db.put(b"old", b"1")
    b = db.write_batch()
    b.put(b"a", b"1")
    b.put(b"b", bytearray(b"2"))
    b.delete(b"old")
    assert len(b) == 3
    assert b.approximate_size() > 0
    assert db.get(b"a") is None  # nothing until write()
    b.write()
    assert db.get(b"a") == b"1" and db.get(b"b") == b"2" and db.get(b"old") is None
    b.clear()
    assert len(b) == 0
    b.write()  # empty: fine


def test_write_batch_append(db):
    a = db.write_batch()
    a.put(b"x", b"1")
    b = db.write_batch()
    b.put(b"y", b"2")
    a.append(b)
    assert len(a) == 2
    a.write()
    assert db.get(b"y") == b"2"
    with pytest.raises(TypeError):
        a.append(b"not a batch")


def test_write_batch_context_manager(db):
    with db.write_batch(sync=True) as b:
        b.put(b"a", b"1")
    assert db.get(b"a") == b"1"
    assert len(b) == 0  # cleared after writing

    # Not a transaction: written even when the block raises.
    with pytest.raises(ZeroDivisionError):
        with db.write_batch() as b:
            b.put(b"b", b"1")
            1 / 0
    assert db.get(b"b") == b"1"

    # A transaction: discarded when the block raises.
    with pytest.raises(ZeroDivisionError):
        with db.write_batch(transaction=True) as b:
            b.put(b"c", b"1")
            1 / 0
    assert db.get(b"c") is None
    with db.write_batch(transaction=True) as b:
        b.put(b"c", b"2")
    assert db.get(b"c") == b"2"


def test_write_batch_types_and_closed(db):
    b = db.write_batch()
    with pytest.raises(TypeError):
        b.put("a", b"1")
    with pytest.raises(TypeError):
        b.put(b"a", "1")
    with pytest.raises(TypeError):
        b.delete(1)
    with pytest.raises(TypeError):
        db.write_batch(True)  # keyword-only
    with pytest.raises(TypeError):
        b.put(b"a")
    with pytest.raises(TypeError):
        b.put(b"a", b"1", b"2")
    with pytest.raises(TypeError):
        b.put(b"a", b"1", sync=True)
    with pytest.raises(TypeError):
        b.delete()
    b.put(key=b"kw", value=b"1")
    b.delete(key=b"gone")
    assert len(b) == 2
    b.write()
    assert db.get(b"kw") == b"1"
    b.put(b"a", b"1")
    db.close()
    for call in (lambda: b.put(b"a", b"1"), lambda: b.delete(b"a"), b.clear, b.write,
                 b.approximate_size):
        with pytest.raises(RuntimeError):
            call()


def test_snapshot(db):
    fill(db, 10)
    snap = db.snapshot()
    db.put(b"k00000", b"changed")
    db.delete(b"k00001")
    db.put(b"new", b"1")
    assert snap.get(b"k00000") == b"vk00000"
    assert snap.get(b"k00001") == b"vk00001"
    assert snap.get(b"new") is None
    assert snap.get(b"new", b"d") == b"d"
    assert snap.get(b"k00002", verify_checksums=True, fill_cache=False) == b"vk00002"
    assert snap.multi_get([b"k00001", b"new"]) == [b"vk00001", None]
    assert [k for k, _ in snap.iterator()] == [b"k%05d" % i for i in range(10)]
    assert [k for k, _ in snap] == [b"k%05d" % i for i in range(10)]
    assert list(snap.iterator(start=b"k00008", include_value=False)) == [b"k00008", b"k00009"]
    raw = snap.raw_iterator()
    raw.seek(b"k00001")
    assert raw.value() == b"vk00001"
    db.flush()
    db.compact_range()
    assert snap.get(b"k00000") == b"vk00000"  # survives compaction
    with pytest.raises(TypeError):
        snap.get("k")
    snap.close()
    assert snap.closed
    snap.close()
    for call in (lambda: snap.get(b"k"), snap.iterator, snap.raw_iterator,
                 lambda: snap.multi_get([b"k"])):
        with pytest.raises(RuntimeError):
            call()


def test_snapshot_iterator_outlives_snapshot_close(db):
    fill(db, 5)
    snap = db.snapshot()
    db.put(b"k00000", b"new")
    it = snap.iterator()
    snap.release()
    assert next(it) == (b"k00000", b"vk00000")


def test_snapshot_context_manager_and_db_close(db):
    with db.snapshot() as snap:
        assert not snap.closed
    assert snap.closed
    snap2 = db.snapshot()
    db.close()
    assert snap2.closed
    with pytest.raises(RuntimeError):
        snap2.get(b"a")
    snap2.close()  # fine


def test_prefixed_db(db):
    db.put(b"a", b"outside")
    db.put(b"pz", b"0")
    p = db.prefixed_db(b"p-")
    assert p.db is db and p.prefix == b"p-"
    assert "p-" in repr(p)
    p.put(b"x", b"1")
    p.put(b"y", b"2", sync=True)
    assert db.get(b"p-x") == b"1"
    assert p.get(b"x") == b"1" and p.get(b"a") is None and p.get(b"a", 5) == 5
    assert p.get(b"y", verify_checksums=True, fill_cache=False) == b"2"
    assert b"x" in p and b"a" not in p
    assert p.multi_get([b"x", b"q"]) == [b"1", None]
    assert list(p) == [(b"x", b"1"), (b"y", b"2")]
    assert list(p.iterator(reverse=True, include_value=False)) == [b"y", b"x"]
    assert list(p.iterator(start=b"y")) == [(b"y", b"2")]
    assert list(p.iterator(stop=b"y", include_stop=True, include_key=False)) == [b"1", b"2"]
    assert list(p.iterator(prefix=b"x")) == [(b"x", b"1")]
    it = p.iterator()
    it.seek(b"y")
    assert next(it) == (b"y", b"2")
    p.delete(b"x")
    assert p.get(b"x") is None
    with p.write_batch() as b:
        b.put(b"z", b"3")
        b.delete(b"y")
    assert db.get(b"p-z") == b"3" and db.get(b"p-y") is None
    with pytest.raises(ZeroDivisionError):
        with p.write_batch(transaction=True) as b:
            b.put(b"w", b"4")
            1 / 0
    assert p.get(b"w") is None
    snap = p.snapshot()
    p.put(b"z", b"changed")
    assert snap.get(b"z") == b"3"
    assert list(snap.iterator()) == [(b"z", b"3")]
    q = p.prefixed_db(b"q-")
    q.put(b"k", b"v")
    assert db.get(b"p-q-k") == b"v"
    assert q.prefix == b"p-q-"
    for bad in ("str", None, 1):
        with pytest.raises(TypeError):
            p.get(bad)
        with pytest.raises(TypeError):
            db.prefixed_db(bad)


def test_prefixed_db_all_ff_prefix(db):
    db.put(b"\xff\xff", b"1")
    db.put(b"\xff\xff\x00", b"2")
    db.put(b"\xfe", b"x")
    p = db.prefixed_db(b"\xff\xff")
    assert list(p) == [(b"", b"1"), (b"\x00", b"2")]


def test_prefixed_db_closed(db):
    p = db.prefixed_db(b"p")
    db.close()
    with pytest.raises(RuntimeError):
        p.get(b"a")
    with pytest.raises(RuntimeError):
        p.iterator()
    with pytest.raises(RuntimeError):
        p.write_batch()
    with pytest.raises(RuntimeError):
        p.snapshot()
