// Corruption sweep: build a small database whose tables overwrite and delete
// each other's keys and whose WAL holds records not yet in any table, then,
// trial after trial, damage one byte (flip a bit or XOR a random byte) in a
// data, index, filter or properties block, a footer, the WAL or the MANIFEST
// (located through the table format), open the damaged copy and read
// everything back:
//   - every read returns the right value or absl::DataLossError, never a
//     wrong value, a stale value or "not found" for a key that exists, and
//     never crashes (the ASan/UBSan build runs the same sweep);
//   - damage to a table is always detected by some read;
//   - damage to the WAL stops its replay (point-in-time recovery): what is
//     lost is a suffix of the log's records that starts no earlier than the
//     damaged 32 KiB block, never a record with a later one kept; and under
//     paranoid_checks fails Open unless it looks exactly like a write torn by
//     a crash (a record running past the end of the file);
//   - damage to the MANIFEST fails Open with DataLossError or is harmless.
// A sample of the damaged databases also goes through `kvtool verify`, which
// must flag every damaged table.

#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "db/log_format.h"
#include "db/log_reader.h"
#include "db/wal_link.h"
#include "db/write_batch_internal.h"
#include "gtest/gtest.h"
#include "sift/db.h"
#include "sift/env.h"
#include "table/format.h"
#include "tests/reliability/reliability_util.h"
#include "util/random.h"

namespace sift::reliability {
namespace {

constexpr char kDb[] = "/sweep";
constexpr int kTableKeys = 400;
constexpr int kWalKeys = 200;

enum Region {
  kData,
  kIndex,
  kFilter,
  kProperties,
  kFooter,
  kWal,
  kManifest,
  kNumRegions
};
constexpr std::array<const char*, kNumRegions> kRegionNames = {
    "data", "index", "filter", "properties", "footer", "wal", "manifest"};

bool IsTableRegion(Region r) { return r <= kFooter; }

// A byte range of one file.
struct Span {
  std::string file;
  uint64_t begin = 0;
  uint64_t end = 0;
};

// One WAL record: its byte range and the key it writes.
struct WalRecord {
  uint64_t begin = 0;
  uint64_t end = 0;
  std::string key;
};

std::string TableKey(int i) { return absl::StrFormat("t%05d", i); }
std::string WalKey(int i) { return absl::StrFormat("w%05d", i); }

// Values that Snappy compresses in some blocks and not in others.
std::string MakeValue(Random* rnd, std::string_view tag) {
  std::string v(tag);
  const size_t len = 20 + rnd->Uniform(200);
  const bool compressible = rnd->OneIn(2);
  while (v.size() < len) {
    v.push_back(compressible ? 'x' : static_cast<char>('a' + rnd->Uniform(26)));
  }
  return v;
}

class WalKeys final : public WriteBatch::Handler {
 public:
  void Put(std::string_view key, std::string_view) override {
    keys.emplace_back(key);
  }
  void Delete(std::string_view key) override { keys.emplace_back(key); }
  std::vector<std::string> keys;
};

// Counts per region, for the summary line.
struct RegionStats {
  uint64_t trials = 0;
  uint64_t detected = 0;      // some read or Open said DataLoss
  uint64_t harmless = 0;      // every read right, nothing reported
  uint64_t lost_records = 0;  // WAL: records dropped by recovery
  uint64_t open_failed = 0;   // Open returned DataLoss
  // Logs: damage to a length field that makes a fragment of the last block
  // run past the end of the file, like a write torn by a crash (see
  // TornTailLookAlike). Each must be detected all the same.
  uint64_t look_alikes = 0;
  uint64_t kvtool_runs = 0;
  uint64_t kvtool_flagged = 0;
};

// The header offsets of the fragments of an intact log file.
std::vector<uint64_t> FragmentHeaders(std::string_view log) {
  std::vector<uint64_t> headers;
  for (uint64_t block = 0; block < log.size(); block += log::kBlockSize) {
    uint64_t p = block;
    const uint64_t end =
        std::min<uint64_t>(block + log::kBlockSize, log.size());
    while (end - p >= log::kHeaderSize) {
      const uint32_t length =
          static_cast<uint8_t>(log[p + 4]) |
          static_cast<uint32_t>(static_cast<uint8_t>(log[p + 5])) << 8;
      if (length == 0 && log[p + 6] == 0) break;  // zero padding
      headers.push_back(p);
      p += log::kHeaderSize + length;
    }
  }
  return headers;
}

// If XORing `mask` into byte `offset` of `log` changes the length field of a
// fragment in the file's last block so that it runs past the end of the
// file, the header offset of that fragment. Such damage looks like the write
// a crash cut short; log::Reader tells the two apart (the fragment's checksum
// still matches up to the end of the file, or an intact fragment follows),
// and before it did, one damaged byte silently dropped the rest of a WAL or
// rolled a MANIFEST back (LogTailDamageTest).
std::optional<uint64_t> TornTailLookAlike(std::string_view log, uint64_t offset,
                                          uint8_t mask) {
  const uint64_t last_block = (log.size() - 1) / log::kBlockSize;
  for (uint64_t h : FragmentHeaders(log)) {
    if (h / log::kBlockSize != last_block) continue;
    if (offset != h + 4 && offset != h + 5) continue;
    uint32_t length = static_cast<uint8_t>(log[h + 4]) |
                      static_cast<uint32_t>(static_cast<uint8_t>(log[h + 5]))
                          << 8;
    length ^= static_cast<uint32_t>(mask) << (offset == h + 5 ? 8 : 0);
    if (h + log::kHeaderSize + length > log.size()) return h;
  }
  return std::nullopt;
}

class CorruptionSweepTest : public testing::Test {
 protected:
  void SetUp() override {
    base_env_ = NewMemEnv(Env::Default());
    ASSERT_NO_FATAL_FAILURE(BuildBase());
    ASSERT_NO_FATAL_FAILURE(LocateRegions());
    SplitOffWal();
  }

  Options BaseOptions(Env* env) const {
    Options options;
    options.env = env;
    options.create_if_missing = true;
    options.write_buffer_size = 8 << 20;  // flushes only when asked
    options.block_size = 512;
    options.max_file_size = 24 << 10;
    return options;
  }

  // Three generations of tables that shadow each other (a stale value behind
  // a damaged newer table must never show through), then a reopen (a new
  // MANIFEST) and WAL records not yet in a table.
  void BuildBase() {
    Random rnd(1234);
    const Options options = BaseOptions(base_env_.get());
    absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options, kDb);
    ASSERT_TRUE(db.ok()) << db.status();
    for (int i = 0; i < kTableKeys; ++i) {
      model_[TableKey(i)] = MakeValue(&rnd, absl::StrCat("g1.", i, "."));
      ASSERT_TRUE(
          (*db)->Put(WriteOptions(), TableKey(i), model_[TableKey(i)]).ok());
    }
    ASSERT_TRUE((*db)->CompactRange(nullptr, nullptr).ok());
    for (int i = 0; i < kTableKeys; i += 2) {
      model_[TableKey(i)] = MakeValue(&rnd, absl::StrCat("g2.", i, "."));
      ASSERT_TRUE(
          (*db)->Put(WriteOptions(), TableKey(i), model_[TableKey(i)]).ok());
    }
    for (int i = 1; i < kTableKeys; i += 6) {
      model_.erase(TableKey(i));
      deleted_.push_back(TableKey(i));
      ASSERT_TRUE((*db)->Delete(WriteOptions(), TableKey(i)).ok());
    }
    ASSERT_TRUE((*db)->Flush().ok());
    for (int i = 0; i < kTableKeys; i += 4) {
      model_[TableKey(i)] = MakeValue(&rnd, absl::StrCat("g3.", i, "."));
      ASSERT_TRUE(
          (*db)->Put(WriteOptions(), TableKey(i), model_[TableKey(i)]).ok());
    }
    ASSERT_TRUE((*db)->Flush().ok());
    db->reset();
    db = DB::Open(options, kDb);
    ASSERT_TRUE(db.ok()) << db.status();
    // One more table after the reopen, so the MANIFEST holds a snapshot, the
    // recovery edit and an edit adding a table.
    for (int i = 0; i < kTableKeys; i += 3) {
      model_[TableKey(i)] = MakeValue(&rnd, absl::StrCat("g4.", i, "."));
      ASSERT_TRUE(
          (*db)->Put(WriteOptions(), TableKey(i), model_[TableKey(i)]).ok());
    }
    ASSERT_TRUE((*db)->Flush().ok());
    for (int i = 0; i < kWalKeys; ++i) {
      std::string value = MakeValue(&rnd, absl::StrCat("wal.", i, "."));
      value.append(300, static_cast<char>('A' + i % 26));  // WAL > 2 blocks
      model_[WalKey(i)] = value;
      ASSERT_TRUE((*db)->Put(WriteOptions(), WalKey(i), value).ok());
    }
    db->reset();  // the WAL stays: these writes are in no table
    absl::StatusOr<std::map<std::string, std::string>> files =
        ReadEnvDir(base_env_.get(), kDb);
    ASSERT_TRUE(files.ok()) << files.status();
    files_ = *std::move(files);
    files_.erase("LOG");
    files_.erase("LOG.old");
    files_.erase("LOCK");
  }

  // Trials that damage something else than the WAL run without it (and
  // without its keys): Open then has nothing to replay, which keeps them
  // cheap.
  void SplitOffWal() {
    table_files_ = files_;
    table_files_.erase(wal_name_);
    table_model_ = model_;
    for (const WalRecord& r : wal_records_) table_model_.erase(r.key);
  }

  void LocateRegions() {
    for (const auto& [name, contents] : files_) {
      if (absl::EndsWith(name, ".sst")) {
        ASSERT_GE(contents.size(), Footer::kEncodedLength);
        Footer footer;
        const uint64_t footer_at = contents.size() - Footer::kEncodedLength;
        ASSERT_TRUE(
            footer
                .DecodeFrom(std::string_view(contents).substr(footer_at), name)
                .ok());
        auto span = [&name](const BlockHandle& h) {
          return Span{name, h.offset, h.offset + h.size + kBlockTrailerSize};
        };
        uint64_t data_end = footer.index.offset;
        data_end = std::min(data_end, footer.properties.offset);
        if (footer.has_filter()) {
          data_end = std::min(data_end, footer.filter.offset);
          regions_[kFilter].push_back(span(footer.filter));
        }
        regions_[kData].push_back(Span{name, 0, data_end});
        regions_[kIndex].push_back(span(footer.index));
        regions_[kProperties].push_back(span(footer.properties));
        regions_[kFooter].push_back(Span{name, footer_at, contents.size()});
      } else if (absl::EndsWith(name, ".log") && !contents.empty()) {
        regions_[kWal].push_back(Span{name, 0, contents.size()});
        wal_name_ = name;
      } else if (absl::StartsWith(name, "MANIFEST-") &&
                 files_["CURRENT"] == name + "\n") {
        regions_[kManifest].push_back(Span{name, 0, contents.size()});
      }
    }
    for (int r = 0; r < kNumRegions; ++r) {
      ASSERT_FALSE(regions_[r].empty())
          << "no " << kRegionNames[r] << " region";
    }
    ASSERT_EQ(regions_[kWal].size(), 1u);
    ASSERT_GE(regions_[kData].size(), 3u);

    // The WAL's records, from the log reader itself.
    absl::StatusOr<std::unique_ptr<SequentialFile>> file =
        base_env_->NewSequentialFile(absl::StrCat(kDb, "/", wal_name_));
    ASSERT_TRUE(file.ok()) << file.status();
    log::Reader reader(file->get(), nullptr, true);
    std::string scratch;
    std::string_view record;
    while (reader.ReadRecord(&record, &scratch)) {
      // The log started by the flush links to the one before; damage to the
      // link stops replay at offset 0, which MayLose covers.
      if (WalLink::IsLink(record)) continue;
      WriteBatch batch;
      ASSERT_TRUE(WriteBatchInternal::SetContents(&batch, record).ok());
      WalKeys keys;
      ASSERT_TRUE(batch.Iterate(&keys).ok());
      ASSERT_EQ(keys.keys.size(), 1u);
      if (!wal_records_.empty()) {
        wal_records_.back().end = reader.LastRecordOffset();
      }
      wal_records_.push_back({reader.LastRecordOffset(), 0, keys.keys[0]});
    }
    ASSERT_EQ(wal_records_.size(), static_cast<size_t>(kWalKeys));
    wal_records_.back().end = files_[wal_name_].size();
    ASSERT_GE(files_[wal_name_].size(), 2 * log::kBlockSize);
  }

  // Keys of the WAL records a flip at `offset` of the WAL may cost: replay
  // stops at the first damaged record, so every record with bytes in the
  // damaged 32 KiB block or after it (a damaged length may hide where the
  // damaged record begins within its block).
  std::set<std::string> MayLose(uint64_t offset) const {
    const uint64_t begin = offset / log::kBlockSize * log::kBlockSize;
    std::set<std::string> keys;
    for (const WalRecord& r : wal_records_) {
      if (r.end > begin) keys.insert(r.key);
    }
    return keys;
  }

  // The lost WAL records are a suffix of the log: the state is a prefix.
  bool LostIsASuffix(const std::set<std::string>& lost) const {
    bool losing = false;
    for (const WalRecord& r : wal_records_) {
      const bool is_lost = lost.count(r.key) > 0;
      if (losing && !is_lost) return false;
      losing = is_lost;
    }
    return true;
  }

  std::unique_ptr<Env> base_env_;
  std::map<std::string, std::string> files_;  // the intact database
  KvMap model_;
  std::map<std::string, std::string> table_files_;  // without the WAL
  KvMap table_model_;
  std::vector<std::string> deleted_;
  std::array<std::vector<Span>, kNumRegions> regions_;
  std::string wal_name_;
  std::vector<WalRecord> wal_records_;
};

TEST_F(CorruptionSweepTest, RandomByteDamageIsDetectedNeverWrongData) {
  const int trials =
      LongMode()
          ? static_cast<int>(IntFromEnv("SIFT_CORRUPTION_TRIALS", 100000))
          : 10000;
#ifdef SIFT_KVTOOL_PATH
  const std::string kvtool = SIFT_KVTOOL_PATH;
  const int kvtool_every = trials / 70;
#else
  const std::string kvtool;
  const int kvtool_every = 0;
#endif
  ScratchDir scratch("sweep");
  Random rnd(static_cast<uint64_t>(IntFromEnv("SIFT_SEED", 99)));
  std::array<RegionStats, kNumRegions> stats;
  uint64_t reads = 0;
  uint64_t unchecked_reads = 0;
  const auto start = std::chrono::steady_clock::now();

  for (int trial = 0; trial < trials; ++trial) {
    const auto region = static_cast<Region>(rnd.Uniform(kNumRegions));
    const std::vector<Span>& spans = regions_[region];
    const Span& span = spans[rnd.Uniform(spans.size())];
    const uint64_t offset = span.begin + rnd.Uniform(span.end - span.begin);
    const uint8_t mask = rnd.OneIn(3)
                             ? static_cast<uint8_t>(1 + rnd.Uniform(255))
                             : static_cast<uint8_t>(1u << rnd.Uniform(8));
    const bool paranoid = rnd.OneIn(2);
    const std::string what = absl::StrFormat(
        "trial %d: %s byte %d of %s ^= 0x%02x%s", trial, kRegionNames[region],
        offset, span.file, mask, paranoid ? " (paranoid)" : "");
    RegionStats& st = stats[region];
    ++st.trials;

    const bool with_wal = region == kWal;
    const KvMap& model = with_wal ? model_ : table_model_;
    std::map<std::string, std::string> damaged =
        with_wal ? files_ : table_files_;
    damaged[span.file][offset] =
        static_cast<char>(damaged[span.file][offset] ^ mask);

    std::optional<uint64_t> look_alike;
    if (region == kWal || region == kManifest) {
      look_alike = TornTailLookAlike(files_[span.file], offset, mask);
      st.look_alikes += look_alike.has_value() ? 1 : 0;
    }

    // kvtool sees the damaged files before Open rewrites anything.
    bool kvtool_flagged = false;
    bool kvtool_ran = false;
    std::string kvtool_output;
    if (kvtool_every > 0 && trial % kvtool_every == 0) {
      const std::string dir = absl::StrCat(scratch.path(), "/db", trial);
      ASSERT_TRUE(WriteEnvDir(Env::Default(), dir, damaged).ok());
      const std::string out = dir + ".out";
      const int status = RunProgram({kvtool, "verify", dir}, out);
      ASSERT_TRUE(WIFEXITED(status)) << what << ": kvtool verify crashed ("
                                     << status << "): " << ReadDiskFile(out);
      ASSERT_TRUE(WEXITSTATUS(status) <= 1)
          << what << ": kvtool verify failed: " << ReadDiskFile(out);
      kvtool_ran = true;
      kvtool_flagged = WEXITSTATUS(status) == 1;
      ++st.kvtool_runs;
      st.kvtool_flagged += kvtool_flagged ? 1 : 0;
      kvtool_output = ReadDiskFile(out);
    }
    // Whatever damage the DB notices, kvtool verify must flag too. (kvtool
    // still takes a torn-tail look-alike for a torn tail: see
    // LogTailDamageTest.DISABLED_KvtoolFlagsLengthDamageInTheLastBlock.)
    auto expect_kvtool_flagged = [&](bool look_alike) {
      EXPECT_TRUE(!kvtool_ran || kvtool_flagged || look_alike)
          << what
          << ": kvtool verify did not flag the damage: " << kvtool_output;
    };

    std::unique_ptr<Env> env = NewMemEnv(Env::Default());
    ASSERT_TRUE(WriteEnvDir(env.get(), kDb, damaged).ok());
    Options options = BaseOptions(env.get());
    options.create_if_missing = false;
    options.paranoid_checks = paranoid;
    absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options, kDb);
    if (!db.ok()) {
      ASSERT_TRUE(absl::IsDataLoss(db.status()))
          << what << ": Open failed with something other than DataLoss: "
          << db.status();
      // Only a table, a MANIFEST or (paranoid) a WAL can fail Open.
      ASSERT_TRUE(region != kWal || paranoid) << what << ": " << db.status();
      ++st.open_failed;
      ++st.detected;
      expect_kvtool_flagged(look_alike.has_value());
      continue;
    }

    // Reads through Get.
    const std::set<std::string> may_lose =
        region == kWal ? MayLose(offset) : std::set<std::string>();
    bool data_loss = false;
    std::set<std::string> lost;
    // Point reads of a sample of the keys (the scan below reads them all),
    // and of every WAL key when the WAL is damaged.
    for (const auto& [key, value] : model) {
      if (!(with_wal && key[0] == 'w') && !rnd.OneIn(4)) continue;
      std::string got;
      const absl::Status s = (*db)->Get(ReadOptions(), key, &got);
      ++reads;
      if (s.ok()) {
        ASSERT_EQ(got, value) << what << ": wrong value for " << key;
      } else if (absl::IsDataLoss(s)) {
        ASSERT_TRUE(IsTableRegion(region) || region == kManifest)
            << what << ": " << key << ": " << s;
        data_loss = true;
      } else if (absl::IsNotFound(s) && may_lose.count(key) > 0) {
        lost.insert(key);
      } else {
        FAIL() << what << ": Get(" << key << "): " << s;
      }
    }
    for (const std::string& key : deleted_) {
      if (!rnd.OneIn(4)) continue;
      std::string got;
      const absl::Status s = (*db)->Get(ReadOptions(), key, &got);
      ++reads;
      ASSERT_TRUE(absl::IsNotFound(s) || absl::IsDataLoss(s))
          << what << ": deleted key " << key << " read as " << got << " (" << s
          << ")";
      data_loss |= absl::IsDataLoss(s);
    }

    // And through a full scan: right values in order; a complete scan unless
    // it ends in DataLoss.
    {
      std::unique_ptr<Iterator> it = (*db)->NewIterator(ReadOptions());
      auto expected = model.begin();
      for (it->SeekToFirst(); it->Valid(); it->Next()) {
        ++reads;
        while (expected != model.end() && expected->first < it->key() &&
               lost.count(expected->first) > 0) {
          ++expected;
        }
        ASSERT_TRUE(expected != model.end() && expected->first == it->key())
            << what << ": scan yields " << it->key() << ", expected "
            << (expected == model.end() ? "the end" : expected->first);
        ASSERT_EQ(it->value(), expected->second) << what << ": " << it->key();
        ++expected;
      }
      if (it->status().ok()) {
        while (expected != model.end() && lost.count(expected->first) > 0) {
          ++expected;
        }
        ASSERT_TRUE(expected == model.end())
            << what << ": scan ended early at " << expected->first;
      } else {
        ASSERT_TRUE(absl::IsDataLoss(it->status()))
            << what << ": " << it->status();
        data_loss = true;
      }
    }

    // Without checksums a damaged block may read as anything, but must not
    // crash or hang the reader.
    if (IsTableRegion(region) && rnd.OneIn(4)) {
      ReadOptions unchecked;
      unchecked.verify_checksums = false;
      unchecked.fill_cache = false;
      std::unique_ptr<Iterator> it = (*db)->NewIterator(unchecked);
      int n = 0;
      for (it->SeekToFirst(); it->Valid() && n < 10 * kTableKeys; it->Next()) {
        ++n;
      }
      for (int i = 0; i < kTableKeys; i += 7) {
        std::string got;
        (*db)->Get(unchecked, TableKey(i), &got).IgnoreError();
        ++unchecked_reads;
      }
      unchecked_reads += n;
    }

    if (IsTableRegion(region)) {
      // Every byte of a table is covered by a checksum, the magic number or
      // the format version, and every block is read above.
      ASSERT_TRUE(data_loss) << what << ": damage went unnoticed";
    }
    if (region == kWal) {
      st.lost_records += lost.size();
      ASSERT_TRUE(LostIsASuffix(lost))
          << what << ": a WAL record survives an earlier lost one";
      // Under paranoid_checks no damage loses records without failing Open.
      ASSERT_TRUE(lost.empty() || !paranoid)
          << what << ": lost " << lost.size() << " records without an error";
    }
    if (data_loss) {
      ++st.detected;
    } else if (lost.empty()) {
      ++st.harmless;
    }
    if (data_loss || !lost.empty())
      expect_kvtool_flagged(look_alike.has_value());
  }

  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::printf(
      "[ corruption ] %d trials, %llu checked reads, %llu unchecked "
      "reads (verify_checksums=false), %.1f s\n",
      trials, static_cast<unsigned long long>(reads),
      static_cast<unsigned long long>(unchecked_reads), seconds);
  for (int r = 0; r < kNumRegions; ++r) {
    const RegionStats& st = stats[r];
    std::printf(
        "[ corruption ]   %-10s trials %5llu: detected %5llu (open failed "
        "%llu), harmless %4llu, WAL records lost %llu, torn-tail look-alikes "
        "%llu; kvtool verify flagged %llu of "
        "%llu\n",
        kRegionNames[r], static_cast<unsigned long long>(st.trials),
        static_cast<unsigned long long>(st.detected),
        static_cast<unsigned long long>(st.open_failed),
        static_cast<unsigned long long>(st.harmless),
        static_cast<unsigned long long>(st.lost_records),
        static_cast<unsigned long long>(st.look_alikes),
        static_cast<unsigned long long>(st.kvtool_flagged),
        static_cast<unsigned long long>(st.kvtool_runs));
  }
}

}  // namespace
}  // namespace sift::reliability
