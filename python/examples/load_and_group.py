"""Load generated rows into 8 sift shards with to_sift, then group them with
Dask over read_sift.

    PYTHONPATH=build/python/site /usr/bin/python3 python/examples/load_and_group.py \
        --rows 10000000 --dir /tmp/sift-example

Each row is an order: key b"order:" + 10-digit order id (16 bytes), value
b"<region>,<amount>". The load range-partitions the rows into 8 shard
databases under --dir; the query sums the amounts per region from a
consistent checkpoint of all of them, scanned in parallel on the workers.
--rows 100000 runs in seconds.
"""
import argparse
import shutil

import dask.dataframe as dd
import numpy as np
import pandas as pd
from distributed import Client, LocalCluster

import sift.dask

REGIONS = [b"north", b"south", b"east", b"west", b"centre"]


def orders(spec):
    """One input partition: `count` orders with random ids from `seed`."""
    seed, count = spec
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, 10**10, count)
    regions = rng.integers(0, len(REGIONS), count)
    amounts = rng.integers(1, 10_000, count)
    return pd.DataFrame({
        "key": np.array([b"order:%010d" % i for i in ids], dtype=object),
        "value": np.array([REGIONS[r] + b",%d" % a for r, a in zip(regions, amounts)],
                          dtype=object),
    })


def parse(part):
    """key/value bytes -> region and amount columns."""
    fields = part["value"].map(lambda v: v.split(b",", 1))
    return pd.DataFrame({"region": fields.map(lambda f: f[0].decode()),
                         "amount": fields.map(lambda f: int(f[1])).astype(np.int64)})


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--dir", default="/tmp/sift-example")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    shutil.rmtree(args.dir, ignore_errors=True)

    with LocalCluster(n_workers=args.workers, threads_per_worker=1) as cluster, \
            Client(cluster):
        per = 250_000
        specs = [(seed, min(per, args.rows - start))
                 for seed, start in enumerate(range(0, args.rows, per))]
        meta = pd.DataFrame({"key": pd.Series(dtype=object), "value": pd.Series(dtype=object)})
        data = dd.from_map(orders, specs, meta=meta)

        report = sift.dask.to_sift(data, args.dir, shards=8)
        print(f"loaded {report['rows']} rows as {report['entries']} entries "
              f"({report['duplicates']} repeated ids) into {len(report['shards'])} shards, "
              f"{len(report['tables'])} tables; seconds per phase: {report['seconds']}")

        scanned = sift.dask.read_sift(args.dir, columns=("value",))
        totals = (scanned.map_partitions(parse, meta={"region": object, "amount": np.int64})
                  .groupby("region")["amount"].agg(["count", "sum"]).compute())
        print(totals.sort_index())
        assert int(totals["count"].sum()) == report["entries"]


if __name__ == "__main__":
    main()
