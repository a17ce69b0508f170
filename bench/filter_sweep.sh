#!/usr/bin/env bash
# The README's filter picture: kvbench's sweep over filter bits per key (uniform and optimal
# allocation, Bloom and binary fuse), with RocksDB at the same settings as the reference line of
# the allocation panel. Block reads per Get do not depend on machine load; the ops/s columns of
# sweep.csv do, so take those from an idle machine only.
#
#   bash bench/filter_sweep.sh [OUT_DIR]        (default doc/img; NUM=... READS=... BITS=...)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-doc/img}
num=${NUM:-1000000}
reads=${READS:-200000}
bits=${BITS:-0,2,4,6,8,10,12,14,16,18,20}
build=${BUILD:-build/release}
cmake --build "$build" --target kvbench peer_bench >/dev/null
ref=$(mktemp -d)
trap 'rm -rf "$ref"' EXIT
refs=()
for b in ${bits//,/ }; do
  [ "$b" = 0 ] && continue
  echo "== RocksDB reference at $b bits/key" >&2
  "$build/bench/peer_bench" --engines rocksdb --num "$num" --reads "$reads" \
    --bits_per_key "$b" --json >"$ref/rocksdb-$b.json"
  refs+=("$ref/rocksdb-$b.json")
done
list=$(IFS=,; echo "${refs[*]}")
"$build/bench/kvbench" --num "$num" --reads "$reads" --sweep_bits "$bits" --sweep_keep_shape \
  --sweep_reference "$list" --sweep_out "$out"
