#ifndef SIFT_DB_DB_IMPL_H_
#define SIFT_DB_DB_IMPL_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "db/background.h"
#include "db/db_state.h"
#include "db/write_path.h"
#include "sift/db.h"

namespace sift {

// The engine behind sift::DB. It glues the parts together and serves reads:
//   - DBState (db_state.h): the shared state, its mutex and lock order;
//   - WritePath (write_path.h): group commit to the WAL and memtable;
//   - BackgroundWork (background.h): flushes and compactions;
//   - Recovery (recovery.h): what Open does before serving;
//   - the read side here: Get and NewIterator take references to the
//     memtables and the current version under the mutex, then read without
//     it, so readers never wait for flushes or compactions.
//
// Thread safety: as sift::DB.
class DBImpl final : public DB {
 public:
  // Open (or create) the database; see DB::Open.
  static absl::StatusOr<std::unique_ptr<DB>> OpenDB(const Options& options,
                                                    const std::string& dbname);

  ~DBImpl() override;

  absl::Status Put(const WriteOptions& options, std::string_view key,
                   std::string_view value) override;
  absl::Status Delete(const WriteOptions& options,
                      std::string_view key) override;
  absl::Status Write(const WriteOptions& options, WriteBatch* updates) override;
  absl::Status Get(const ReadOptions& options, std::string_view key,
                   std::string* value) override;
  std::vector<absl::Status> MultiGet(const ReadOptions& options,
                                     absl::Span<const std::string_view> keys,
                                     std::vector<std::string>* values) override;
  std::unique_ptr<Iterator> NewIterator(const ReadOptions& options) override;
  const Snapshot* GetSnapshot() override;
  void ReleaseSnapshot(const Snapshot* snapshot) override;
  absl::Status Flush() override;
  absl::Status CompactRange(const std::string* begin,
                            const std::string* end) override;
  ReadStats GetReadStats() const override;
  std::optional<std::string> GetProperty(std::string_view name) override;
  // Defined in db/ingest.cc.
  absl::Status IngestExternalFiles(const std::vector<std::string>& paths,
                                   const IngestOptions& options) override;
  // Defined in db/checkpoint.cc.
  absl::Status CreateCheckpoint(const std::string& dir) override;
  // Defined in db/approximate_sizes.cc.
  std::vector<uint64_t> GetApproximateSizes(
      std::span<const KeyRange> ranges) override;

 private:
  // REQUIRES: options are sanitized.
  DBImpl(const Options& options, std::string dbname);

  // The sequence a read with `options` reads at. Needs no lock.
  SequenceNumber ReadSequence(const ReadOptions& options) const;
  // Declared first: destroyed last, after the parts that point into it.
  DBState state_;
  BackgroundWork background_;
  WritePath write_path_;
  // The LOCK file, held from Open to destruction.
  std::unique_ptr<FileLock> db_lock_;
};

}  // namespace sift

#endif  // SIFT_DB_DB_IMPL_H_
