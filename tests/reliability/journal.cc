#include "tests/reliability/journal.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "util/coding.h"
#include "util/hash.h"

namespace sift::reliability {

namespace {

constexpr size_t kRecordHeader = 8;  // fixed32 length, fixed32 checksum

absl::Status ErrnoError(const std::string& what, const std::string& path) {
  return absl::InternalError(
      absl::StrCat(what, " ", path, ": ", std::strerror(errno)));
}

}  // namespace

absl::StatusOr<JournalWriter> JournalWriter::Open(const std::string& path,
                                                  bool fsync_each_record) {
  const int fd = ::open(
      path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoError("open", path);
  return JournalWriter(fd, path, fsync_each_record);
}

JournalWriter::JournalWriter(JournalWriter&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      path_(std::move(other.path_)),
      fsync_(other.fsync_) {}

JournalWriter::~JournalWriter() {
  if (fd_ >= 0) ::close(fd_);
}

absl::Status JournalWriter::LogIntent(const JournalOp& op) {
  std::string payload = "I";
  PutVarint64(&payload, op.id);
  payload.push_back(op.sync ? 1 : 0);
  PutVarint32(&payload, static_cast<uint32_t>(op.updates.size()));
  for (const JournalUpdate& u : op.updates) {
    payload.push_back(u.is_delete ? 'D' : 'P');
    PutLengthPrefixed(&payload, u.key);
    if (!u.is_delete) PutLengthPrefixed(&payload, u.value);
  }
  return WriteRecord(payload);
}

absl::Status JournalWriter::LogAck(uint64_t op_id) {
  std::string payload = "A";
  PutVarint64(&payload, op_id);
  return WriteRecord(payload);
}

absl::Status JournalWriter::WriteRecord(std::string_view payload) {
  std::string record;
  PutFixed32(&record, static_cast<uint32_t>(payload.size()));
  PutFixed32(&record, Checksum32(payload));
  record.append(payload);
  // One write(2) per record: a kill either leaves the whole record with the
  // operating system or cuts it short at the end of the file.
  size_t done = 0;
  while (done < record.size()) {
    const ssize_t n = ::write(fd_, record.data() + done, record.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError("write", path_);
    }
    done += static_cast<size_t>(n);
  }
  if (fsync_ && ::fdatasync(fd_) != 0) return ErrnoError("fdatasync", path_);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<JournalOp>> ParseJournal(std::string_view contents) {
  std::vector<JournalOp> ops;
  // Index of the unacknowledged intent, or kNone.
  constexpr size_t kNone = static_cast<size_t>(-1);
  size_t pending = kNone;
  uint64_t offset = 0;
  auto damage = [&offset](const std::string& why) {
    return absl::DataLossError(
        absl::StrCat("journal record at offset ", offset, ": ", why));
  };
  while (!contents.empty()) {
    if (contents.size() < kRecordHeader) break;  // torn header
    const uint32_t length = DecodeFixed32(contents.data());
    const uint32_t checksum = DecodeFixed32(contents.data() + 4);
    if (contents.size() - kRecordHeader < length) break;  // torn payload
    std::string_view payload = contents.substr(kRecordHeader, length);
    if (Checksum32(payload) != checksum) return damage("checksum mismatch");
    contents.remove_prefix(kRecordHeader + length);

    if (payload.empty()) return damage("empty payload");
    const char type = payload[0];
    payload.remove_prefix(1);
    uint64_t id = 0;
    if (!GetVarint64(&payload, &id)) return damage("bad op id");
    if (type == 'A') {
      if (pending == kNone || ops[pending].id != id || !payload.empty()) {
        return damage(absl::StrCat("ack of op ", id, " without its intent"));
      }
      ops[pending].acked = true;
      pending = kNone;
    } else if (type == 'I') {
      if (pending != kNone) {
        return damage(absl::StrCat("intent of op ", id, " while op ",
                                   ops[pending].id, " is unacknowledged"));
      }
      JournalOp op;
      op.id = id;
      uint32_t n = 0;
      if (payload.empty()) return damage("truncated intent");
      op.sync = payload[0] != 0;
      payload.remove_prefix(1);
      if (!GetVarint32(&payload, &n)) return damage("bad update count");
      for (uint32_t i = 0; i < n; ++i) {
        if (payload.empty()) return damage("truncated update");
        JournalUpdate u;
        u.is_delete = payload[0] == 'D';
        payload.remove_prefix(1);
        std::string_view key;
        std::string_view value;
        if (!GetLengthPrefixed(&payload, &key)) return damage("bad key");
        if (!u.is_delete && !GetLengthPrefixed(&payload, &value)) {
          return damage("bad value");
        }
        u.key = std::string(key);
        u.value = std::string(value);
        op.updates.push_back(std::move(u));
      }
      if (!payload.empty()) return damage("trailing bytes in intent");
      pending = ops.size();
      ops.push_back(std::move(op));
    } else {
      return damage("unknown record type");
    }
    offset += kRecordHeader + length;
  }
  return ops;
}

void ApplyOp(const JournalOp& op, KvMap* state) {
  for (const JournalUpdate& u : op.updates) {
    if (u.is_delete) {
      state->erase(u.key);
    } else {
      (*state)[u.key] = u.value;
    }
  }
}

}  // namespace sift::reliability
