// Memtable insert and lookup; WAL record append (framing and checksums,
// written to a file that discards its bytes, so no system call is timed).

#include <memory>
#include <string>
#include <vector>

#include "bench/kvbench/keys.h"
#include "benchmark/benchmark.h"
#include "db/dbformat.h"
#include "db/log_writer.h"
#include "db/memtable.h"
#include "sift/env.h"
#include "sift/iterator.h"
#include "util/comparator.h"
#include "util/random.h"

namespace sift::bench {
namespace {

constexpr uint64_t kMemtableKeys = 30000;  // about a 4 MiB memtable

void BM_MemTableInsert(benchmark::State& state) {
  const KeySpace keys(kMemtableKeys, 16);
  const RandomOrder order(kMemtableKeys, 1);
  const std::string value(100, 'v');
  const InternalKeyComparator icmp(BytewiseComparator());
  std::string key(16, '\0');
  for (auto _ : state) {
    MemTable mem(icmp);
    for (uint64_t i = 0; i < kMemtableKeys; ++i) {
      keys.Present(order.At(i), key.data());
      mem.Add(i + 1, kTypeValue, key, value);
    }
    benchmark::DoNotOptimize(mem.NumEntries());
  }
  state.SetItemsProcessed(state.iterations() * kMemtableKeys);
}
BENCHMARK(BM_MemTableInsert)->Unit(benchmark::kMillisecond);

void BM_MemTableGet(benchmark::State& state) {
  const KeySpace keys(kMemtableKeys, 16);
  const std::string value(100, 'v');
  const InternalKeyComparator icmp(BytewiseComparator());
  MemTable mem(icmp);
  for (uint64_t i = 0; i < kMemtableKeys; ++i) {
    mem.Add(i + 1, kTypeValue, keys.PresentKey(i), value);
  }
  const bool present = state.range(0) == 1;
  Random rnd(5);
  std::string key(16, '\0');
  std::string got;
  uint64_t found = 0;
  for (auto _ : state) {
    const uint64_t i = rnd.Uniform(kMemtableKeys);
    present ? keys.Present(i, key.data()) : keys.Missing(i, key.data());
    LookupKey lk(key, kMaxSequenceNumber);
    absl::Status s;
    found += mem.Get(lk, &got, &s);
  }
  benchmark::DoNotOptimize(found);
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(present ? "present keys" : "absent keys");
}
BENCHMARK(BM_MemTableGet)->Arg(1)->Arg(0);

// Iterator seeks to random present keys of a memtable filled in random order,
// as a fill leaves it (nodes and entries spread over the arena in insertion
// order, not key order): what an iterator over a DB with a non-empty
// memtable pays in it per Seek.
void BM_MemTableSeek(benchmark::State& state) {
  const KeySpace keys(kMemtableKeys, 16);
  const RandomOrder order(kMemtableKeys, 1);
  const std::string value(100, 'v');
  const InternalKeyComparator icmp(BytewiseComparator());
  MemTable mem(icmp);
  std::string key(16, '\0');
  for (uint64_t i = 0; i < kMemtableKeys; ++i) {
    keys.Present(order.At(i), key.data());
    mem.Add(i + 1, kTypeValue, key, value);
  }
  std::unique_ptr<Iterator> it = mem.NewIterator();
  Random rnd(7);
  uint64_t found = 0;
  for (auto _ : state) {
    keys.Present(rnd.Uniform(kMemtableKeys), key.data());
    LookupKey lk(key, kMaxSequenceNumber);
    it->Seek(lk.internal_key());
    found += it->Valid();
  }
  benchmark::DoNotOptimize(found);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_MemTableSeek);

class DiscardFile final : public WritableFile {
 public:
  absl::Status Append(std::string_view data) override {
    bytes_ += data.size();
    return absl::OkStatus();
  }
  absl::Status Flush() override { return absl::OkStatus(); }
  absl::Status Sync() override { return absl::OkStatus(); }
  absl::Status Close() override { return absl::OkStatus(); }
  uint64_t bytes() const { return bytes_; }

 private:
  uint64_t bytes_ = 0;
};

void BM_WalAppend(benchmark::State& state) {
  DiscardFile file;
  log::Writer writer(&file);
  const std::string record(state.range(0), 'r');
  for (auto _ : state) {
    absl::Status s = writer.AddRecord(record);
    benchmark::DoNotOptimize(s.ok());
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_WalAppend)->Arg(128)->Arg(4096)->Arg(100000);

}  // namespace
}  // namespace sift::bench
