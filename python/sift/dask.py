"""Bulk loads into sift from Dask, and parallel range scans out of it.

``to_sift(data, path, ...)`` writes a Dask DataFrame (or a Bag of ``(key, value)``
pairs) into one sift database or into N shard databases under ``path``: the rows
are range-partitioned with Dask's shuffle, each partition becomes one sorted
table file on a worker (``sift.write_table``, one call per partition) and the
client ingests each shard's tables with one atomic ``DB.ingest`` call.

``read_sift(path, ...)`` returns a Dask DataFrame whose partitions are bounded
range scans of a checkpoint, run on the workers.

Requirements: the Debian packages python3-dask, python3-distributed and
python3-pandas (with numpy). ``path`` must be on a file system that the client
and every worker see under the same name (one machine, or a shared mount): the
workers write and read the table files there. See doc/python.md ("sift.dask")
and doc/scale-out.md for the contracts in full.
"""

import bisect
import contextlib
import errno
import fcntl
import json
import math
import os
import re
import shutil
import time
import uuid
import weakref

import dask
import dask.bag as db_
import dask.dataframe as dd
import numpy as np
import pandas as pd
from dask.dataframe.shuffle import rearrange_by_column, rearrange_by_column_tasks

import sift
from sift import _sift

__all__ = ["to_sift", "read_sift", "read_layout", "MANIFEST_NAME"]

#: The shards manifest of a sharded layout: a JSON file in the layout's
#: directory naming the split keys and the shard directories.
MANIFEST_NAME = "SHARDS"
_MANIFEST_FORMAT = "sift-shards"
_MANIFEST_VERSION = 1

# The table layout keywords of sift.write_table, taken from `options`.
_TABLE_KEYWORDS = ("block_size", "block_restart_interval", "compression",
                   "bloom_filter_bits", "filter_kind")

# The column that carries each row's output partition through the shuffle.
# Dask's task shuffle uses a column of this exact name as partition numbers
# as they are (any other column would be hashed).
_PART = "_partitions"


# ---------------------------------------------------------------- helpers

def _fsync_dir(path):
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_durably(path, data):
    """Replace `path` with `data` atomically: a temporary file, fsync,
    rename, fsync of the directory. A crash leaves the old or the new file."""
    tmp = f"{path}.tmp-{uuid.uuid4().hex}"
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    _fsync_dir(os.path.dirname(os.path.abspath(path)))


def _hex(key):
    return None if key is None else key.hex()


def _unhex(text):
    return None if text is None else bytes.fromhex(text)


def _check_bytes_array(keys, what):
    """TypeError unless every element of the object array `keys` is bytes."""
    if len(keys) == 0:
        return
    kind = pd.api.types.infer_dtype(keys, skipna=False)
    if kind != "bytes":
        bad = next(k for k in keys if not isinstance(k, bytes))
        raise TypeError(
            f"sift.dask: {what} must be bytes, found {type(bad).__name__} "
            f"({bad!r:.60}); encode keys first (e.g. str.encode, "
            f"int.to_bytes(8, 'big') to keep numeric order)")


@contextlib.contextmanager
def _exclusive_lock(lock_path):
    """Holds an exclusive flock on `lock_path` (created if missing).

    Refuses at once (RuntimeError) if another process holds it: two loads into
    one target at a time would ingest each other's half-built runs. The lock is
    taken on the file that is at `lock_path` when taken (a file removed and
    re-created meanwhile is tried again)."""
    while True:
        # The directory goes when a load finishes with nothing left in it.
        os.makedirs(os.path.dirname(lock_path), exist_ok=True)
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            os.close(fd)
            if e.errno in (errno.EAGAIN, errno.EACCES):
                raise RuntimeError(
                    f"sift.dask: another load into the same target holds "
                    f"{lock_path}") from None
            raise
        try:
            same = os.fstat(fd).st_ino == os.stat(lock_path).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    try:
        yield
    finally:
        os.close(fd)


def _persist_and_wait(collection):
    """The collection computed and held where it is (on the workers, with a
    distributed client), returning once every partition is there."""
    collection = collection.persist()
    try:
        from distributed import default_client, wait
        default_client()
    except (ImportError, ValueError):
        return collection  # a local scheduler: persist has computed it
    wait(collection)
    return collection


def _remove_run(run_dir):
    """Removes a run that ingested nothing. A build task still running on a
    worker when the load failed may create its table meanwhile (before it sees
    its directory gone), so the removal is tried again for a few seconds; a
    run left over is removed by the next load into the target."""
    for _ in range(50):
        shutil.rmtree(run_dir, ignore_errors=True)
        if not os.path.exists(run_dir):
            return
        time.sleep(0.1)


# ------------------------------------------------------------- the layout

def read_layout(path):
    """The layout at `path`: a dict with 'splits' (the N-1 split keys, bytes,
    increasing), 'shards' (N directory paths; shard i holds the keys k with
    splits[i-1] <= k < splits[i]) and 'sharded' (False for one database at
    `path` itself). Raises sift.Error if the manifest is damaged."""
    manifest = os.path.join(path, MANIFEST_NAME)
    try:
        with open(manifest, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        return {"sharded": False, "splits": [], "shards": [path]}
    try:
        m = json.loads(raw)
        if m.get("format") != _MANIFEST_FORMAT or m.get("version") != _MANIFEST_VERSION:
            raise ValueError("unknown format or version")
        splits = [_unhex(s) for s in m["splits"]]
        shards = [os.path.join(path, d) for d in m["shards"]]
        if len(shards) != len(splits) + 1 or splits != sorted(set(splits)):
            raise ValueError("split keys do not match the shards")
    except (ValueError, KeyError, TypeError) as e:
        raise sift.Error(f"sift.dask: damaged shards manifest {manifest}: {e}") from None
    return {"sharded": True, "splits": splits, "shards": shards}


def _write_manifest(path, splits, shard_dirs):
    body = {
        "format": _MANIFEST_FORMAT,
        "version": _MANIFEST_VERSION,
        "splits": [_hex(s) for s in splits],
        "shards": [os.path.basename(d) for d in shard_dirs],
    }
    _write_durably(os.path.join(path, MANIFEST_NAME),
                   json.dumps(body, indent=1).encode() + b"\n")


# ------------------------------------------------------------- sampling

def _bytes_values(values, column):
    """`values` as an object array of bytes: bytearray and memoryview values
    are copied to bytes; anything else is a TypeError naming the column."""
    if len(values) == 0 or pd.api.types.infer_dtype(values, skipna=False) == "bytes":
        return values
    bad = next((v for v in values if not isinstance(v, (bytes, bytearray, memoryview))), None)
    if bad is not None:
        raise TypeError(f"sift.dask: values (column {column!r}) must be bytes, found "
                        f"{type(bad).__name__} ({bad!r:.60})")
    converted = np.empty(len(values), dtype=object)
    converted[:] = [bytes(memoryview(v).cast("B")) for v in values]
    return converted


def _sample_partition(df, key, value, k):
    """The k distinct keys of a partition with the smallest hashes (XXH3-64),
    with the size of one of their rows (key + value bytes); one C++ call."""
    keys = df[key].to_numpy(dtype=object)
    _check_bytes_array(keys, f"keys (column {key!r})")
    values = _bytes_values(df[value].to_numpy(dtype=object), value)
    hashes, sampled, sizes = _sift.sample_keys(keys, values, k)
    out = np.empty(len(sampled), dtype=object)
    out[:] = sampled
    return pd.DataFrame({"h": np.frombuffer(hashes, dtype=np.uint64), "key": out,
                         "size": np.frombuffer(sizes, dtype=np.int64)})


def _merge_samples(*samples, k):
    if not samples:
        return _sample_partition(pd.DataFrame({"k": [], "v": []}, dtype=object), "k", "v", k)
    h = np.concatenate([s["h"].to_numpy() for s in samples])
    uniq, first = np.unique(h, return_index=True)  # sorted, first of each hash
    take = first[:k]
    return pd.DataFrame({
        "h": uniq[:k],
        "key": np.concatenate([s["key"].to_numpy(dtype=object) for s in samples])[take],
        "size": np.concatenate([s["size"].to_numpy() for s in samples])[take]})


def _sample(ddf, key, value, k):
    """A uniform random sample of the input's distinct keys (bottom-k by hash).

    Every distinct key is in or out of the sample as a whole, whatever the
    number of rows it has (the hash decides), so the sample describes the
    database the load makes, where duplicates are one entry. Returns the
    sample sorted by key and the estimated number of distinct keys."""
    parts = ddf.to_delayed()
    samples = [dask.delayed(_sample_partition)(p, key, value, k) for p in parts]
    while len(samples) > 1:
        samples = [dask.delayed(_merge_samples)(*samples[i:i + 8], k=k)
                   for i in range(0, len(samples), 8)]
    sample = samples[0].compute() if samples else _merge_samples(k=k)
    if len(sample) < k:
        rate = 1.0  # every distinct key was seen
    else:
        rate = (int(sample["h"].iloc[-1]) + 1) / 2.0**64
    sample = sample.sort_values("key", kind="stable").reset_index(drop=True)
    return sample, rate


def _quantile_splits(keys, sizes, parts):
    """parts-1 keys of the sorted sample `keys` that cut its bytes (`sizes`)
    into `parts` even runs; fewer if the sample cannot tell them apart."""
    if parts <= 1 or len(keys) == 0:
        return []
    cum = np.cumsum(sizes)
    total = cum[-1]
    out = []
    for j in range(1, parts):
        i = int(np.searchsorted(cum, total * j / parts, side="left"))
        # The split key starts the next range: take the first key past the
        # j-th fraction of the bytes.
        i = min(i + 1, len(keys) - 1)
        if not out or keys[i] > out[-1]:
            out.append(keys[i])
    if out and out[0] == keys[0]:
        out = out[1:]
    return out


# ---------------------------------------------------------------- workers

def _split_partition(df, partition_info=None, *, key, value, bounds, nparts):
    """Cuts an input partition into its pieces for each output partition.

    One row per non-empty piece: its output partition (_PART), the input
    partition it came from (src) and its entries packed without a Python
    object per entry (keys and values back to back, their lengths as bytes
    of int64), in input order. The cutting and packing is one call in C++
    (sift._sift.split_packed, GIL released), and each piece is four bytes
    objects, which the shuffle moves without pickling every key and value."""
    number = partition_info["number"] if partition_info else 0
    keys = df[key].to_numpy(dtype=object)
    _check_bytes_array(keys, f"keys (column {key!r})")
    values = _bytes_values(df[value].to_numpy(dtype=object), value)
    pieces = _sift.split_packed(keys, values, bounds)
    # As numpy arrays (views of the bytes, no copy): distributed sends numpy
    # arrays out of band, as the frames they are, where bytes objects inside
    # a column would be copied into the pickle stream and out of it again.
    return pd.DataFrame({
        _PART: np.array([p[0] for p in pieces], dtype=np.int64),
        "src": np.full(len(pieces), number, dtype=np.int64),
        **{c: pd.Series([np.frombuffer(p[i], dtype=t) for p in pieces], dtype=object)
           for i, c, t in ((1, "kbuf", np.uint8), (2, "klen", np.int64),
                           (3, "vbuf", np.uint8), (4, "vlen", np.int64))},
    })


_PIECE_META = {_PART: np.int64, "src": np.int64, "kbuf": object, "klen": object,
               "vbuf": object, "vlen": object}

_INFO_COLUMNS = {"partition": np.int64, "path": object, "smallest_key": object,
                 "largest_key": object, "num_entries": np.int64, "file_size": np.int64,
                 "checksum": np.uint64, "duplicates": np.int64, "rows": np.int64,
                 "seconds": np.float64}


def _write_partition(df, partition_info=None, *, stage_dir, table_options):
    """Writes output partition `number` as one table (none if it is empty)."""
    number = partition_info["number"] if partition_info else 0
    started = time.monotonic()
    row = {"partition": number, "path": None, "smallest_key": None, "largest_key": None,
           "num_entries": 0, "file_size": 0, "checksum": 0, "duplicates": 0, "rows": 0,
           "seconds": 0.0}
    if len(df):
        if (df[_PART].to_numpy() != number).any():
            raise RuntimeError(f"sift.dask: partition {number} received rows of another "
                               "partition from the shuffle")
        # Back into input order: the pieces by input partition (each is in
        # input order already); the table writer keeps the last entry of a key.
        pieces = df.sort_values("src", kind="stable")
        klen = np.concatenate(pieces["klen"].tolist())
        vlen = np.concatenate(pieces["vlen"].tolist())
        row["rows"] = len(klen)
        path = os.path.join(stage_dir, f"part-{number:06d}.sst")
        # The pieces' buffers as they are (a list): no joined copy.
        info = sift.write_table_packed(path, pieces["kbuf"].tolist(), klen,
                                       pieces["vbuf"].tolist(), vlen, **table_options)
        if info is not None:
            row.update({k: info[k] for k in ("path", "smallest_key", "largest_key",
                                             "num_entries", "file_size", "checksum",
                                             "duplicates")})
    row["seconds"] = time.monotonic() - started
    out = pd.DataFrame([row])
    return out.astype(_INFO_COLUMNS)


# ------------------------------------------------------------------ to_sift

def _as_dataframe(data, key, value):
    if isinstance(data, db_.Bag):
        return data.to_dataframe(meta={"key": object, "value": object}), "key", "value"
    if isinstance(data, pd.DataFrame):
        data = dd.from_pandas(data, npartitions=max(1, len(data) // 1_000_000), sort=False)
    if not isinstance(data, dd.DataFrame):
        raise TypeError("sift.dask.to_sift: data must be a dask DataFrame, a dask Bag of "
                        f"(key, value) pairs or a pandas DataFrame, not {type(data).__name__}")
    for name in (key, value):
        if name not in data.columns:
            raise KeyError(f"sift.dask.to_sift: no column {name!r} (columns: "
                           f"{list(data.columns)})")
    for name, what in ((key, "keys"), (value, "values")):
        dtype = data[name].dtype
        if dtype != object:
            raise TypeError(f"sift.dask.to_sift: {what} must be bytes, column {name!r} "
                            f"has dtype {dtype}")
    return data[[key, value]], key, value


def _plan(ddf, key, value, layout, shards, sample_size, partition_bytes, partitions_per_shard):
    """Split keys of the shards and of the output partitions (tables)."""
    if layout["sharded"] or isinstance(shards, (list, tuple)):
        splits = layout["splits"] if layout["sharded"] else list(shards)
    else:
        splits = None  # to be found from the sample
    nshards = len(splits) + 1 if splits is not None else shards
    need_sample = splits is None or partitions_per_shard != 1
    sample, rate = None, 1.0
    if need_sample:
        sample, rate = _sample(ddf, key, value, sample_size)
    if splits is None:
        splits = _quantile_splits(sample["key"].to_numpy(), sample["size"].to_numpy(), nshards)
        if len(splits) < nshards - 1:
            raise ValueError(
                f"sift.dask.to_sift: the input has too few distinct keys ({len(sample)}) "
                f"for {nshards} shards; give fewer shards or the split keys")
    bounds, part_shard = [], []
    if sample is not None:
        # The sample is sorted by key: a shard's sampled keys are one slice.
        skeys = sample["key"].tolist()
        ssizes = sample["size"].to_numpy()
    for s in range(len(splits) + 1):
        lo = splits[s - 1] if s else None
        hi = splits[s] if s < len(splits) else None
        if sample is not None:
            a = 0 if lo is None else bisect.bisect_left(skeys, lo)
            b = len(skeys) if hi is None else bisect.bisect_left(skeys, hi)
        if partitions_per_shard is not None:
            parts = partitions_per_shard
        else:
            est_bytes = ssizes[a:b].sum() / rate
            parts = max(1, math.ceil(est_bytes / partition_bytes))
        sub = []
        if parts > 1:
            sub = _quantile_splits(np.array(skeys[a:b], dtype=object), ssizes[a:b], parts)
            sub = [k for k in sub if (lo is None or k > lo)]
        if s:
            bounds.append(lo)
        part_shard.append(s)
        for k in sub:
            bounds.append(k)
            part_shard.append(s)
    estimated = None if sample is None else {
        "distinct_keys": len(sample) / rate,
        "bytes": float(sample["size"].sum() / rate),
        "sample_keys": len(sample),
    }
    return splits, bounds, part_shard, estimated


def _check_tables(tables, splits, part_shard):
    """Each table inside its shard's range, the tables of a shard disjoint."""
    by_shard = {}
    for t in tables:
        s = part_shard[t["partition"]]
        lo = splits[s - 1] if s else None
        hi = splits[s] if s < len(splits) else None
        if (lo is not None and t["smallest_key"] < lo) or (hi is not None and t["largest_key"] >= hi):
            raise RuntimeError(f"sift.dask: table {t['path']} ({t['smallest_key']!r} .. "
                               f"{t['largest_key']!r}) lies outside shard {s}")
        by_shard.setdefault(s, []).append(t)
    for s, ts in by_shard.items():
        ts.sort(key=lambda t: t["smallest_key"])
        for a, b in zip(ts, ts[1:]):
            if a["largest_key"] >= b["smallest_key"]:
                raise RuntimeError(f"sift.dask: tables {a['path']} and {b['path']} of shard "
                                   f"{s} overlap")
    return by_shard


def _live_table_inodes(db, db_dir):
    """Inodes of the table files the database's current version names."""
    listing = db.get_property("sift.sstables") or b""
    numbers = {int(n) for n in re.findall(rb"^ (\d+):", listing, re.M)}
    inodes = set()
    for name in os.listdir(db_dir):
        m = re.fullmatch(r"(\d+)\.sst", name)
        if m and int(m.group(1)) in numbers:
            inodes.add(os.stat(os.path.join(db_dir, name)).st_ino)
    return inodes


def _ingest_shard(shard_dir, tables, run_dir, shard, db_options, verify_checksums):
    """One IngestExternalFiles call for the shard's tables, exactly once per run.

    Markers in the run directory make a rerun skip a shard already ingested:
    'ingested-S' is written (durably) after the call returns. A crash between
    the call and that marker leaves 'ingesting-S' alone; the rerun then asks
    the database: the tables are hard-linked in (move_files), so a live table
    file with a staged table's inode means the call was applied (one call is
    all or nothing)."""
    done = os.path.join(run_dir, f"ingested-{shard:05d}")
    started = os.path.join(run_dir, f"ingesting-{shard:05d}")
    if os.path.exists(done):
        return False
    paths = [t["path"] for t in tables]
    with sift.DB(shard_dir, create_if_missing=True, **db_options) as d:
        applied = False
        if os.path.exists(started):
            staged = {os.stat(p).st_ino for p in paths}
            applied = bool(staged & _live_table_inodes(d, shard_dir))
        if not applied:
            _write_durably(started, b"")
            d.ingest(paths, move_files=True, verify_checksums=verify_checksums)
    _write_durably(done, b"")
    return True


def _work_dir(path, sharded):
    if sharded:
        return os.path.join(path, ".sift-load")
    parent, name = os.path.split(os.path.abspath(path))
    return os.path.join(parent, f".{name}.sift-load")


def to_sift(data, path, key="key", value="value", shards=None, options=None, *,
            sample_size=1 << 16, partition_bytes=64 << 20, partitions_per_shard=None,
            run_id=None, verify_checksums=True, shuffle="tasks", persist=True,
            separate_phases=False):
    """Load `data` into sift at `path`; returns a report (a dict).

    data: a dask DataFrame with bytes columns `key` and `value` (object dtype),
        a dask Bag of (key, value) pairs of bytes, or a pandas DataFrame.
        Keys must be bytes: anything else raises TypeError (from the client
        when the column's dtype is not object, else from the worker that meets
        the first non-bytes key; nothing is ingested then). Values are bytes
        or objects with the buffer protocol.
    path: one database (shards=1), or the directory of a sharded layout:
        shard databases `path`/shard-00000 ... and the manifest `path`/SHARDS
        (see read_layout). Must be visible at the same name to every worker.
    shards: None (the layout already at `path`, else 1), an int N (N shards,
        split keys planned from a sample), or a list of N-1 increasing split
        keys (shard i holds splits[i-1] <= key < splits[i]: a key equal to a
        split key belongs to the upper shard). Loading into an existing
        sharded layout keeps its split keys; N or keys that differ from it
        are a ValueError.
    options: keywords of sift.DB for the databases (compression,
        bloom_filter_bits, block_size, ...); the tables are written with the
        same layout keywords, so ingestion keeps them as they are.

    Duplicate keys: the row that comes last in the input wins, as repeated
    puts in input order would leave it. Input order is the order of the
    input's partitions, then of the rows inside each. It survives the
    shuffle because rows travel in pieces: each input partition is cut, in a
    stable order, into one piece per output partition, tagged with the input
    partition's number; each output partition joins its pieces by that
    number, so its rows are in input order when they reach the table writer.

    Planning (when split keys are not all given): one pass over the keys
    takes a bottom-k sample by hash (`sample_size` distinct keys, default
    65,536): each distinct key is in or out of it whatever its number of
    rows, so it is a uniform sample of the keys the databases will hold, and
    split keys cut its bytes (key + value of a row) into even parts. The
    share of the bytes a range gets is estimated with a standard error of
    about sqrt(f(1-f)/k) for a true share f and k sampled keys (0.13
    percentage points for 1/8 with k = 65,536, some 1% of a shard's size),
    more when entry sizes vary widely. A key holding more bytes than a shard
    cannot be split. With `persist` (the default) the input is computed once
    and held in the workers' memory from the sample to the load (distributed
    spills it to disk past its memory limits); persist=False computes it
    twice instead, for inputs larger than the cluster's memory and cheap to
    read again. Giving the split keys and `partitions_per_shard=1` skips the
    sample.

    Each shard's range is cut into output partitions of about
    `partition_bytes` (or `partitions_per_shard` of them); the rows move to
    them with Dask's task shuffle (`shuffle`) in packed pieces (keys and
    values back to back, one piece per input and output partition, sorted by
    key in C++ when the input partition is cut), and each output partition's
    pieces are merged and written as one table on a worker in one call
    (sift.write_table_packed, GIL released) into a
    staging directory next to the target, and the client checks that the
    tables lie within their shard and do not overlap, then ingests each
    shard's tables in one atomic DB.ingest (hard links, checksums verified
    unless `verify_checksums` is False).

    Failures: nothing reaches a database before every table is built and
    checked, so a failure before then (a killed worker, a bad key) leaves
    every database as it was and removes the staged tables. Within one shard
    the ingest is all or nothing; across shards it is not: a failure during
    the ingest phase can leave some shards loaded and others not. Then the
    run directory is kept, and rerunning the same call (same input, so the
    same `run_id`, which defaults to a token of the input and the arguments)
    ingests the shards not yet ingested and none twice. A lock file makes a
    second load into the same target fail at once (RuntimeError).

    Returns: {'path', 'sharded', 'splits', 'shards' (directories),
    'tables' (per table: partition, shard, path as staged, smallest_key,
    largest_key, num_entries, file_size, checksum), 'entries', 'bytes'
    (table file bytes), 'checksum' (sum of the tables' checksums modulo 2^64,
    equal to sift.entries_checksum of a full scan of the data loaded when the
    targets were empty), 'rows' (input rows), 'duplicates' (rows dropped as
    overwritten within this load), 'estimated' (the sample's estimate of
    distinct keys and bytes, or None), 'seconds' (wall time per phase:
    'sample', 'shuffle_write' and 'ingest'; with `separate_phases` the
    shuffled pieces are held on the workers until all have arrived, so that
    'shuffle' and 'write' are timed apart, at the cost of that barrier; and
    'write_tasks', the time the write tasks took, summed over tasks)}.
    """
    options = dict(options or {})
    for forbidden in ("create_if_missing", "error_if_exists"):
        options.pop(forbidden, None)
    table_options = {k: options[k] for k in _TABLE_KEYWORDS if k in options}
    ddf, key, value = _as_dataframe(data, key, value)

    path = os.fspath(path)
    layout = read_layout(path) if os.path.isdir(path) else {
        "sharded": False, "splits": [], "shards": [path]}
    if isinstance(shards, (list, tuple)):
        shards = list(shards)
        for s in shards:
            if not isinstance(s, bytes):
                raise TypeError(f"sift.dask.to_sift: split keys must be bytes, not "
                                f"{type(s).__name__}")
        if any(a >= b for a, b in zip(shards, shards[1:])):
            raise ValueError("sift.dask.to_sift: split keys must strictly increase")
        if layout["sharded"] and shards != layout["splits"]:
            raise ValueError(f"sift.dask.to_sift: {path} is a layout with other split keys")
        nshards = len(shards) + 1
    elif shards is None:
        nshards = len(layout["shards"])
    elif isinstance(shards, int) and not isinstance(shards, bool) and shards >= 1:
        nshards = shards
        if layout["sharded"] and nshards != len(layout["shards"]):
            raise ValueError(f"sift.dask.to_sift: {path} is a layout of "
                             f"{len(layout['shards'])} shards, not {nshards}")
    else:
        raise ValueError(f"sift.dask.to_sift: shards must be None, a positive int or a "
                         f"list of split keys, not {shards!r}")
    sharded = layout["sharded"] or nshards > 1
    if sharded and not layout["sharded"] and os.path.exists(os.path.join(path, "CURRENT")):
        raise ValueError(f"sift.dask.to_sift: {path} is one database; it cannot become a "
                         "sharded layout")
    if partitions_per_shard is not None and partitions_per_shard < 1:
        raise ValueError("sift.dask.to_sift: partitions_per_shard must be at least 1")

    if run_id is None:
        run_id = dask.base.tokenize(ddf, key, value, shards if shards is not None else nshards,
                                    sorted(options.items()), sample_size, partition_bytes,
                                    partitions_per_shard)
    if not re.fullmatch(r"[0-9A-Za-z_.-]+", str(run_id)):
        raise ValueError("sift.dask.to_sift: run_id must be letters, digits, '_', '.', '-'")

    os.makedirs(path if sharded else os.path.dirname(os.path.abspath(path)), exist_ok=True)
    work = _work_dir(path, sharded)
    os.makedirs(work, exist_ok=True)
    seconds = {"sample": 0.0, "shuffle_write": 0.0, "ingest": 0.0, "write_tasks": 0.0}
    with _exclusive_lock(os.path.join(work, "LOCK")):
        run_dir = os.path.join(work, f"run-{run_id}")
        # Runs left by a process that died: those that ingested nothing are
        # dropped (their tables never reached a database); one that did is
        # this run resumed, or refused.
        for name in os.listdir(work):
            other = os.path.join(work, name)
            if not name.startswith("run-") or other == run_dir:
                continue
            if any(n.startswith("ingesting-") for n in os.listdir(other)):
                raise RuntimeError(
                    f"sift.dask.to_sift: an earlier load ({name[4:]}) ingested some shards "
                    f"and stopped; rerun it to complete it (same input, or "
                    f"run_id={name[4:]!r}), or remove {other} to give it up")
            _remove_run(other)
        plan_file = os.path.join(run_dir, "plan.json")
        tables_file = os.path.join(run_dir, "tables.json")
        if os.path.exists(run_dir) and not os.path.exists(tables_file):
            _remove_run(run_dir)  # died while building: build again
        os.makedirs(run_dir, exist_ok=True)
        ingest_started = os.path.exists(tables_file)
        try:
            if os.path.exists(tables_file):
                with open(plan_file, "rb") as f:
                    plan = json.load(f)
                splits = [_unhex(s) for s in plan["splits"]]
                part_shard = plan["part_shard"]
                estimated = plan["estimated"]
                with open(tables_file, "rb") as f:
                    tables = json.load(f)
                for t in tables:
                    t["smallest_key"] = _unhex(t["smallest_key"])
                    t["largest_key"] = _unhex(t["largest_key"])
                rows = sum(t["rows"] for t in tables)
            else:
                t0 = time.monotonic()
                needs_sample = not (isinstance(shards, (list, tuple)) or layout["sharded"]) \
                    or partitions_per_shard != 1
                if persist and needs_sample:
                    ddf = ddf.persist()
                splits, bounds, part_shard, estimated = _plan(
                    ddf, key, value, layout, shards if shards is not None else nshards,
                    sample_size, partition_bytes, partitions_per_shard)
                seconds["sample"] = time.monotonic() - t0
                t0 = time.monotonic()
                _write_durably(plan_file, json.dumps({
                    "splits": [_hex(s) for s in splits], "part_shard": part_shard,
                    "estimated": estimated}).encode())
                # The workers write into this directory and never create one:
                # a task still running after the run was given up fails
                # instead of leaving a table behind.
                stage_dir = os.path.join(run_dir, "tables")
                os.makedirs(stage_dir)
                nparts = len(bounds) + 1
                pieces = ddf.map_partitions(
                    _split_partition, key=key, value=value, bounds=list(bounds),
                    nparts=nparts, meta=_PIECE_META, enforce_metadata=False)
                if shuffle == "tasks":
                    # Straight to the task shuffle: rearrange_by_column
                    # would first repartition the pieces down to nparts
                    # partitions when there are fewer outputs than inputs,
                    # moving about half the data between workers once more.
                    shuffled = rearrange_by_column_tasks(pieces, _PART, npartitions=nparts,
                                                         ignore_index=True)
                else:
                    shuffled = rearrange_by_column(pieces, _PART, npartitions=nparts,
                                                   shuffle=shuffle, ignore_index=True)
                if separate_phases:
                    shuffled = _persist_and_wait(shuffled)
                    seconds["shuffle"] = time.monotonic() - t0
                infos = shuffled.map_partitions(
                    _write_partition, stage_dir=stage_dir, table_options=table_options,
                    meta=pd.DataFrame({c: pd.Series(dtype=t) for c, t in _INFO_COLUMNS.items()}),
                    enforce_metadata=False).compute()
                seconds["shuffle_write"] = time.monotonic() - t0
                if separate_phases:
                    seconds["write"] = seconds["shuffle_write"] - seconds["shuffle"]
                seconds["write_tasks"] = float(infos["seconds"].sum())
                del ddf, pieces, shuffled  # let the workers drop the persisted input
                rows = int(infos["rows"].sum())
                tables = [dict(r) for r in infos.to_dict("records") if r["path"] is not None]
                for t in tables:
                    t.pop("seconds")
                    for c in ("partition", "num_entries", "file_size", "duplicates", "rows"):
                        t[c] = int(t[c])
                    t["checksum"] = int(t["checksum"])
                    t["shard"] = part_shard[t["partition"]]
                _check_tables(tables, splits, part_shard)
                _write_durably(tables_file, json.dumps([
                    dict(t, smallest_key=_hex(t["smallest_key"]),
                         largest_key=_hex(t["largest_key"])) for t in tables]).encode())
            ingest_started = True
            t0 = time.monotonic()
            shard_dirs = ([os.path.join(path, f"shard-{s:05d}") for s in range(len(splits) + 1)]
                          if sharded else [path])
            if layout["sharded"]:
                shard_dirs = layout["shards"]
            by_shard = _check_tables(tables, splits, part_shard)
            for s, d in enumerate(shard_dirs):
                if s in by_shard:
                    _ingest_shard(d, by_shard[s], run_dir, s, options, verify_checksums)
                elif not os.path.exists(os.path.join(d, "CURRENT")):
                    sift.DB(d, create_if_missing=True, **options).close()
            if sharded:
                _write_manifest(path, splits, shard_dirs)
            seconds["ingest"] = time.monotonic() - t0
        except BaseException:
            if not ingest_started:
                _remove_run(run_dir)
            raise
        shutil.rmtree(run_dir)
        if os.listdir(work) == ["LOCK"]:
            # Nothing of any load is left. A process that opened the lock
            # file meanwhile finds it gone once it holds it, and starts over.
            os.unlink(os.path.join(work, "LOCK"))
            os.rmdir(work)
            _fsync_dir(os.path.dirname(work))
        else:
            _fsync_dir(work)
    checksum = sum(t["checksum"] for t in tables) % (1 << 64)
    return {
        "path": path,
        "sharded": sharded,
        "splits": splits,
        "shards": shard_dirs,
        "tables": tables,
        "entries": sum(t["num_entries"] for t in tables),
        "bytes": sum(t["file_size"] for t in tables),
        "checksum": checksum,
        "rows": rows,
        "duplicates": sum(t["duplicates"] for t in tables),
        "estimated": estimated,
        "seconds": seconds,
    }


# ---------------------------------------------------------------- read_sift

class _ReadDirectory:
    """The checkpoints a read_sift collection scans, removed with it.

    The read tasks of the collection's graph hold this object, so the
    directory lives as long as any collection derived from it does in the
    client process (and until the interpreter exits at the latest). Sent to
    a worker it becomes the bare path: workers never remove it."""

    def __init__(self, root):
        self.root = root
        self._finalizer = weakref.finalize(self, shutil.rmtree, root, True)

    def __reduce__(self):
        return (str, (self.root,))

    def remove(self):
        self._finalizer()


def _scan_partition(spec, read_dir, columns, verify_checksums):
    """Scans [lo, hi) of one partition's checkpoint into a pandas DataFrame."""
    ckpt, lo, hi = spec
    root = getattr(read_dir, "root", read_dir)
    want_key, want_value = "key" in columns, "value" in columns
    keys = values = ()
    with sift.DB(os.path.join(root, ckpt), lru_cache_size=1 << 20) as d:
        it = d.iterator(start=lo, stop=hi, include_key=want_key, include_value=want_value,
                        verify_checksums=verify_checksums, fill_cache=False)
        if want_key and want_value:
            items = list(it)
            keys = [k for k, _ in items]
            values = [v for _, v in items]
        elif want_key:
            keys = list(it)
        else:
            values = list(it)
    data = {}
    for c in columns:
        data[c] = np.array(keys if c == "key" else values, dtype=object)
    return pd.DataFrame(data, columns=list(columns))


def _key_point(prefix, x, width):
    return prefix + x.to_bytes(width, "big")


def _size_splits(d, lo, hi, parts):
    """parts-1 keys inside (lo, hi] cutting the database's bytes in [lo, hi]
    (both keys present in it) into even shares, found by bisection over the
    key space with approximate_sizes (no data is read).

    The database may be compacting meanwhile (a checkpoint just flushed can
    have level-0 work to do), which shrinks sizes between calls: each step
    therefore compares the sizes against shares of the total measured in the
    same call (one call sees one version of the tree). That total ends at hi,
    not after it: a table the range cuts counts its data bytes only, one
    wholly inside counts its whole file, so [lo, hi) is measured as the
    bisection's [lo, mid) ranges are, not with the last table's index and
    filter added."""
    if parts <= 1 or lo == hi:
        return []
    c = 0
    while c < min(len(lo), len(hi)) and lo[c] == hi[c]:
        c += 1
    prefix, width = lo[:c], 8
    a = int.from_bytes(lo[c:c + width].ljust(width, b"\0"), "big")
    b = int.from_bytes(hi[c:c + width].ljust(width, b"\0"), "big")
    if b - a < 2:
        return []
    low = [a] * (parts - 1)
    high = [b] * (parts - 1)
    for _ in range(64):
        mids = [(x + y) // 2 for x, y in zip(low, high)]
        now, *sizes = d.approximate_sizes(
            (lo, hi), *[(lo, _key_point(prefix, m, width)) for m in mids])
        if now == 0:
            return []  # nothing to share
        for j, (m, s) in enumerate(zip(mids, sizes)):
            if s < now * (j + 1) / parts:
                low[j] = m
            else:
                high[j] = m
        if all(y - x <= 1 for x, y in zip(low, high)):
            break
    out = []
    for x in high:
        k = _key_point(prefix, x, width)
        if lo < k <= hi and (not out or k > out[-1]):
            out.append(k)
    return out


def read_sift(path, start=None, stop=None, npartitions=None, columns=("key", "value"), *,
              partition_bytes=64 << 20, verify_checksums=False, checkpoint_dir=None):
    """A Dask DataFrame of the entries in [start, stop) of sift at `path`.

    path: a database, a sharded layout written by to_sift (read_layout), or
        an open sift.DB of this process (its writers may go on meanwhile).
    start, stop: bytes bounds (inclusive, exclusive); None leaves a side open.
    npartitions: how many partitions (range scans) to make, shared among
        the shards by their sizes; fewer where a range has too few data
        blocks to cut. None: one per `partition_bytes` of table files, at
        least one per shard with keys in range.
    columns: 'key' and/or 'value', as object columns of bytes, in key order
        within a partition and across partitions (partition i holds keys
        below those of partition i+1).

    One consistent state: read_sift first takes a checkpoint (DB.checkpoint)
    of each database, and every partition scans that checkpoint, so the
    whole collection reads the data as of that moment however long the scans
    take and whatever is written meanwhile, and computing it again reads the
    same data. A checkpoint rather than a snapshot, because the scans run in
    other processes (the Dask workers), which a snapshot cannot reach: it
    lives in the memory of the process that holds the database. The
    checkpoint costs hard links of the table files and a copy of the live
    log; it is taken of the database itself, so the database must not be
    open in another process (pass the open sift.DB when it is open in this
    one). Each partition gets its own checkpoint of the first (a database is
    opened by one process at a time). In a sharded layout each shard is
    checkpointed in turn: every shard is read as of one moment, not all
    shards as of the same moment (no write spans shards atomically either).

    Partitions hold even shares of bytes: split keys are found by bisection
    over the key space with approximate_sizes of the checkpoint (flushed
    first, so that its memtable is counted), to the granularity of a data
    block. The checkpoints live in `checkpoint_dir` (default: next to the
    database, '.<name>.sift-read', or '<path>/.sift-read' for a layout) and
    are removed when the last reference to the read tasks goes away in this
    process: the returned collection and those made from it, and caches that
    keep graphs (distributed's client keeps the last 100 task functions it
    sent), or at the latest when the interpreter exits.
    """
    columns = tuple(columns)
    if not columns or any(c not in ("key", "value") for c in columns) or \
            len(set(columns)) != len(columns):
        raise ValueError("sift.dask.read_sift: columns must be 'key' and/or 'value'")
    for name, bound in (("start", start), ("stop", stop)):
        if bound is not None and not isinstance(bound, bytes):
            raise TypeError(f"sift.dask.read_sift: {name} must be bytes, not "
                            f"{type(bound).__name__}")
    if npartitions is not None and npartitions < 1:
        raise ValueError("sift.dask.read_sift: npartitions must be at least 1")

    if isinstance(path, sift.DB):
        open_db = path
        name = os.fsdecode(open_db.name)
        sources = [(None, None, open_db, name)]
        base = os.path.join(os.path.dirname(os.path.abspath(name)),
                            f".{os.path.basename(os.path.abspath(name))}.sift-read")
    else:
        path = os.fspath(path)
        if not os.path.isdir(path):
            raise sift.Error(f"sift.dask.read_sift: no database or layout at {path}")
        layout = read_layout(path)
        splits, dirs = layout["splits"], layout["shards"]
        sources = []
        for s, d in enumerate(dirs):
            lo = splits[s - 1] if s else None
            hi = splits[s] if s < len(splits) else None
            sources.append((lo, hi, None, d))
        base = (os.path.join(path, ".sift-read") if layout["sharded"] else
                os.path.join(os.path.dirname(os.path.abspath(path)),
                             f".{os.path.basename(os.path.abspath(path))}.sift-read"))
    base = checkpoint_dir or base
    os.makedirs(base, exist_ok=True)
    root = os.path.join(base, uuid.uuid4().hex)
    os.makedirs(root)
    read_dir = _ReadDirectory(root)
    try:
        # 1. One checkpoint per shard, each flushed (its memtable counted by
        #    approximate_sizes, and nothing left to replay).
        shards = []
        for s, (lo, hi, open_db, d) in enumerate(sources):
            ckpt = os.path.join(root, f"shard-{s:05d}")
            if open_db is not None:
                open_db.checkpoint(ckpt)
            else:
                with sift.DB(d) as src:
                    src.checkpoint(ckpt)
            # The read range within the shard.
            a = lo if start is None or (lo is not None and lo > start) else start
            b = hi if stop is None or (hi is not None and hi < stop) else stop
            shards.append((ckpt, a, b))
        plans = []
        for s, (ckpt, a, b) in enumerate(shards):
            with sift.DB(ckpt) as c:
                c.flush()
                first = next(c.iterator(start=a, stop=b, include_value=False), None)
                last = next(c.iterator(start=a, stop=b, reverse=True, include_value=False), None)
                size = 0 if first is None else c.approximate_size(first, last + b"\0")
                plans.append([s, a, b, first, last, size])
        total = sum(p[5] for p in plans)
        nonempty = [p for p in plans if p[3] is not None]
        if npartitions is None:
            want = max(len(nonempty), math.ceil(total / partition_bytes), 1)
        else:
            want = npartitions
        specs = []
        for s, a, b, first, last, size in plans:
            if first is None:
                continue
            share = max(1, round(want * size / total)) if total else max(1, want // len(nonempty))
            with sift.DB(shards[s][0]) as c:
                cuts = _size_splits(c, first, last, share)
                ranges = list(zip([a] + cuts, cuts + [b]))
                for j, (x, y) in enumerate(ranges):
                    name = f"part-{s:05d}-{j:05d}"
                    c.checkpoint(os.path.join(root, name))
                    specs.append((name, x, y))
        if not specs:
            specs.append(None)
        for s in range(len(shards)):
            shutil.rmtree(shards[s][0])
    except BaseException:
        read_dir.remove()
        raise
    meta = pd.DataFrame({c: pd.Series(dtype=object) for c in columns})
    token = uuid.uuid4().hex
    return dd.from_map(_read_part, specs, args=(read_dir, columns, verify_checksums),
                       meta=meta, label="read-sift", token=token, enforce_metadata=False)


def _read_part(spec, read_dir, columns, verify_checksums):
    if spec is None:  # nothing in range: one empty partition
        return pd.DataFrame({c: pd.Series(dtype=object) for c in columns})
    return _scan_partition(spec, read_dir, columns, verify_checksums)
