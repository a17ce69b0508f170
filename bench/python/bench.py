#!/usr/bin/python3
"""sift's Python package against plyvel (LevelDB) and py-lmdb, in one run.

All three get the same data: --num keys of 16 bytes (distinct, in a
scattered order) with 100-byte values, and the same workloads:

  put           single puts (the first half of the keys, no sync)
  batch 1000    write batches of 1,000 puts (the second half)
  get present   point reads of every key, in a random order
  get absent    point reads of as many keys that are not there
  iterate       one full forward scan
  get 1 thr     the reads of "get present" again, warm
  get 2 thr     two threads reading the keys, half each, warm

The engines take turns at every workload, so that a slow or fast spell of
the machine falls on all of them alike: the loads write their keys in three
slices (each engine writes a slice, then the next engine; the rate is over
all three), and each read workload runs three times per engine in turns, of
which the median is reported. The engine that goes first changes every turn.
"get 1 thr" repeats "get present" on a tree the earlier reads warmed, and
"get 2 thr" follows it in the same turn; the thread scaling is "get 2 thr"
over "get 1 thr". --turns sets the number of turns; --show_turns prints
every turn's rate of the read workloads.

sift and plyvel use their defaults with 10 bloom bits per key (plyvel's
default has no filter) and are compacted after loading (compact_range()),
so both read a settled tree. lmdb writes without fsync (sync=False), like the
others' unsynced writes; its reads run in one read transaction per thread.

It also measures the Python overhead per get: the same keys read through
DB.get from Python and through DB::Get from a C++ loop in the extension, on
the same open database (present keys from tables, and one key in the
memtable read repeatedly).

Run with Debian's interpreter and the package installed (or on PYTHONPATH):
  /usr/bin/python3 bench/python/bench.py --num 1000000
"""

import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
import threading
import time

import sift

try:
    import plyvel
except ImportError:  # pragma: no cover
    plyvel = None
try:
    import lmdb
except ImportError:  # pragma: no cover
    lmdb = None

MULT = 0x9E3779B97F4A7C15  # odd: i -> i * MULT mod 2**64 is a bijection


def make_key(i):
    return b"%016x" % ((i * MULT) & 0xFFFFFFFFFFFFFFFF)


class Values:
    """100-byte values cut from a random pool (incompressible, cheap)."""

    def __init__(self, size):
        self.size = size
        self.pool = os.urandom(1 << 20)

    def __call__(self, i):
        off = (i * 7919) % (len(self.pool) - self.size)
        return self.pool[off:off + self.size]


# ---- one adapter per engine: the calls a workload needs ----


class LsmAdapter:
    def __init__(self, module, path):
        self.db = module.DB(path, create_if_missing=True, bloom_filter_bits=10)

    def put(self, k, v):
        self.db.put(k, v)

    def batch(self, items):
        with self.db.write_batch() as b:
            for k, v in items:
                b.put(k, v)

    def settle(self):
        self.db.compact_range()

    def reader(self):
        return self.db.get

    def end_reader(self):
        pass

    def iterate(self):
        n = 0
        for _ in self.db:
            n += 1
        return n

    def close(self):
        self.db.close()


class LmdbAdapter:
    def __init__(self, path):
        self.env = lmdb.open(path, map_size=64 << 30, sync=False, metasync=False,
                             max_readers=16)
        self.txns = threading.local()

    def put(self, k, v):
        with self.env.begin(write=True) as txn:
            txn.put(k, v)

    def batch(self, items):
        with self.env.begin(write=True) as txn:
            for k, v in items:
                txn.put(k, v)

    def settle(self):
        self.env.sync(True)

    def reader(self):
        txn = self.env.begin(buffers=False)
        self.txns.txn = txn
        return txn.get

    def end_reader(self):
        self.txns.txn.abort()

    def iterate(self):
        n = 0
        with self.env.begin() as txn:
            for _ in txn.cursor():
                n += 1
        return n

    def close(self):
        self.env.close()


def timed(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def read_all(adapter, keys, expect_found):
    get = adapter.reader()
    found = 0
    for k in keys:
        if get(k) is not None:
            found += 1
    adapter.end_reader()
    if found != (len(keys) if expect_found else 0):
        raise SystemExit(f"wrong read result: found {found} of {len(keys)}")


def in_turn(names, turn):
    """The engines in this turn's order: rotated every turn, so that none is
    always first (or always right after another one's writes)."""
    k = turn % len(names)
    return names[k:] + names[:k]


def run_all(adapters, args, values):
    """Every workload, the engines taking turns (see the module comment)."""
    names = list(adapters)
    turns = args.turns
    n = args.num
    half = n // 2
    rng = random.Random(1)
    present = [make_key(i) for i in range(n)]
    rng.shuffle(present)
    absent = [make_key(n + i) for i in range(n)]
    results = {e: {} for e in names}

    def load_puts(adapter, lo, hi):
        for i in range(lo, hi):
            adapter.put(make_key(i), values(i))

    def load_batches(adapter, lo, hi):
        for b in range(lo, hi, 1000):
            adapter.batch((make_key(i), values(i)) for i in range(b, min(b + 1000, hi)))

    # The loads: each turn writes the next slice of keys into every engine.
    for workload, load, first, last, step in (("put", load_puts, 0, half, 1),
                                              ("batch 1000", load_batches, half, n, 1000)):
        cuts = [first + (last - first) * t // turns // step * step for t in range(turns)]
        cuts.append(last)
        spent = dict.fromkeys(names, 0.0)
        for t in range(turns):
            for e in in_turn(names, t):
                spent[e] += timed(lambda: load(adapters[e], cuts[t], cuts[t + 1]))
        for e in names:
            results[e][workload] = (last - first) / spent[e]
    for e in names:
        adapters[e].settle()

    def iterate(adapter):
        count = adapter.iterate()
        if count != n:
            raise SystemExit(f"iteration saw {count} of {n} keys")

    def two_threads(adapter):
        parts = [present[: n // 2], present[n // 2:]]
        threads = [threading.Thread(target=read_all, args=(adapter, p, True)) for p in parts]
        for th in threads:
            th.start()
        for th in threads:
            th.join()

    # The reads: `turns` turns of every group of workloads, each engine's
    # median kept. "get 1 thr" repeats "get present" on a tree the earlier
    # reads warmed, and "get 2 thr" follows it in the same turn: the thread
    # scaling compares the two.
    groups = ((("get present", lambda a: read_all(a, present, True)),),
              (("get absent", lambda a: read_all(a, absent, False)),),
              (("iterate", iterate),),
              (("get 1 thr", lambda a: read_all(a, present, True)),
               ("get 2 thr", two_threads)))
    for group in groups:
        rates = {e: {w: [] for w, _ in group} for e in names}
        for t in range(turns):
            for e in in_turn(names, t):
                for w, fn in group:
                    rates[e][w].append(n / timed(lambda: fn(adapters[e])))
        for e in names:
            for w, _ in group:
                results[e][w] = statistics.median(rates[e][w])
                if args.show_turns:
                    print(f"{w:<12} {e:<7} turns: " +
                          ", ".join(f"{r:,.0f}" for r in rates[e][w]), flush=True)
    return results


def python_overhead(path, args, values):
    """ns per DB.get from Python minus ns per DB::Get from C++, same keys."""
    db = sift.DB(path, create_if_missing=True, bloom_filter_bits=10)
    n = min(args.num, 200000)
    with db.write_batch() as b:
        for i in range(n):
            b.put(make_key(i), values(i))
    db.compact_range()
    keys = [make_key(i) for i in range(n)]
    random.Random(2).shuffle(keys)
    rows = []
    for label, ks in (("present, from tables", keys),
                      ("memtable hit", None)):
        if ks is None:
            db.put(b"memtable-key", b"v" * 100)
            ks = [b"memtable-key"] * n
        best_py = best_cpp = float("inf")
        for _ in range(args.repeat):
            get = db.get
            t0 = time.perf_counter_ns()
            for k in ks:
                get(k)
            best_py = min(best_py, (time.perf_counter_ns() - t0) / len(ks))
            ns, found = sift._sift._cpp_get_loop(db, ks)
            if found != len(ks):
                raise SystemExit("C++ loop missed keys")
            best_cpp = min(best_cpp, ns / len(ks))
        rows.append((label, best_py, best_cpp))
    db.close()
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--num", type=int, default=1_000_000, help="keys (default 1M)")
    ap.add_argument("--value_size", type=int, default=100)
    ap.add_argument("--turns", type=int, default=3,
                    help="turns the engines take at each workload (default 3)")
    ap.add_argument("--show_turns", action="store_true",
                    help="print each turn's rate of the read workloads")
    ap.add_argument("--repeat", type=int, default=3,
                    help="runs of the overhead loops (the best is kept)")
    ap.add_argument("--dir", default=None, help="where the databases go (default: a temp dir)")
    ap.add_argument("--engines", default="sift,plyvel,lmdb")
    args = ap.parse_args()

    values = Values(args.value_size)
    base = tempfile.mkdtemp(prefix="sift-pybench-", dir=args.dir)
    engines = []
    for name in args.engines.split(","):
        if name == "plyvel" and plyvel is None or name == "lmdb" and lmdb is None:
            print(f"({name} is not installed: skipped)")
            continue
        engines.append(name)
    print(f"keys: {args.num:,} x 16 B, values {args.value_size} B; Python "
          f"{sys.version.split()[0]}; databases under {base}")
    adapters = {}
    try:
        for name in engines:
            path = os.path.join(base, name)
            if name == "sift":
                adapters[name] = LsmAdapter(sift, path)
            elif name == "plyvel":
                adapters[name] = LsmAdapter(plyvel, path)
            else:
                adapters[name] = LmdbAdapter(path)
        results = run_all(adapters, args, values)
        for name in engines:
            adapters.pop(name).close()
            shutil.rmtree(os.path.join(base, name))
        overhead = python_overhead(os.path.join(base, "overhead"), args, values)
    finally:
        for adapter in adapters.values():
            adapter.close()
        shutil.rmtree(base, ignore_errors=True)

    workloads = list(next(iter(results.values())))
    others = [e for e in engines if e != "sift"]
    header = f"{'workload':<12}" + "".join(f"{e + ' ops/s':>16}" for e in engines)
    header += "".join(f"{'sift/' + e:>14}" for e in others if "sift" in results)
    print()
    print(header)
    print("-" * len(header))
    for w in workloads:
        line = f"{w:<12}" + "".join(f"{results[e][w]:>16,.0f}" for e in engines)
        if "sift" in results:
            line += "".join(f"{results['sift'][w] / results[e][w]:>13.2f}x" for e in others)
        print(line)
    print()
    for e in engines:
        scale = results[e]["get 2 thr"] / results[e]["get 1 thr"]
        print(f"{e}: 2 threads read {scale:.2f}x one thread (medians of warm turns)")
    print()
    print("Python overhead per sift get (best of %d runs):" % args.repeat)
    print(f"{'keys':<22}{'Python ns/get':>15}{'C++ ns/get':>12}{'overhead ns':>13}")
    for label, py_ns, cpp_ns in overhead:
        print(f"{label:<22}{py_ns:>15.0f}{cpp_ns:>12.0f}{py_ns - cpp_ns:>13.0f}")


if __name__ == "__main__":
    main()
