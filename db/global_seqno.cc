#include "db/global_seqno.h"

#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "util/coding.h"

namespace sift {
namespace {

class GlobalSeqnoIterator final : public Iterator {
 public:
  GlobalSeqnoIterator(std::unique_ptr<Iterator> iter, SequenceNumber seqno)
      : iter_(std::move(iter)), seqno_(seqno) {}

  bool Valid() const override { return status_.ok() && iter_->Valid(); }
  void SeekToFirst() override {
    iter_->SeekToFirst();
    Update();
  }
  void SeekToLast() override {
    iter_->SeekToLast();
    Update();
  }
  void Seek(std::string_view target) override {
    // The stored entry of target's user key (sequence 0) is >= target, but
    // its rewritten key may be before it (target's sequence below seqno_):
    // then the first rewritten key >= target is the next entry.
    iter_->Seek(target);
    Update();
    if (Valid() && target.size() >= 8 &&
        ExtractUserKey(key_) == ExtractUserKey(target) &&
        DecodeFixed64(key_.data() + key_.size() - 8) >
            DecodeFixed64(target.data() + target.size() - 8)) {
      Next();
    }
  }
  void Next() override {
    iter_->Next();
    Update();
  }
  void Prev() override {
    iter_->Prev();
    Update();
  }
  std::string_view key() const override { return key_; }
  std::string_view value() const override { return iter_->value(); }
  absl::Status status() const override {
    return status_.ok() ? iter_->status() : status_;
  }

 private:
  // Rebuild key_ for the current entry.
  void Update() {
    if (!status_.ok() || !iter_->Valid()) return;
    ParsedInternalKey parsed;
    if (!ParseInternalKey(iter_->key(), &parsed)) {
      status_ =
          absl::DataLossError("ingested table holds a malformed internal key");
      return;
    }
    key_.clear();
    AppendInternalKey(&key_, parsed.user_key, seqno_, parsed.type);
  }

  const std::unique_ptr<Iterator> iter_;
  const SequenceNumber seqno_;
  std::string key_;
  absl::Status status_;
};

}  // namespace

std::unique_ptr<Iterator> NewGlobalSeqnoIterator(
    std::unique_ptr<Iterator> table_iter, SequenceNumber global_seqno) {
  return std::make_unique<GlobalSeqnoIterator>(std::move(table_iter),
                                               global_seqno);
}

std::unique_ptr<Iterator> NewTableFileIterator(TableCache* table_cache,
                                               const ReadOptions& options,
                                               const FileMetaData& file,
                                               ReadStats* stats,
                                               const TablePinHint* pin_hint) {
  std::unique_ptr<Iterator> iter =
      table_cache->NewIterator(options, file, stats, pin_hint);
  if (file.global_seqno == 0) return iter;
  return NewGlobalSeqnoIterator(std::move(iter), file.global_seqno);
}

}  // namespace sift
