"""sift.dask on a LocalCluster of two worker processes: to_sift and read_sift.

One cluster serves the whole module (starting one costs seconds). The
scheduler is told to give up on a task whose worker died
(allowed-failures = 0), so that a killed worker fails the load at once
instead of the task being retried elsewhere.
"""
import glob
import hashlib
import os
import signal
import threading
import time

import pytest

np = pytest.importorskip("numpy")
pd = pytest.importorskip("pandas")
dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")
db_ = pytest.importorskip("dask.bag")
distributed = pytest.importorskip("distributed")

import sift  # noqa: E402
import sift.dask as sd  # noqa: E402


@pytest.fixture(scope="module")
def client():
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                           dashboard_address=None, silence_logs=40)
        c = distributed.Client(cluster)
        try:
            yield c
        finally:
            c.close()
            cluster.close()


def frame(keys, values=None, npartitions=4):
    keys = list(keys)
    if values is None:
        values = [b"v%07d" % i for i in range(len(keys))]
    df = pd.DataFrame({"key": np.array(keys, dtype=object),
                       "value": np.array(list(values), dtype=object)})
    return df, dd.from_pandas(df, npartitions=npartitions, sort=False)


def expected(df):
    """The database a load of df should make: last row of a key wins."""
    d = df.drop_duplicates("key", keep="last").sort_values("key", kind="stable")
    return list(zip(d["key"], d["value"]))


def digest(rows):
    h = hashlib.sha256()
    for k, v in rows:
        h.update(len(k).to_bytes(4, "little") + k + len(v).to_bytes(4, "little") + v)
    return h.hexdigest()


def scan_layout(path):
    layout = sd.read_layout(path)
    rows = []
    for d in layout["shards"]:
        with sift.DB(d) as db:
            rows.extend(db)
    return rows


def shard_entries(path):
    out = []
    for d in sd.read_layout(path)["shards"]:
        with sift.DB(d) as db:
            out.append(sum(1 for _ in db))
    return out


def leftover_tables(path):
    return [p for p in glob.glob(os.path.join(path, "**", "*.sst"), recursive=True)
            if "/.sift-load" in p or ".sift-load/" in p]


def test_round_trip_uniform_keys_one_database(client, tmp_path):
    rng = np.random.default_rng(1)
    keys = [bytes(rng.integers(0, 256, 16, dtype=np.uint8)) for _ in range(20000)]
    df, ddf = frame(keys, npartitions=5)
    target = str(tmp_path / "db")
    report = sd.to_sift(ddf, target, partition_bytes=100_000, separate_phases=True)
    assert set(report["seconds"]) >= {"sample", "shuffle", "write", "write_tasks", "ingest"}
    want = expected(df)
    got = scan_layout(target)
    assert digest(got) == digest(want)
    assert report["entries"] == len(want) and report["rows"] == len(df)
    assert len(report["tables"]) > 1  # partitioned by bytes
    assert report["checksum"] == sift.entries_checksum([k for k, _ in want], [v for _, v in want])
    assert not report["sharded"] and os.path.exists(os.path.join(target, "CURRENT"))
    # Nothing of the load is left next to the database.
    assert sorted(os.listdir(str(tmp_path))) == ["db"]
    # read_sift gives the same rows back, in key order across partitions.
    out = sd.read_sift(target, npartitions=4)
    assert out.npartitions == 4
    parts = [p.compute() for p in out.to_delayed()]
    assert all(len(p) > 0 for p in parts)
    for a, b in zip(parts, parts[1:]):
        assert a["key"].iloc[-1] < b["key"].iloc[0]
    whole = pd.concat(parts)
    assert digest(zip(whole["key"], whole["value"])) == digest(want)
    # Balanced by bytes: no partition above twice the mean.
    sizes = [len(p) for p in parts]
    assert max(sizes) <= 2 * (sum(sizes) / len(sizes)), sizes


def test_bag_of_pairs_and_bounds_and_columns(client, tmp_path):
    pairs = [(b"b%05d" % i, b"x" * (i % 7)) for i in range(3000)]
    bag = db_.from_sequence(pairs, npartitions=3)
    target = str(tmp_path / "db")
    sd.to_sift(bag, target)
    out = sd.read_sift(target, start=b"b00100", stop=b"b02000", columns=("key",)).compute()
    assert list(out.columns) == ["key"]
    assert list(out["key"]) == [k for k, _ in pairs if b"b00100" <= k < b"b02000"]
    vals = sd.read_sift(target, start=b"b02990", columns=["value"]).compute()
    assert list(vals["value"]) == [v for k, v in pairs if k >= b"b02990"]
    assert len(sd.read_sift(target, start=b"c").compute()) == 0


def test_zipf_skewed_keys_with_duplicates_into_shards(client, tmp_path):
    rng = np.random.default_rng(2)
    ranks = rng.zipf(1.2, 40000) % 1_000_000
    keys = [b"user%012d" % r for r in ranks]  # hot keys repeat, cluster at the start
    df, ddf = frame(keys, npartitions=6)
    target = str(tmp_path / "layout")
    report = sd.to_sift(ddf, target, shards=4)
    want = expected(df)
    assert digest(scan_layout(target)) == digest(want)
    assert report["duplicates"] == len(df) - len(want)
    entries = shard_entries(target)
    assert sum(entries) == len(want)
    # Entries are all one size here, so entry counts measure bytes.
    assert max(entries) / (sum(entries) / 4) <= 1.25, entries
    layout = sd.read_layout(target)
    assert layout["sharded"] and layout["splits"] == report["splits"] and len(layout["shards"]) == 4
    got = sd.read_sift(target).compute()
    assert digest(zip(got["key"], got["value"])) == digest(want)


def test_uniform_keys_shard_balance(client, tmp_path):
    rng = np.random.default_rng(3)
    keys = [bytes(rng.integers(0, 256, 16, dtype=np.uint8)) for _ in range(30000)]
    df, ddf = frame(keys, npartitions=4)
    # A sample smaller than the data: the estimate, not an exact count.
    sd.to_sift(ddf, str(tmp_path / "l"), shards=8, sample_size=4096)
    entries = shard_entries(str(tmp_path / "l"))
    assert sum(entries) == len(set(keys))
    assert max(entries) / (sum(entries) / 8) <= 1.25, entries


def test_empty_partitions_and_empty_input(client, tmp_path):
    keys = [b"a%04d" % i for i in range(1000)]
    df, ddf = frame(keys, npartitions=8)
    # Partitions 1, 2 and 5 (and most of the shuffle's outputs) are empty.
    sparse = ddf.map_partitions(lambda p, partition_info=None: p.iloc[0:0]
                                if partition_info["number"] in (1, 2, 5) else p,
                                meta=ddf._meta)
    kept = pd.concat([p for i, p in enumerate(np.array_split(df, 8)) if i not in (1, 2, 5)])
    target = str(tmp_path / "l")
    report = sd.to_sift(sparse, target, shards=[b"a0500", b"b"], partitions_per_shard=3)
    assert digest(scan_layout(target)) == digest(expected(kept))
    assert shard_entries(target)[2] == 0  # nothing at or after b"b"
    assert len(report["tables"]) < 9
    empty = ddf.map_partitions(lambda p: p.iloc[0:0], meta=ddf._meta)
    r = sd.to_sift(empty, str(tmp_path / "e"))
    assert r["entries"] == 0 and r["tables"] == []
    with sift.DB(str(tmp_path / "e")) as d:
        assert list(d) == []
    assert len(sd.read_sift(str(tmp_path / "e")).compute()) == 0


def test_duplicates_last_row_in_input_order_wins(client, tmp_path):
    # Every key appears in several input partitions; the shuffle mixes the
    # rows, joining the pieces by input partition puts them back in order.
    n = 4000
    keys = [b"k%03d" % (i % 300) for i in range(n)]
    values = [b"row%05d" % i for i in range(n)]
    df, ddf = frame(keys, values, npartitions=7)
    target = str(tmp_path / "db")
    sd.to_sift(ddf, target, partitions_per_shard=3, shards=1)
    got = dict(scan_layout(target))
    for k in set(keys):
        last = max(i for i in range(n) if keys[i] == k)
        assert got[k] == b"row%05d" % last
    # Loading again over it: the new rows shadow the old (one ingest, newer).
    df2, ddf2 = frame(keys[:50], [b"new"] * 50, npartitions=2)
    sd.to_sift(ddf2, target)
    with sift.DB(target) as d:
        assert d.get(keys[0]) == b"new" and d.get(b"k299") == got[b"k299"]


def test_shard_boundary_on_a_key(client, tmp_path):
    keys = [b"m%03d" % i for i in range(200)]
    df, ddf = frame(keys, npartitions=3)
    target = str(tmp_path / "l")
    sd.to_sift(ddf, target, shards=[b"m100", b"m150"])
    layout = sd.read_layout(target)
    with sift.DB(layout["shards"][0]) as d:
        assert [k for k, _ in d] == keys[:100]  # below the split key
    with sift.DB(layout["shards"][1]) as d:
        assert [k for k, _ in d] == keys[100:150]  # the split key opens shard 1
    with sift.DB(layout["shards"][2]) as d:
        assert [k for k, _ in d][0] == b"m150"
    # The layout keeps its split keys; other ones are refused.
    with pytest.raises(ValueError):
        sd.to_sift(ddf, target, shards=[b"m100"])
    with pytest.raises(ValueError):
        sd.to_sift(ddf, target, shards=2)
    sd.to_sift(frame([b"m150"], [b"again"], 1)[1], target)  # into the existing layout
    with sift.DB(layout["shards"][2]) as d:
        assert d.get(b"m150") == b"again"
    parts = sd.read_sift(target, start=b"m090", stop=b"m160").compute()
    assert list(parts["key"]) == keys[90:160]


def test_non_bytes_keys_raise_type_error(client, tmp_path):
    target = str(tmp_path / "l")
    df = pd.DataFrame({"key": ["a", "b", "c"], "value": [b"1", b"2", b"3"]})
    with pytest.raises(TypeError, match=r"keys \(column 'key'\) must be bytes, found str"):
        sd.to_sift(dd.from_pandas(df, npartitions=2), target, shards=2)
    ints = pd.DataFrame({"key": [1, 2, 3], "value": [b"1", b"2", b"3"]})
    with pytest.raises(TypeError, match="dtype int64"):
        sd.to_sift(dd.from_pandas(ints, npartitions=1), target)
    mixed = pd.DataFrame({"key": [b"a", "b", b"c"], "value": [b"1", b"2", b"3"]})
    with pytest.raises(TypeError, match="found str"):
        sd.to_sift(dd.from_pandas(mixed, npartitions=1), target, shards=[b"b"],
                   partitions_per_shard=1)  # no sample: met while building
    with pytest.raises(TypeError):
        sd.to_sift(db_.from_sequence([(1, b"x")]), target)
    str_values = pd.DataFrame({"key": [b"a", b"b"], "value": [b"1", "2"]})
    with pytest.raises(TypeError, match=r"values \(column 'value'\) must be bytes, found str"):
        sd.to_sift(dd.from_pandas(str_values, npartitions=1), target)
    assert not os.path.exists(os.path.join(target, "CURRENT"))
    assert not os.path.exists(os.path.join(target, sd.MANIFEST_NAME))
    assert not leftover_tables(str(tmp_path))
    with pytest.raises(TypeError):
        sd.read_sift(target, start="a")


def test_worker_killed_during_build_then_rerun(client, tmp_path):
    target = str(tmp_path / "l")
    base_df, base = frame([b"k%06d" % i for i in range(0, 60000, 7)], npartitions=2)
    sd.to_sift(base, target, shards=[b"k030000"])
    before = scan_layout(target)
    rng = np.random.default_rng(4)
    keys = [b"k%06d" % x for x in rng.integers(0, 60000, 30000)]
    df, ddf = frame(keys, [b"%07d" % i + b"v" * 600 for i in range(len(keys))], npartitions=6)
    stage = os.path.join(target, ".sift-load")
    pids = list(client.run(os.getpid).values())
    killed = []

    def killer():
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if glob.glob(os.path.join(stage, "run-*", "tables", "*.sst")):
                os.kill(pids[0], signal.SIGKILL)
                killed.append(pids[0])
                return
            time.sleep(0.001)

    t = threading.Thread(target=killer)
    t.start()
    try:
        with pytest.raises(Exception) as failure:
            sd.to_sift(ddf, target, partitions_per_shard=40)
    finally:
        t.join()
    assert killed, "no table was staged"
    assert "KilledWorker" in type(failure.value).__name__ or "died" in str(failure.value)
    # Every database as it was, and no table left behind.
    assert scan_layout(target) == before
    assert not leftover_tables(target)
    client.wait_for_workers(2, timeout=60)
    report = sd.to_sift(ddf, target, partitions_per_shard=40)
    merged = dict(before)
    merged.update(expected(df))
    assert digest(scan_layout(target)) == digest(sorted(merged.items()))
    assert report["rows"] == len(df)
    assert not leftover_tables(target) and not os.path.exists(stage)


def test_failure_during_ingest_is_resumed_without_ingesting_twice(client, tmp_path, monkeypatch):
    keys = [b"r%05d" % i for i in range(4000)]
    df, ddf = frame(keys, npartitions=4)
    target = str(tmp_path / "l")
    splits = [b"r01000", b"r02000", b"r03000"]
    real_write = sd._write_durably

    def crash_after_ingest(path, data):
        # Shard 1's ingest call returned; the process dies before its marker.
        if path.endswith("ingested-00001"):
            raise KeyboardInterrupt("simulated crash")
        real_write(path, data)

    monkeypatch.setattr(sd, "_write_durably", crash_after_ingest)
    with pytest.raises(KeyboardInterrupt):
        sd.to_sift(ddf, target, shards=splits, partitions_per_shard=2)
    monkeypatch.setattr(sd, "_write_durably", real_write)
    for shard, count in ((0, 1000), (1, 1000)):
        with sift.DB(os.path.join(target, "shard-%05d" % shard)) as d:
            assert sum(1 for _ in d) == count
    assert not os.path.exists(os.path.join(target, "shard-00002"))
    assert not os.path.exists(os.path.join(target, sd.MANIFEST_NAME))
    # Another load is refused while this one is unfinished.
    with pytest.raises(RuntimeError, match="rerun it"):
        sd.to_sift(frame([b"r00001"], npartitions=1)[1], target, shards=splits)

    def tables(shard):
        with sift.DB(os.path.join(target, "shard-%05d" % shard)) as d:
            return d.get_property("sift.sstables").count(b"\n ")

    before = [tables(0), tables(1)]
    report = sd.to_sift(ddf, target, shards=splits, partitions_per_shard=2)  # the rerun
    assert [tables(0), tables(1)] == before  # shards 0 and 1 not ingested again
    assert digest(scan_layout(target)) == digest(expected(df))
    assert report["entries"] == 4000 and sd.read_layout(target)["splits"] == splits
    assert not os.path.exists(os.path.join(target, ".sift-load"))


WRITER_KEYS = 2000


class _ShrinkingSizes:
    """A database whose sizes drop to a quarter after the first call, as a
    compaction that drops three of four versions of every key would."""

    def __init__(self, db):
        self.db = db
        self.calls = 0

    def _scale(self, sizes):
        self.calls += 1
        return sizes if self.calls == 1 else [s // 4 for s in sizes]

    def approximate_size(self, start, stop):
        return self._scale([self.db.approximate_size(start, stop)])[0]

    def approximate_sizes(self, *ranges):
        return self._scale(self.db.approximate_sizes(*ranges))


def test_size_splits_while_the_tree_compacts(tmp_path):
    """read_sift's split keys stay even when a compaction shrinks the sizes
    during the bisection (a flushed checkpoint may compact as it is split):
    each step compares against the total of the same call."""
    with sift.DB(str(tmp_path / "db"), create_if_missing=True) as d:
        for i in range(8000):
            d.put(b"w%05d" % i, b"v" * 60)
        d.flush()
        still = sd._size_splits(d, b"w00000", b"w07999", 4)
        cuts = sd._size_splits(_ShrinkingSizes(d), b"w00000", b"w07999", 4)
        assert len(still) == 3 and len(cuts) == 3, (still, cuts)
        for cut, expected, share in zip(cuts, still, (2000, 4000, 6000)):
            # "w" and 5 digits, then zero bytes: within a few keys of the
            # cut on a tree that stays still, and of an even share (data
            # blocks of about 60 keys; the table's index and filter not
            # counted in the total).
            assert abs(int(cut[1:6]) - int(expected[1:6])) <= 50, (still, cuts)
            assert abs(int(cut[1:6]) - share) <= 150, (still, cuts)


def test_read_sift_while_another_thread_writes(client, tmp_path):
    """A database open in this process while a thread rewrites every key in
    atomic batches: every partition of a read sees one batch's state, and all
    partitions the same one (one checkpoint)."""
    path = str(tmp_path / "db")
    d = sift.DB(path, create_if_missing=True, write_buffer_size=64 << 10)
    rounds = [0]
    stop = threading.Event()

    def write_round(r):
        with d.write_batch() as b:
            for i in range(WRITER_KEYS):
                b.put(b"w%05d" % i, b"round%06d" % r + b"." * 50)

    write_round(0)
    d.flush()

    def writer():
        while not stop.is_set():
            rounds[0] += 1
            write_round(rounds[0])

    t = threading.Thread(target=writer)
    t.start()
    try:
        seen = set()
        for _ in range(3):
            ddf = sd.read_sift(d, npartitions=4)
            assert ddf.npartitions == 4
            parts = [p.compute() for p in ddf.to_delayed()]
            states = set()
            for p in parts:
                values = set(v[:11] for v in p["value"])
                assert len(values) == 1, values  # one state per partition
                states |= values
            assert len(states) == 1  # and one for the whole read
            assert sum(len(p) for p in parts) == WRITER_KEYS
            seen |= states
            # Computing it again reads the same state, whatever was written since.
            again = ddf.compute()
            assert set(v[:11] for v in again["value"]) == states
    finally:
        stop.set()
        t.join()
        d.close()
    assert rounds[0] > 1
