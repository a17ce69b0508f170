"""DB: opening, options, point reads and writes, maintenance calls."""
import os
import threading
import time

import pytest

import sift
from conftest import fill


def test_open_missing_without_create_if_missing(db_path):
    with pytest.raises(sift.Error) as e:
        sift.DB(db_path)
    assert not isinstance(e.value, sift.CorruptionError)


def test_create_and_reopen(db_path):
    with sift.DB(db_path, create_if_missing=True) as db:
        db.put(b"a", b"1")
    with sift.DB(db_path) as db:
        assert db.get(b"a") == b"1"


def test_error_if_exists(db_path):
    sift.DB(db_path, create_if_missing=True).close()
    with pytest.raises(sift.Error):
        sift.DB(db_path, create_if_missing=True, error_if_exists=True)


def test_second_open_is_io_error(db):
    with pytest.raises(sift.IOError) as e:
        sift.DB(db.name)
    assert isinstance(e.value, IOError)  # the builtin too
    assert isinstance(e.value, sift.Error)


def test_exception_hierarchy():
    assert issubclass(sift.IOError, sift.Error)
    assert issubclass(sift.IOError, OSError)
    assert issubclass(sift.CorruptionError, sift.Error)
    assert issubclass(sift.IteratorInvalidError, sift.Error)
    assert sift.Error.__module__ == "sift"


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(paranoid_checks=True),
        dict(paranoid_checks=False),
        dict(write_buffer_size=64 << 10),
        dict(max_open_files=100),
        dict(lru_cache_size=0),
        dict(lru_cache_size=1 << 20),
        dict(block_size=1024),
        dict(block_restart_interval=4),
        dict(max_file_size=128 << 10),
        dict(compression=None),
        dict(compression="snappy"),
        dict(compression=b"snappy"),
        dict(bloom_filter_bits=0),
        dict(bloom_filter_bits=7.5),
        dict(filter_kind="standard_bloom"),
        dict(filter_kind="blocked_bloom"),
        dict(filter_kind="binary_fuse"),
        dict(filter_allocation="uniform"),
        dict(filter_allocation="optimal"),
        dict(allow_mmap_reads=False),
        dict(allow_mmap_reads=True),
        dict(use_direct_reads=False),
        dict(filter_memory_limit=0),
        dict(filter_memory_limit=4096),
        dict(comparator=None, comparator_name=None),
        dict(prefix_extractor=None),
        dict(prefix_extractor=sift.fixed_prefix(3)),
        dict(prefix_extractor=sift.delimited_prefix(b"0"), whole_key_filtering=False),
        dict(whole_key_filtering=True),
        dict(range_filter_bits_per_key=0),
        dict(range_filter_bits_per_key=16),
        dict(range_filter_bits_per_key=2.5),
    ],
)
def test_options_round_trip(db_path, kwargs):
    """Each keyword is accepted, and data written under it reads back from
    tables (after a flush) and after reopening."""
    with sift.DB(db_path, create_if_missing=True, **kwargs) as db:
        fill(db, 3000, value=b"x" * 50)
        db.flush()
        assert db.get(b"k01234") == b"x" * 50 + b"k01234"
        assert db.get(b"k99999") is None
    with sift.DB(db_path, **kwargs) as db:
        assert sum(1 for _ in db) == 3000


def test_direct_reads(db_path):
    """use_direct_reads=True: every table block read goes to the file (the block
    cache off, no memory map); where the file system refuses O_DIRECT the
    engine says so with sift.Error naming the option."""
    try:
        db = sift.DB(db_path, create_if_missing=True, use_direct_reads=True, lru_cache_size=0)
        fill(db, 3000)
        db.flush()
        before = db.read_stats()["block_reads"]
        for i in range(10):
            assert db.get(b"k%05d" % i) == b"vk%05d" % i
    except sift.Error as e:
        assert "direct" in str(e).lower()
        pytest.skip("the file system here refuses O_DIRECT")
    assert db.read_stats()["block_reads"] - before == 10
    db.close()


def test_options_reach_the_engine(db_path):
    """A filter-less database holds no filter memory; one with filters does."""
    for bits, expect_filter in ((0, False), (10, True)):
        path = db_path + str(bits)
        with sift.DB(path, create_if_missing=True, bloom_filter_bits=bits) as db:
            fill(db, 2000)
            db.flush()
            mem = int(db.get_property(b"sift.filter-memory-bytes"))
            assert (mem > 0) == expect_filter


def test_small_write_buffer_makes_tables(db_path):
    with sift.DB(db_path, create_if_missing=True, write_buffer_size=64 << 10) as db:
        for i in range(20000):
            db.put(b"k%05d" % i, b"y" * 40)
        db.flush()
        assert db.get_property(b"sift.sstables")
        assert table_count(db) >= 2


@pytest.mark.parametrize(
    "kwargs, exc",
    [
        (dict(compression="zlib"), ValueError),
        (dict(compression=1), TypeError),
        (dict(filter_kind="cuckoo"), ValueError),
        (dict(filter_allocation="greedy"), ValueError),
        (dict(bloom_filter_bits="10"), TypeError),
        (dict(write_buffer_size="big"), TypeError),
        (dict(comparator=lambda a, b: 0, comparator_name=b"x"), ValueError),
        (dict(no_such_option=1), TypeError),
        (dict(write_buffer_size=1), sift.Error),  # outside the engine's range
        (dict(max_open_files=1), sift.Error),
        (dict(bloom_filter_bits=1000), sift.Error),
        (dict(prefix_extractor="fixed:2"), TypeError),
        (dict(range_filter_bits_per_key="16"), TypeError),
        (dict(range_filter_bits_per_key=True), TypeError),
        (dict(range_filter_bits_per_key=1), sift.Error),  # 0 or [2, 64]
        (dict(range_filter_bits_per_key=65), sift.Error),
        (dict(whole_key_filtering=False), sift.Error),  # needs an extractor
    ],
)
def test_bad_options(db_path, kwargs, exc):
    with pytest.raises(exc):
        sift.DB(db_path, create_if_missing=True, **kwargs)


def test_prefix_extractors():
    fixed = sift.fixed_prefix(4)
    assert isinstance(fixed, sift.PrefixExtractor)
    assert fixed.name == "sift.fixed:4"
    assert "sift.fixed:4" in repr(fixed)
    assert sift.delimited_prefix(b":").name == "sift.delimited:3a"
    for bad, exc in ((0, ValueError), (-1, ValueError), ("4", TypeError), (True, TypeError)):
        with pytest.raises(exc):
            sift.fixed_prefix(bad)
    for bad, exc in ((b"", ValueError), (b"::", ValueError), (":", TypeError), (58, TypeError)):
        with pytest.raises(exc):
            sift.delimited_prefix(bad)


def test_scan_filters_skip_tables(db_path):
    """With a prefix extractor, iterator(prefix=...) over a prefix the table
    lacks is answered by its prefix filter; with a range filter, bounds that
    hold no key are answered by it; both without changing what is read."""
    with sift.DB(
        db_path,
        create_if_missing=True,
        prefix_extractor=sift.fixed_prefix(2),
        range_filter_bits_per_key=16,
    ) as db:
        for k in (b"aa1", b"aa2", b"cc1", b"cc2"):
            db.put(k, k)
        db.flush()
        before = db.read_stats()
        assert list(db.iterator(prefix=b"bb")) == []
        mid = db.read_stats()
        assert mid["prefix_filter_probes"] > before["prefix_filter_probes"]
        assert mid["prefix_filter_negatives"] > before["prefix_filter_negatives"]
        assert mid["seeks"] > before["seeks"]
        assert list(db.iterator(prefix=b"aa", include_value=False)) == [b"aa1", b"aa2"]
        # One 3-byte value (the table's keys are 3 bytes) 72 above aa2: at 16
        # bits/key the range filter's false-positive rate is below 0.002.
        before = db.read_stats()
        assert list(db.iterator(start=b"aaz", stop=b"aa{")) == []
        after = db.read_stats()
        assert after["range_filter_probes"] > before["range_filter_probes"]
        assert after["range_filter_negatives"] > before["range_filter_negatives"]
        assert list(db.iterator(start=b"aa2", stop=b"cc2", include_value=False)) == [
            b"aa2",
            b"cc1",
        ]
        assert db.get(b"cc2") == b"cc2" and db.get(b"bb1") is None
        # prefix_same_as_start: a raw iterator's seek stays in its prefix.
        it = db.raw_iterator(prefix_same_as_start=True)
        it.seek(b"aa")
        keys = []
        while it.valid():
            keys.append(it.key())
            it.next()
        assert keys == [b"aa1", b"aa2"]
        it.close()
        it = db.raw_iterator()
        it.seek(b"aa2")
        it.next()
        assert it.key() == b"cc1"  # total order without it
        it.close()
        with db.snapshot() as snap:
            it = snap.raw_iterator(prefix_same_as_start=True)
            it.seek(b"cc")
            it.next()
            it.next()
            assert not it.valid()
            it.close()


def test_open_keywords_are_keyword_only(db_path):
    with pytest.raises(TypeError):
        sift.DB(db_path, True)


def test_name_and_path_types(tmp_path):
    p = tmp_path / "pathlike"
    with sift.DB(p, create_if_missing=True) as db:
        assert db.name == p
    b = os.fsencode(str(tmp_path / "bytes"))
    with sift.DB(b, create_if_missing=True) as db:
        assert db.name == b
    with pytest.raises(TypeError):
        sift.DB(42, create_if_missing=True)


def test_repr(db):
    assert "sift.DB" in repr(db) and db.name in repr(db)
    db.close()
    assert "closed" in repr(db)


def test_get_put_delete(db):
    assert db.get(b"a") is None
    assert db.get(b"a", b"dflt") == b"dflt"
    assert db.get(b"a", default=7) == 7
    db.put(b"a", b"1")
    assert db.get(b"a") == b"1"
    db.put(b"a", b"2", sync=True)
    assert db.get(b"a", verify_checksums=True, fill_cache=False) == b"2"
    db.delete(b"a")
    assert db.get(b"a") is None
    db.delete(b"a", sync=True)  # absent: not an error
    db.put(b"", b"")
    assert db.get(b"") == b""


def test_binary_and_large_values(db):
    key = bytes(range(256))
    value = os.urandom(1 << 20)
    db.put(key, value)
    db.flush()
    assert db.get(key) == value
    assert type(db.get(key)) is bytes


def test_value_buffer_types(db):
    db.put(b"ba", bytearray(b"xy"))
    db.put(b"mv", memoryview(b"abcdef")[1:3])
    assert db.get(b"ba") == b"xy"
    assert db.get(b"mv") == b"bc"


@pytest.mark.parametrize("bad", ["str", 1, None, bytearray(b"k"), 1.5])
def test_bad_key_types(db, bad):
    with pytest.raises(TypeError):
        db.get(bad)
    with pytest.raises(TypeError):
        db.put(bad, b"v")
    with pytest.raises(TypeError):
        db.delete(bad)
    with pytest.raises(TypeError):
        bad in db


@pytest.mark.parametrize("bad", ["str", 1, None])
def test_bad_value_types(db, bad):
    with pytest.raises(TypeError):
        db.put(b"k", bad)


def test_argument_binding(db):
    with pytest.raises(TypeError):
        db.get()
    with pytest.raises(TypeError):
        db.get(b"k", None, False)  # verify_checksums is keyword-only
    with pytest.raises(TypeError):
        db.get(b"k", bogus=1)
    with pytest.raises(TypeError):
        db.get(b"k", key=b"k")
    with pytest.raises(TypeError):
        db.put(b"k")
    with pytest.raises(TypeError):
        db.put(b"k", b"v", True)
    with pytest.raises(TypeError):
        db.delete(b"k", True)
    db.put(key=b"k", value=b"v", sync=False)
    assert db.get(key=b"k", default=None) == b"v"
    db.delete(key=b"k")
    assert db.get(b"k") is None


def test_contains(db):
    db.put(b"a", b"")
    assert b"a" in db
    assert b"b" not in db
    db.delete(b"a")
    assert b"a" not in db


def test_iter_is_full_forward_scan(db):
    fill(db, 10)
    assert [k for k, _ in db] == [b"k%05d" % i for i in range(10)]


def test_multi_get(db):
    fill(db, 100)
    keys = [b"k00005", b"nope", b"k00005", b"k00099", b""]
    assert db.multi_get(keys) == [b"vk00005", None, b"vk00005", b"vk00099", None]
    assert db.multi_get([]) == []
    assert db.multi_get(iter([b"k00001"]), verify_checksums=True, fill_cache=False) == [
        b"vk00001"
    ]
    db.flush()
    assert db.multi_get([b"k00042", b"zz"]) == [b"vk00042", None]
    with pytest.raises(TypeError):
        db.multi_get(["k00001"])
    with pytest.raises(TypeError):
        db.multi_get(5)


def test_read_stats(db):
    fill(db, 1000)
    db.flush()
    before = db.read_stats()
    for i in range(50):
        db.get(b"k%05d" % i)
    for i in range(50):
        db.get(b"k%05da" % i)  # inside the table's key range
    after = db.read_stats()
    assert after["gets"] - before["gets"] == 100
    assert after["filter_negatives"] > before["filter_negatives"]
    for name in (
        "memtable_hits",
        "tables_probed",
        "filter_positives",
        "filter_false_positives",
        "block_cache_hits",
        "block_reads",
        "bytes_read",
        "table_loads",
        "filter_unit_loads",
        "seeks",
        "iterator_block_reads",
        "iterator_block_cache_hits",
        "prefix_filter_probes",
        "prefix_filter_negatives",
        "range_filter_probes",
        "range_filter_negatives",
        "range_filter_false_positives",
    ):
        assert isinstance(after[name], int)
    assert after["filter_unit_loads"] == 0  # no filter memory limit
    assert 0.0 <= after["measured_fpr"] <= 1.0
    assert after["read_amplification"] >= 0.0


def test_filter_memory_limit(db_path):
    """Under filter_memory_limit the tables' filters are loaded in units at
    open (counted as filter_unit_loads) and answers stay right."""
    with sift.DB(db_path, create_if_missing=True, filter_memory_limit=1 << 30) as db:
        fill(db, 3000)
        db.flush()
    with sift.DB(db_path, filter_memory_limit=1 << 30) as db:
        assert db.read_stats()["filter_unit_loads"] > 0
        for i in range(0, 3000, 97):
            assert db.get(b"k%05d" % i) == b"vk%05d" % i
        assert db.get(b"k%05da" % 5) is None


def test_get_property(db):
    fill(db, 10)
    stats = db.get_property(b"sift.stats")
    assert isinstance(stats, bytes) and stats
    assert db.get_property("sift.stats") is not None
    assert db.get_property(b"sift.no-such-property") is None
    assert table_count(db) == 0
    db.flush()
    assert table_count(db) == 1
    with pytest.raises(TypeError):
        db.get_property(5)


def table_count(db):
    return sum(int(db.get_property(b"sift.num-files-at-level%d" % i)) for i in range(7))


def test_flush_and_compact_range(db):
    fill(db, 5000)
    db.flush()
    fill(db, 5000, value=b"w")
    db.flush()
    assert table_count(db) == 2
    db.compact_range(start=b"k00000", stop=b"k00100")
    db.compact_range(start=None, stop=b"k")
    db.compact_range()
    assert table_count(db) == 1  # the two merged
    assert db.get(b"k00010") == b"wk00010"
    with pytest.raises(TypeError):
        db.compact_range(start="a")
    with pytest.raises(TypeError):
        db.compact_range(b"a", b"b")  # keyword-only, as in plyvel


def test_checkpoint(db, tmp_path):
    fill(db, 500)
    db.flush()
    db.put(b"late", b"1")
    target = tmp_path / "ckpt"
    db.checkpoint(str(target))
    db.put(b"after", b"2")
    with sift.DB(str(target)) as copy:
        assert copy.get(b"k00499") == b"vk00499"
        assert copy.get(b"late") == b"1"
        assert copy.get(b"after") is None
    with pytest.raises(sift.IOError):
        db.checkpoint(str(target))  # exists


def test_closed_db(db):
    fill(db, 3)
    db.close()
    assert db.closed
    db.close()  # twice is fine
    calls = [
        lambda: db.get(b"a"),
        lambda: db.put(b"a", b"b"),
        lambda: db.delete(b"a"),
        lambda: b"a" in db,
        lambda: db.multi_get([b"a"]),
        lambda: db.write_batch(),
        lambda: db.iterator(),
        lambda: iter(db),
        lambda: db.raw_iterator(),
        lambda: db.snapshot(),
        lambda: db.get_property(b"sift.stats"),
        lambda: db.compact_range(),
        lambda: db.flush(),
        lambda: db.read_stats(),
        lambda: db.checkpoint("/nonexistent/x"),
        lambda: db.ingest(["/nonexistent/x"]),
        lambda: db.prefixed_db(b"p"),
    ]
    for call in calls:
        with pytest.raises(RuntimeError):
            call()


def test_context_manager_closes(db_path):
    with sift.DB(db_path, create_if_missing=True) as db:
        assert not db.closed
    assert db.closed
    # The LOCK was released: the database opens again.
    sift.DB(db_path).close()


def test_destroy_db(db_path):
    with sift.DB(db_path, create_if_missing=True) as db:
        db.put(b"a", b"1")
        with pytest.raises(sift.IOError):
            sift.destroy_db(db_path)  # open
    sift.destroy_db(db_path)
    assert not os.path.exists(db_path)
    sift.destroy_db(db_path)  # missing: not an error
    with pytest.raises(sift.Error):
        sift.DB(db_path)


def test_gil_released_during_compaction(db_path):
    """Another Python thread keeps running while the engine compacts."""
    with sift.DB(db_path, create_if_missing=True, compression=None) as db:
        fill(db, 60000, value=b"z" * 100)
        db.flush()
        fill(db, 60000, value=b"q" * 100)
        db.flush()
        ticks = [0]
        stop = threading.Event()

        def spin():
            while not stop.is_set():
                ticks[0] += 1

        t = threading.Thread(target=spin)
        t.start()
        try:
            time.sleep(0.05)
            t0 = time.perf_counter()
            before = ticks[0]
            db.compact_range()
            during = ticks[0] - before
            elapsed = time.perf_counter() - t0
        finally:
            stop.set()
            t.join()
        assert elapsed > 0.01, "compaction too quick to tell"
        assert during > 1000


def test_threads_read_and_write(db):
    fill(db, 2000)
    errors = []

    def reader(seed):
        try:
            for i in range(3000):
                k = b"k%05d" % ((i * 7 + seed) % 2000)
                assert db.get(k) == b"v" + k
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    def writer():
        for i in range(3000):
            db.put(b"w%05d" % i, b"x")

    threads = [threading.Thread(target=reader, args=(s,)) for s in range(3)]
    threads.append(threading.Thread(target=writer))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert db.get(b"w02999") == b"x"


def test_point_reads_from_threads_beside_a_thread_busy_in_python(db):
    """Gets, multi_gets, `in` and snapshot gets from four threads, while a
    fifth runs pure Python (holding the GIL for whole switch intervals, so
    the readers' wait for the GIL outlasts its polling and blocks): every
    answer right, every thread done."""
    fill(db, 2000)
    snap = db.snapshot()
    db.put(b"k00000", b"changed")
    errors, done = [], threading.Event()

    def reader(seed):
        try:
            for i in range(2000):
                n = (i * 7 + seed) % 2000
                k = b"k%05d" % n
                want = b"changed" if n == 0 else b"v" + k
                assert db.get(k) == want
                assert (k in db) and (b"x" + k not in db)
                assert snap.get(k) == b"v" + k
                if i % 50 == 0:
                    assert db.multi_get([k, b"absent"]) == [want, None]
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    def busy():
        x = 0
        while not done.is_set():
            for i in range(10000):
                x += i
        return x

    spinner = threading.Thread(target=busy)
    spinner.start()
    threads = [threading.Thread(target=reader, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 60
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))
    done.set()
    spinner.join(10)
    snap.close()
    assert not any(t.is_alive() for t in threads), "a reader never finished"
    assert not errors, errors


def test_close_while_other_threads_work(db_path):
    """Closing a DB that other threads are reading, iterating and writing
    makes their next call raise RuntimeError; nothing crashes."""
    db = sift.DB(db_path, create_if_missing=True)
    fill(db, 5000)
    outcomes = []
    started = threading.Barrier(4)

    def getter():
        started.wait()
        try:
            while True:
                db.get(b"k00001")
        except RuntimeError:
            outcomes.append("get")

    def scanner():
        started.wait()
        try:
            while True:
                for _ in db.iterator():
                    pass
        except RuntimeError:
            outcomes.append("scan")

    def putter():
        started.wait()
        try:
            i = 0
            while True:
                db.put(b"p%d" % i, b"v")
                i += 1
        except RuntimeError:
            outcomes.append("put")

    threads = [threading.Thread(target=f) for f in (getter, scanner, putter)]
    for t in threads:
        t.start()
    started.wait()
    time.sleep(0.2)
    db.close()
    for t in threads:
        t.join(10)
    assert sorted(outcomes) == ["get", "put", "scan"]


def test_approximate_sizes(db):
    for i in range(20000):
        db.put(b"k%05d" % i, os.urandom(100))
    assert db.approximate_size(b"k", b"l") == 0  # memtable only: not counted
    db.flush()
    whole = db.approximate_size(b"k", b"l")
    assert whole > 20000 * 100 * 0.8
    half = db.approximate_size(b"k00000", b"k10000")
    assert 0.3 * whole < half < 0.7 * whole
    sizes = db.approximate_sizes((b"k00000", b"k10000"), [b"k10000", b"k20000"],
                                 (b"z", b"a"))
    assert len(sizes) == 3 and sizes[2] == 0
    assert abs(sizes[0] + sizes[1] - whole) < 0.1 * whole
    assert db.approximate_sizes() == []
    with pytest.raises(TypeError):
        db.approximate_size("a", b"b")
    with pytest.raises(TypeError):
        db.approximate_sizes((b"a",))
    with pytest.raises(TypeError):
        db.approximate_sizes(b"ab")
    db.close()
    with pytest.raises(RuntimeError):
        db.approximate_size(b"a", b"b")


def test_repair_db(db_path):
    with sift.DB(db_path, create_if_missing=True, write_buffer_size=64 << 10) as db:
        for i in range(6000):
            db.put(b"k%05d" % i, b"v%05d" % i * 4)
        db.delete(b"k00007")
        db.put(b"tail", b"in the log only")
    for name in os.listdir(db_path):
        if name.startswith("MANIFEST") or name == "CURRENT":
            os.remove(os.path.join(db_path, name))
    with pytest.raises(sift.Error):
        sift.DB(db_path)  # no MANIFEST: not openable
    sift.repair_db(
        db_path,
        paranoid_checks=False,
        bloom_filter_bits=10,
        prefix_extractor=sift.fixed_prefix(2),
        range_filter_bits_per_key=16,
    )
    with sift.DB(db_path) as db:
        assert db.get(b"k00042") == b"v00042" * 4
        assert db.get(b"k00007") is None
        assert db.get(b"tail") == b"in the log only"
        assert sum(1 for _ in db) == 6000
        with pytest.raises(sift.IOError):
            sift.repair_db(db_path)  # open: the LOCK is held
    with pytest.raises(sift.IOError):
        sift.repair_db(db_path + "-missing")
    with pytest.raises(TypeError):
        sift.repair_db(db_path, create_if_missing=True)  # not a repair keyword
    with pytest.raises(TypeError):
        sift.repair_db(db_path, no_such_option=1)
    with pytest.raises(ValueError):
        sift.repair_db(db_path, compression="zlib")
