"""Iterator and RawIterator against a model of plyvel's semantics."""
import bisect
import itertools
import random

import pytest

import sift
from conftest import fill

KEYS = [b"a", b"b", b"bb", b"c", b"d", b"e\xff", b"e\xff\xff", b"f"]
BOUNDS = [None, b"", b"a", b"b", b"ba", b"c", b"e", b"e\xff", b"z"]


@pytest.fixture
def kdb(db):
    for k in KEYS:
        db.put(k, k.upper())
    return db


def in_range(key, start, stop, include_start, include_stop, prefix):
    if prefix is not None:
        return key.startswith(prefix)
    if start is not None and (key < start or (key == start and not include_start)):
        return False
    if stop is not None and (key > stop or (key == stop and not include_stop)):
        return False
    return True


class Model:
    """A cursor between the entries of the range (as a list iterator): next()
    returns the entry after it, prev() the one before; a reverse iterator
    swaps the two and starts at the end."""

    def __init__(self, keys, reverse=False, start=None, stop=None,
                 include_start=True, include_stop=False, prefix=None):
        self.entries = sorted(
            k for k in keys if in_range(k, start, stop, include_start, include_stop, prefix)
        )
        self.reverse = reverse
        self.start = prefix if prefix is not None else start
        self.stop = stop if prefix is None else None
        self.pos = len(self.entries) if reverse else 0

    def _forward(self):
        if self.pos >= len(self.entries):
            raise StopIteration
        self.pos += 1
        return self.entries[self.pos - 1]

    def _backward(self):
        if self.pos <= 0:
            raise StopIteration
        self.pos -= 1
        return self.entries[self.pos]

    def next(self):
        return self._backward() if self.reverse else self._forward()

    def prev(self):
        return self._forward() if self.reverse else self._backward()

    def seek(self, target):
        if self.start is not None and target < self.start:
            target = self.start
        if self.stop is not None and target > self.stop:
            target = self.stop
        self.pos = bisect.bisect_left(self.entries, target)

    def seek_to_start(self):
        self.pos = 0

    def seek_to_stop(self):
        self.pos = len(self.entries)


def test_every_range_matches_the_model(kdb):
    for start, stop in itertools.product(BOUNDS, BOUNDS):
        for inc_start, inc_stop, reverse in itertools.product([True, False], repeat=3):
            kw = dict(start=start, stop=stop, include_start=inc_start,
                      include_stop=inc_stop, reverse=reverse)
            want = Model(KEYS, **kw).entries
            if reverse:
                want = want[::-1]
            got = list(kdb.iterator(**kw))
            assert got == [(k, k.upper()) for k in want], kw


@pytest.mark.parametrize("prefix", [b"", b"b", b"e\xff", b"e\xff\xff", b"x", b"\xff"])
@pytest.mark.parametrize("reverse", [False, True])
def test_prefix(kdb, prefix, reverse):
    want = sorted(k for k in KEYS if k.startswith(prefix))
    if reverse:
        want.reverse()
    got = list(kdb.iterator(prefix=prefix, reverse=reverse, include_value=False))
    assert got == want


def test_prefix_with_start_or_stop_is_type_error(kdb):
    with pytest.raises(TypeError):
        kdb.iterator(prefix=b"a", start=b"a")
    with pytest.raises(TypeError):
        kdb.iterator(prefix=b"a", stop=b"b")


def test_random_moves_match_the_model(kdb):
    rng = random.Random(7)
    targets = BOUNDS[1:] + [b"bba", b"d\x00"]
    for _ in range(1500):
        if rng.random() < 0.2:
            kw = dict(prefix=rng.choice([b"b", b"e", b"e\xff", b"q"]),
                      reverse=rng.random() < 0.5)
        else:
            kw = dict(start=rng.choice(BOUNDS), stop=rng.choice(BOUNDS),
                      include_start=rng.random() < 0.5,
                      include_stop=rng.random() < 0.5,
                      reverse=rng.random() < 0.5)
        model = Model(KEYS, **kw)
        it = kdb.iterator(include_value=False, **kw)
        log = []
        for _ in range(15):
            op = rng.choice(["next", "next", "prev", "prev", "seek", "seek_to_start",
                             "seek_to_stop"])
            target = rng.choice(targets)
            results = []
            for obj in (model, it):
                try:
                    if op == "next":
                        results.append(next(obj) if obj is it else obj.next())
                    elif op == "seek":
                        results.append(obj.seek(target))
                    else:
                        results.append(getattr(obj, op)())
                except StopIteration:
                    results.append("stop")
            log.append((op, target if op == "seek" else None, results[1]))
            assert results[0] == results[1], (kw, log)
        it.close()


def test_include_key_and_value(kdb):
    assert next(kdb.iterator()) == (b"a", b"A")
    assert next(kdb.iterator(include_value=False)) == b"a"
    assert next(kdb.iterator(include_key=False)) == b"A"
    assert next(kdb.iterator(include_key=False, include_value=False)) is None
    rev = kdb.iterator(include_value=False, reverse=True)
    with pytest.raises(StopIteration):
        rev.prev()  # a reverse iterator starts at the end
    assert next(rev) == b"f" and rev.prev() == b"f"


def test_read_options_and_snapshot_isolation(kdb):
    it = kdb.iterator(verify_checksums=True, fill_cache=False)
    kdb.put(b"aa", b"new")
    kdb.delete(b"f")
    keys = [k for k, _ in it]
    assert keys == KEYS  # the iterator sees the DB as of its creation


def test_iterator_over_tables_and_memtable(db):
    fill(db, 3000)
    db.flush()
    for i in range(0, 3000, 2):
        db.delete(b"k%05d" % i)
    db.put(b"k00001", b"new")
    got = list(db.iterator(start=b"k00000", stop=b"k00010"))
    assert got == [(b"k00001", b"new"), (b"k00003", b"vk00003"), (b"k00005", b"vk00005"),
                   (b"k00007", b"vk00007"), (b"k00009", b"vk00009")]
    assert sum(1 for _ in db.iterator(reverse=True)) == 1500


def test_bad_types(kdb):
    for kw in ("start", "stop", "prefix"):
        with pytest.raises(TypeError):
            kdb.iterator(**{kw: "str"})
    with pytest.raises(TypeError):
        kdb.iterator(True)  # keyword-only
    it = kdb.iterator()
    with pytest.raises(TypeError):
        it.seek("b")
    with pytest.raises(TypeError):
        it.seek(None)


def test_close_and_context_manager(kdb):
    it = kdb.iterator()
    assert not it.closed
    next(it)
    it.close()
    assert it.closed
    it.close()
    for call in (lambda: next(it), it.prev, it.seek_to_start, it.seek_to_stop,
                 lambda: it.seek(b"a"), it.__next__):
        with pytest.raises(RuntimeError):
            call()
    with kdb.iterator() as it2:
        assert next(it2) == (b"a", b"A")
    assert it2.closed
    with pytest.raises(RuntimeError):
        next(it2)


def test_db_close_closes_iterators(kdb):
    it = kdb.iterator()
    raw = kdb.raw_iterator()
    next(it)
    kdb.close()
    assert it.closed and raw.closed
    with pytest.raises(RuntimeError):
        next(it)
    with pytest.raises(RuntimeError):
        raw.valid()


def test_iterator_keeps_db_object_alive(db_path):
    db = sift.DB(db_path, create_if_missing=True)
    db.put(b"a", b"1")
    it = db.iterator()
    del db
    assert next(it) == (b"a", b"1")
    it.close()
    del it
    # The last reference is gone: the DB closed itself and released its LOCK.
    sift.DB(db_path).close()


def test_raw_iterator(kdb):
    raw = kdb.raw_iterator(verify_checksums=True, fill_cache=False)
    assert not raw.valid()
    for call in (raw.next, raw.prev, raw.key, raw.value, raw.item):
        with pytest.raises(sift.IteratorInvalidError):
            call()
    raw.seek_to_first()
    assert raw.valid() and raw.key() == b"a" and raw.value() == b"A"
    raw.next()
    assert raw.item() == (b"b", b"B")
    raw.seek_to_last()
    assert raw.key() == b"f"
    raw.prev()
    assert raw.key() == b"e\xff\xff"
    raw.seek(b"bc")
    assert raw.key() == b"c"
    raw.seek(b"g")
    assert not raw.valid()
    raw.seek_to_last()
    raw.next()
    assert not raw.valid()
    with pytest.raises(TypeError):
        raw.seek("a")
    raw.close()
    assert raw.closed
    with pytest.raises(RuntimeError):
        raw.seek_to_first()
    with kdb.raw_iterator() as r2:
        r2.seek_to_first()
        assert r2.key() == b"a"
    with pytest.raises(RuntimeError):
        r2.valid()


def test_iterator_in_use_by_two_threads_is_refused_not_crashed(db):
    import threading

    fill(db, 20000)
    it = db.iterator()
    errors = []

    def run():
        try:
            for _ in it:
                pass
        except RuntimeError as e:
            errors.append(str(e))

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # Either the threads took turns or some were refused; all finished.
    assert all("in use" in e for e in errors)


def test_raw_iterator_bounds(kdb):
    raw = kdb.raw_iterator(lower_bound=b"b", upper_bound=b"d")
    raw.seek_to_first()
    keys = []
    while raw.valid():
        keys.append(raw.key())
        raw.next()
    assert keys == [b"b", b"bb", b"c"]
    raw.seek_to_last()
    assert raw.key() == b"c"
    raw.seek(b"a")
    assert raw.key() == b"b"
    raw.seek(b"e")
    assert not raw.valid()
    only_lower = kdb.raw_iterator(lower_bound=b"e")
    only_lower.seek_to_first()
    assert only_lower.key() == b"e\xff"
    empty = kdb.raw_iterator(lower_bound=b"d", upper_bound=b"c")
    empty.seek_to_first()
    assert not empty.valid()
    snap = kdb.snapshot()
    kdb.put(b"bc", b"new")
    sraw = snap.raw_iterator(lower_bound=b"bb", upper_bound=b"c")
    sraw.seek_to_first()
    assert sraw.item() == (b"bb", b"BB")
    sraw.next()
    assert not sraw.valid()
    with pytest.raises(TypeError):
        kdb.raw_iterator(lower_bound="b")
    with pytest.raises(TypeError):
        kdb.raw_iterator(upper_bound=1)


def test_ranges_over_many_tables_match_the_model(db):
    """Ranges cut through tables at several levels and the memtable; the
    engine's iteration bounds must agree with the checks above them."""
    keys = []
    for round_ in range(4):
        with db.write_batch() as b:
            for i in range(round_, 4000, 4):
                k = b"k%05d" % i
                b.put(k, b"v")
                keys.append(k)
        db.flush()
    for i in range(1, 4000, 8):
        db.put(b"k%05d" % i + b"x", b"m")  # memtable entries between them
        keys.append(b"k%05d" % i + b"x")
    rng = random.Random(3)
    bounds = [None] + [b"k%05d" % rng.randrange(4100) for _ in range(12)] + [b"k01000x"]
    for _ in range(150):
        kw = dict(start=rng.choice(bounds), stop=rng.choice(bounds),
                  include_start=rng.random() < 0.5, include_stop=rng.random() < 0.5,
                  reverse=rng.random() < 0.5)
        want = Model(keys, **kw).entries
        if kw["reverse"]:
            want = want[::-1]
        assert list(db.iterator(include_value=False, **kw)) == want, kw


def test_long_runs_and_turns_match_the_model(db):
    """Runs of many steps one way (served from the read-ahead, up to 64
    entries per run), then turns, seeks and runs back, against the model."""
    keys = [b"r%04d" % i for i in range(0, 1200, 3)]
    with db.write_batch() as b:
        for k in keys:
            b.put(k, b"v" + k)
    db.flush()
    for k in keys[::7]:
        db.put(k, b"w" + k)  # some newer versions in the memtable
    rng = random.Random(11)
    bounds = [None, b"r0100", b"r0500", b"r0999", b"r1100"]
    for _ in range(60):
        kw = dict(start=rng.choice(bounds[:3]), stop=rng.choice([None] + bounds[2:]),
                  include_start=rng.random() < 0.5, include_stop=rng.random() < 0.5,
                  reverse=rng.random() < 0.5)
        model = Model(keys, **kw)
        it = db.iterator(include_value=False, **kw)
        for _ in range(12):
            op = rng.choice(["next", "prev", "seek", "seek_to_start", "seek_to_stop"])
            if op == "seek":
                target = b"r%04d" % rng.randrange(1200)
                model.seek(target)
                it.seek(target)
                continue
            if op.startswith("seek_to"):
                getattr(model, op)()
                getattr(it, op)()
                continue
            for _ in range(rng.randrange(1, 150)):
                try:
                    want = model.next() if op == "next" else model.prev()
                except StopIteration:
                    want = "stop"
                try:
                    got = next(it) if op == "next" else it.prev()
                except StopIteration:
                    got = "stop"
                assert got == want, (kw, op)
