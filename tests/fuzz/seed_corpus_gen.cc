// Writes the seed corpus of the fuzz targets: a few dozen small, valid
// inputs per target, made by the real encoders (block and table builders,
// filter builders, the log writer, VersionEdit::EncodeTo) plus random
// operation sequences. Deterministic: the same output on every run.
//
//   fuzz_seed_corpus_gen OUT_DIR   (writes OUT_DIR/<target>/seed-NNN)
//
// The committed corpus in tests/fuzz/corpus/ came from this program (and
// may be extended with inputs found by fuzzing sessions).

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_format.h"
#include "db/dbformat.h"
#include "db/log_writer.h"
#include "db/version_edit.h"
#include "db/write_batch_internal.h"
#include "filter/filter.h"
#include "filter/filter_format.h"
#include "filter/fuse_filter.h"
#include "sift/env.h"
#include "sift/write_batch.h"
#include "table/block_builder.h"
#include "table/compression.h"
#include "table/format.h"
#include "table/table_builder.h"
#include "table/table_options.h"
#include "util/random.h"

namespace sift::fuzz {
namespace {

// A WritableFile appending to a string.
class StringFile final : public WritableFile {
 public:
  absl::Status Append(std::string_view data) override {
    contents.append(data);
    return absl::OkStatus();
  }
  absl::Status Flush() override { return absl::OkStatus(); }
  absl::Status Sync() override { return absl::OkStatus(); }
  absl::Status Close() override { return absl::OkStatus(); }
  std::string contents;
};

class CorpusWriter {
 public:
  CorpusWriter(std::filesystem::path root, std::string target)
      : dir_(root / target) {
    std::filesystem::create_directories(dir_);
  }
  void Add(uint8_t mode, std::string_view body) {
    std::string data(1, static_cast<char>(mode));
    data.append(body);
    AddRaw(data);
  }
  void AddRaw(std::string_view data) {
    std::ofstream out(dir_ / absl::StrFormat("seed-%03d", n_++),
                      std::ios::binary);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
  }

 private:
  std::filesystem::path dir_;
  int n_ = 0;
};

std::string Key(Random* rnd, int i) {
  std::string k = absl::StrFormat("key%06d", i);
  if (rnd->OneIn(3)) k.append(rnd->Uniform(12), 's');
  return k;
}

std::string Value(Random* rnd) {
  std::string v;
  const size_t len = rnd->Uniform(40);
  const bool repetitive = rnd->OneIn(2);
  for (size_t i = 0; i < len; ++i) {
    v.push_back(repetitive ? 'r' : static_cast<char>('a' + rnd->Uniform(26)));
  }
  return v;
}

void Blocks(const std::filesystem::path& root) {
  CorpusWriter out(root, "block");
  Random rnd(1);
  for (int i = 0; i < 32; ++i) {
    BlockBuilder builder(1 + static_cast<int>(rnd.Uniform(16)));
    const int n = static_cast<int>(rnd.Uniform(i < 4 ? 2 : 40));
    for (int k = 0; k < n; ++k) builder.Add(Key(&rnd, k * 3), Value(&rnd));
    const std::string raw(builder.Finish());
    if (i % 2 == 0) {
      out.Add(0, raw);
    } else {
      std::string compressed;
      const BlockCompression type =
          CompressBlock(Compression::kSnappy, raw, &compressed);
      std::string stored;
      AppendStoredBlock(type == BlockCompression::kSnappy ? compressed : raw,
                        type, &stored);
      out.Add(1, stored);
    }
  }
}

void Tables(const std::filesystem::path& root) {
  CorpusWriter out(root, "table");
  Random rnd(2);
  for (int i = 0; i < 24; ++i) {
    TableOptions options;
    options.block_size = 64 + rnd.Uniform(512);
    options.block_restart_interval = 1 + static_cast<int>(rnd.Uniform(8));
    options.compression =
        rnd.OneIn(2) ? Compression::kSnappy : Compression::kNone;
    options.filter_bits_per_key = rnd.OneIn(4) ? 0.0 : 4.0 + rnd.Uniform(8);
    options.filter_kind =
        rnd.OneIn(2) ? FilterKind::kBlockedBloom : FilterKind::kStandardBloom;
    StringFile file;
    TableBuilder builder(options, &file);
    const int n = static_cast<int>(rnd.Uniform(i < 3 ? 2 : 60));
    for (int k = 0; k < n; ++k) builder.Add(Key(&rnd, k * 2), Value(&rnd));
    if (!builder.Finish().ok()) continue;
    out.Add(static_cast<uint8_t>(i % 4), file.contents);
  }
}

void Filters(const std::filesystem::path& root) {
  CorpusWriter out(root, "filter");
  Random rnd(3);
  for (int i = 0; i < 30; ++i) {
    const FilterKind kind =
        i % 2 == 0 ? FilterKind::kBlockedBloom : FilterKind::kStandardBloom;
    std::unique_ptr<FilterBuilder> builder =
        FilterBuilder::Make(kind, 1.0 + static_cast<double>(rnd.Uniform(20)));
    const int n = static_cast<int>(rnd.Uniform(i < 4 ? 2 : 200));
    for (int k = 0; k < n; ++k) builder->AddKey(Key(&rnd, k));
    out.Add(static_cast<uint8_t>(i % 3 == 0), builder->Finish());
  }
  // Binary fuse filters after the Bloom ones (which keep their names), at
  // widths 1..32 and sizes from empty to a few segments: first 3-wise ones
  // (format version 1, which tables written before version 2 hold; these
  // keep their names and bytes), then 4-wise ones (version 2, what writers
  // produce now).
  constexpr uint32_t kFirstWidths[] = {8, 16, 1, 32, 3, 12, 8, 16};
  for (uint32_t version : {kFuseFormatVersionV1, kFuseFormatVersion}) {
    Random fuse_rnd(version == kFuseFormatVersionV1 ? 7 : 9);
    for (int i = 0; i < 24; ++i) {
      const uint32_t w = i < 8 ? kFirstWidths[i] : 1 + fuse_rnd.Uniform(32);
      // A budget that buys about w bits a fingerprint at large n.
      const double slots_per_key = version == kFuseFormatVersionV1
                                       ? kFuseLargeSizeFactorV1
                                       : kFuseLargeSizeFactor;
      std::unique_ptr<FilterBuilder> builder = NewFuseFilterBuilderForBudget(
          slots_per_key * w, kDefaultFilterSeed, version);
      const int n = static_cast<int>(i < 4 ? i : fuse_rnd.Uniform(300));
      for (int k = 0; k < n; ++k) builder->AddKey(Key(&fuse_rnd, k));
      out.Add(static_cast<uint8_t>(i % 3 == 0), builder->Finish());
    }
  }
}

// Key sets for the fuse construction target: a width/seed byte, then keys
// as a length byte and the bytes, one in eight a repeat of an earlier key.
void FuseKeySets(const std::filesystem::path& root) {
  CorpusWriter out(root, "fuse");
  Random rnd(8);
  for (int i = 0; i < 24; ++i) {
    std::string data(1, static_cast<char>(rnd.Uniform(256)));
    const int n = static_cast<int>(i < 3 ? i : rnd.Uniform(i < 20 ? 60 : 600));
    std::vector<std::string> keys;
    for (int k = 0; k < n; ++k) {
      keys.push_back(k > 0 && rnd.OneIn(8) ? keys[rnd.Uniform(k)]
                                           : Key(&rnd, k));
      data.push_back(static_cast<char>(keys.back().size()));
      data.append(keys.back());
    }
    out.AddRaw(data);
  }
}

void Logs(const std::filesystem::path& root) {
  CorpusWriter out(root, "wal");
  Random rnd(4);
  SequenceNumber seq = 1;
  for (int i = 0; i < 30; ++i) {
    StringFile file;
    log::Writer writer(&file);
    const int records = static_cast<int>(rnd.Uniform(12));
    for (int r = 0; r < records; ++r) {
      WriteBatch batch;
      const int n = 1 + static_cast<int>(rnd.Uniform(5));
      for (int k = 0; k < n; ++k) {
        if (rnd.OneIn(4)) {
          batch.Delete(Key(&rnd, static_cast<int>(rnd.Uniform(100))));
        } else {
          batch.Put(Key(&rnd, static_cast<int>(rnd.Uniform(100))), Value(&rnd));
        }
      }
      WriteBatchInternal::SetSequence(&batch, seq);
      seq += n;
      if (!writer.AddRecord(WriteBatchInternal::Contents(&batch)).ok()) return;
    }
    if (i >= 28) {
      // Two logs with a record fragmented over a block boundary.
      const std::string big(log::kBlockSize + 1000, 'b');
      WriteBatch batch;
      batch.Put("big", big);
      if (!writer.AddRecord(WriteBatchInternal::Contents(&batch)).ok()) return;
    }
    const uint8_t mode = static_cast<uint8_t>((i % 2) | ((i % 5 == 0) << 1));
    out.Add(mode, file.contents);
  }
}

void Edits(const std::filesystem::path& root) {
  CorpusWriter out(root, "manifest");
  Random rnd(5);
  for (int i = 0; i < 30; ++i) {
    VersionEdit edit;
    if (rnd.OneIn(2)) edit.SetComparatorName("sift.BytewiseComparator");
    if (rnd.OneIn(2)) edit.SetLogNumber(rnd.Uniform(1000));
    if (rnd.OneIn(2)) edit.SetNextFile(rnd.Uniform(100000));
    if (rnd.OneIn(2)) edit.SetLastSequence(rnd.Uniform(1 << 30));
    const int files = static_cast<int>(rnd.Uniform(6));
    for (int f = 0; f < files; ++f) {
      FileMetaData meta;
      meta.number = 1 + rnd.Uniform(500);
      meta.file_size = rnd.Uniform(1 << 22);
      meta.smallest =
          InternalKey(Key(&rnd, f * 10), 1 + rnd.Uniform(100), kTypeValue);
      meta.largest = InternalKey(Key(&rnd, f * 10 + 5), 1 + rnd.Uniform(100),
                                 kTypeDeletion);
      edit.AddFile(static_cast<int>(rnd.Uniform(7)), meta);
    }
    const int deleted = static_cast<int>(rnd.Uniform(4));
    for (int d = 0; d < deleted; ++d) {
      edit.RemoveFile(static_cast<int>(rnd.Uniform(7)), 1 + rnd.Uniform(500));
    }
    if (rnd.OneIn(3)) {
      edit.SetCompactPointer(static_cast<int>(rnd.Uniform(7)),
                             InternalKey(Key(&rnd, 7), 9, kTypeValue));
    }
    std::string encoded;
    edit.EncodeTo(&encoded);
    out.AddRaw(encoded);
  }
}

void OpSequences(const std::filesystem::path& root) {
  CorpusWriter out(root, "db_ops");
  Random rnd(6);
  for (int i = 0; i < 30; ++i) {
    std::string ops;
    const size_t len = 20 + rnd.Uniform(i < 25 ? 300 : 2000);
    for (size_t k = 0; k < len; ++k) {
      // Mostly writes, so that tables form; bytes double as arguments.
      ops.push_back(
          static_cast<char>(rnd.OneIn(2) ? rnd.Uniform(4) : rnd.Uniform(256)));
    }
    out.AddRaw(ops);
  }
}

}  // namespace
}  // namespace sift::fuzz

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 2;
  }
  const std::filesystem::path root(argv[1]);
  sift::fuzz::Blocks(root);
  sift::fuzz::Tables(root);
  sift::fuzz::Filters(root);
  sift::fuzz::FuseKeySets(root);
  sift::fuzz::Logs(root);
  sift::fuzz::Edits(root);
  sift::fuzz::OpSequences(root);
  return 0;
}
