#!/usr/bin/env bash
# The measured example of doc/scale-out.md: bulk loading through external tables against loading
# with Put, and the cost of a checkpoint.
#
#   1. gen:        SHARDS processes at once, each writing one shard of NUM sorted keys as a table
#                  with TableFileWriter (scaleout_bench gen);
#   2. ingest:     the SHARDS tables ingested into a new database in one IngestExternalFiles call
#                  (scaleout_bench ingest; INGEST_MOVE=1 links them instead of copying);
#   3. fill:       the same SHARDS*NUM keys Put into a new database in random order
#                  (scaleout_bench fill, then kvbench fillrandom as a cross-check of the time);
#   4. checkpoint: CreateCheckpoint of a database of CKPT_NUM keys loaded with Put, timed alone
#                  (scaleout_bench checkpoint), then `kvtool verify` of the checkpoint.
# Write amplification = bytes written to table and log files / user bytes (keys + values):
# for ingestion the tables gen wrote plus what the database wrote (sift.bytes-written, and the
# copies when INGEST_MOVE=0); for fill what the database wrote, compactions settled.
#
# Parameters (environment):
#   BUILD       build tree with scaleout_bench, kvbench and kvtool (default build/release,
#               configured and built here if missing: Release)
#   WORK        scratch directory, emptied first (default /tmp/sift-scale-out)
#   SHARDS=4 NUM=5000000 (keys per shard) KEY_SIZE=16 VALUE_SIZE=100 CKPT_NUM=10000000
#   INGEST_MOVE=1  SKIP_KVBENCH=0
# Full size needs about 2*SHARDS*NUM*(KEY_SIZE+VALUE_SIZE) bytes of disk plus the checkpoint
# database. A smoke run: SHARDS=4 NUM=50000 CKPT_NUM=100000 bash bench/scale_out.sh
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=${BUILD:-build/release}
WORK=${WORK:-/tmp/sift-scale-out}
SHARDS=${SHARDS:-4}
NUM=${NUM:-5000000}
KEY_SIZE=${KEY_SIZE:-16}
VALUE_SIZE=${VALUE_SIZE:-100}
CKPT_NUM=${CKPT_NUM:-10000000}
INGEST_MOVE=${INGEST_MOVE:-1}
SKIP_KVBENCH=${SKIP_KVBENCH:-0}

if [ ! -x "$BUILD/bench/scaleout_bench" ] || [ ! -x "$BUILD/bench/kvbench" ] ||
   [ ! -x "$BUILD/tools/kvtool" ]; then
  [ -f "$BUILD/CMakeCache.txt" ] ||
    cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$BUILD" -j2 --target scaleout_bench kvbench kvtool
fi
tool="$BUILD/bench/scaleout_bench"
kvbench="$BUILD/bench/kvbench"
kvtool="$BUILD/tools/kvtool"

rm -rf "$WORK"
mkdir -p "$WORK"
total=$((SHARDS * NUM))
user_bytes=$((total * (KEY_SIZE + VALUE_SIZE)))
data=(--num "$NUM" --shards "$SHARDS" --key_size "$KEY_SIZE" --value_size "$VALUE_SIZE")

# The value of name=... in a line of scaleout_bench output.
field() { sed -n "s/.* $2=\([^ ]*\).*/\1/p" <<<"$1"; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }

echo "== $SHARDS shards of $NUM keys ($KEY_SIZE-byte keys, $VALUE_SIZE-byte values), work dir $WORK"

# 1. Build the shard tables, one process per shard.
t0=$(now)
pids=()
for ((i = 0; i < SHARDS; i++)); do
  "$tool" gen "${data[@]}" --shard "$i" --out "$WORK/shard-$i.sst" >"$WORK/gen-$i.out" &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid"; done
t1=$(now)
gen_seconds=$(elapsed "$t0" "$t1")
gen_bytes=0
for ((i = 0; i < SHARDS; i++)); do
  gen_bytes=$((gen_bytes + $(field " $(cat "$WORK/gen-$i.out")" file_bytes)))
done
echo "gen:    ${gen_seconds} s for $SHARDS tables, $gen_bytes bytes"

# 2. Ingest them in one call.
shard_files=()
for ((i = 0; i < SHARDS; i++)); do shard_files+=("$WORK/shard-$i.sst"); done
move_flag=()
[ "$INGEST_MOVE" = 1 ] && move_flag=(--move)
line=$("$tool" ingest --db "$WORK/ingested" "${move_flag[@]}" "${shard_files[@]}")
ingest_seconds=$(field "$line" seconds)
ingest_db_bytes=$(field "$line" db_bytes_written)
copied=0
[ "$INGEST_MOVE" = 1 ] || copied=$gen_bytes
ingest_written=$((gen_bytes + copied + ingest_db_bytes))
ingest_total=$(awk -v a="$gen_seconds" -v b="$ingest_seconds" 'BEGIN { printf "%.3f", a + b }')
echo "ingest: ${ingest_seconds} s (move=$INGEST_MOVE); end to end ${ingest_total} s;" \
     "write amplification $(ratio "$ingest_written" "$user_bytes")"

# 3. The same keys with Put.
line=$("$tool" fill "${data[@]}" --db "$WORK/filled")
fill_seconds=$(field "$line" seconds)
fill_written=$(field "$line" db_bytes_written)
echo "fill:   ${fill_seconds} s (Put, random order; compactions settled after" \
     "$(field "$line" settle_seconds) s more); write amplification $(ratio "$fill_written" "$user_bytes")"
kvbench_seconds="(skipped)"
if [ "$SKIP_KVBENCH" != 1 ]; then
  "$kvbench" --benchmarks fillrandom --num "$total" --key_size "$KEY_SIZE" \
    --value_size "$VALUE_SIZE" --db "$WORK/kvbench" --json >"$WORK/kvbench.json"
  kvbench_seconds=$(python3 -c '
import json, sys
doc = json.load(open(sys.argv[1]))
def find(o):
    if isinstance(o, dict):
        if o.get("workload") == "fillrandom" and "seconds" in o: return o["seconds"]
        for v in o.values():
            r = find(v)
            if r is not None: return r
    if isinstance(o, list):
        for v in o:
            r = find(v)
            if r is not None: return r
print("%.3f" % find(doc))' "$WORK/kvbench.json")
  echo "kvbench fillrandom: ${kvbench_seconds} s"
fi
rm -rf "$WORK/filled" "$WORK/kvbench"

# 4. Checkpoint of a CKPT_NUM-key database.
"$tool" fill --num "$CKPT_NUM" --shards 1 --key_size "$KEY_SIZE" --value_size "$VALUE_SIZE" \
  --db "$WORK/ckpt-src" >/dev/null
line=$("$tool" checkpoint --db "$WORK/ckpt-src" --dir "$WORK/ckpt")
ckpt_seconds=$(field "$line" seconds)
"$kvtool" verify "$WORK/ckpt" >"$WORK/verify.out" || {
  cat "$WORK/verify.out"
  echo "kvtool verify of the checkpoint failed" >&2
  exit 1
}
echo "checkpoint: ${ckpt_seconds} s for $CKPT_NUM keys ($(field "$line" table_bytes) table bytes); kvtool verify: ok"

cat <<TABLE

| step | keys | seconds | write amplification |
|---|---:|---:|---:|
| build $SHARDS tables ($SHARDS processes) | $total | $gen_seconds | |
| ingest (move_files=$INGEST_MOVE) | $total | $ingest_seconds | |
| build + ingest, end to end | $total | $ingest_total | $(ratio "$ingest_written" "$user_bytes") |
| Put, random order (scaleout_bench fill) | $total | $fill_seconds | $(ratio "$fill_written" "$user_bytes") |
| kvbench fillrandom | $total | $kvbench_seconds | |
| CreateCheckpoint | $CKPT_NUM | $ckpt_seconds | |

speed-up of ingestion over Put: $(ratio "$fill_seconds" "$ingest_total")x
TABLE
