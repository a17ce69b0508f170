// Env::Default(): files through POSIX system calls, one background thread,
// the steady clock.

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "sift/env.h"
#include "util/mutex.h"

namespace sift {
namespace {

constexpr size_t kWritableBufferSize = 64 << 10;

// strerror_r comes in two flavours (XSI returns int, GNU returns char*);
// overloads pick the right way to read the result.
[[maybe_unused]] const char* StrErrorResult(int rc, const char* buf) {
  return rc == 0 ? buf : "Unknown error";
}
[[maybe_unused]] const char* StrErrorResult(const char* msg, const char*) {
  return msg;
}

std::string ErrnoMessage(int err) {
  char buf[256];
  buf[0] = '\0';
  return StrErrorResult(strerror_r(err, buf, sizeof(buf)), buf);
}

// "<context>: <OS message>" with the code the Env contract gives `err`.
// `context` names the file (and the operation where that helps).
absl::Status PosixError(std::string_view context, int err) {
  std::string msg =
      absl::StrCat(absl::string_view(context.data(), context.size()), ": ",
                   ErrnoMessage(err));
  switch (err) {
    case ENOENT:
      return absl::NotFoundError(msg);
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(msg);
    case ENOSPC:
      return absl::UnavailableError(msg);  // "No space left on device"
    default:
      return absl::InternalError(msg);
  }
}

// Run a system call until it is not interrupted by a signal.
template <typename F>
auto RetryOnEintr(F call) {
  for (;;) {
    auto r = call();
    if (r != -1 || errno != EINTR) return r;
  }
}

int CloseFd(int fd) {
  // close() must not be retried on EINTR on Linux: the descriptor is gone.
  return ::close(fd);
}

class PosixSequentialFile final : public SequentialFile {
 public:
  PosixSequentialFile(std::string fname, int fd)
      : fname_(std::move(fname)), fd_(fd) {}
  ~PosixSequentialFile() override { CloseFd(fd_); }

  absl::Status Read(size_t n, std::string_view* result,
                    char* scratch) override {
    size_t got = 0;
    while (got < n) {
      const ssize_t r =
          RetryOnEintr([&] { return ::read(fd_, scratch + got, n - got); });
      if (r < 0) {
        *result = std::string_view();
        return PosixError(fname_, errno);
      }
      if (r == 0) break;  // end of file
      got += static_cast<size_t>(r);
    }
    *result = std::string_view(scratch, got);
    return absl::OkStatus();
  }

  absl::Status Skip(uint64_t n) override {
    // Seeking past the end is allowed; later reads then see end of file.
    if (::lseek(fd_, static_cast<off_t>(n), SEEK_CUR) ==
        static_cast<off_t>(-1)) {
      return PosixError(fname_, errno);
    }
    return absl::OkStatus();
  }

 private:
  const std::string fname_;
  const int fd_;
};

class PosixRandomAccessFile final : public RandomAccessFile {
 public:
  PosixRandomAccessFile(std::string fname, int fd)
      : fname_(std::move(fname)), fd_(fd) {}
  ~PosixRandomAccessFile() override { CloseFd(fd_); }

  absl::Status Read(uint64_t offset, size_t n, std::string_view* result,
                    char* scratch) const override {
    size_t got = 0;
    while (got < n) {
      const ssize_t r = RetryOnEintr([&] {
        return ::pread(fd_, scratch + got, n - got,
                       static_cast<off_t>(offset + got));
      });
      if (r < 0) {
        *result = std::string_view();
        return PosixError(fname_, errno);
      }
      if (r == 0) break;  // end of file
      got += static_cast<size_t>(r);
    }
    *result = std::string_view(scratch, got);
    return absl::OkStatus();
  }

 private:
  const std::string fname_;
  const int fd_;
};

// Direct reads must start at, and cover a length of, a multiple of the
// device's logical block size (512 or 4096 bytes on Linux) into memory aligned
// the same way. 4096 is a multiple of every logical block size in use, so it
// is safe on any device without asking it (BLKSSZGET needs the device node).
constexpr size_t kDirectAlignment = 4096;

struct FreeDeleter {
  void operator()(char* p) const { std::free(p); }
};

// A table file opened with O_DIRECT: each Read is one aligned pread from the
// device into a buffer of its own, then the requested bytes are copied out.
// Reads never touch (or fill) the page cache, so what the engine caches is
// all that is cached.
class PosixDirectFile final : public RandomAccessFile {
 public:
  PosixDirectFile(std::string fname, int fd)
      : fname_(std::move(fname)), fd_(fd) {}
  ~PosixDirectFile() override { CloseFd(fd_); }

  absl::Status Read(uint64_t offset, size_t n, std::string_view* result,
                    char* scratch) const override {
    *result = std::string_view();
    if (n == 0) return absl::OkStatus();
    if (offset % kDirectAlignment == 0 && n % kDirectAlignment == 0 &&
        reinterpret_cast<uintptr_t>(scratch) % kDirectAlignment == 0) {
      // An aligned request (a table iterator's readahead window) is read
      // straight into the caller's buffer.
      size_t got = 0;
      absl::Status s = ReadAligned(offset, n, scratch, &got);
      if (!s.ok()) return s;
      *result = std::string_view(scratch, got);
      return absl::OkStatus();
    }
    // [start, start + span) is the aligned range covering [offset, offset+n).
    const uint64_t start = offset & ~uint64_t{kDirectAlignment - 1};
    const size_t head = static_cast<size_t>(offset - start);
    const size_t span =
        (head + n + kDirectAlignment - 1) & ~size_t{kDirectAlignment - 1};
    void* raw = nullptr;
    if (const int err = ::posix_memalign(&raw, kDirectAlignment, span);
        err != 0) {
      return PosixError(
          absl::StrCat(fname_, ": direct-read buffer of ", span, " bytes"),
          err);
    }
    const std::unique_ptr<char, FreeDeleter> buf(static_cast<char*>(raw));
    size_t got = 0;
    absl::Status s = ReadAligned(start, span, buf.get(), &got);
    if (!s.ok()) return s;
    const size_t available = got > head ? std::min(n, got - head) : 0;
    std::memcpy(scratch, buf.get() + head, available);
    *result = std::string_view(scratch, available);
    return absl::OkStatus();
  }

 private:
  // Reads [offset, offset + span) into dst, all three aligned; *got is the
  // bytes read, fewer than span only at end of file.
  absl::Status ReadAligned(uint64_t offset, size_t span, char* dst,
                           size_t* got) const {
    *got = 0;
    // A read stops short only at end of file, which need not be aligned: the
    // next read would then start unaligned, so stop there.
    while (*got < span && *got % kDirectAlignment == 0) {
      const ssize_t r = RetryOnEintr([&] {
        return ::pread(fd_, dst + *got, span - *got,
                       static_cast<off_t>(offset + *got));
      });
      if (r < 0) return DirectReadError(errno);
      if (r == 0) break;  // end of file
      *got += static_cast<size_t>(r);
    }
    return absl::OkStatus();
  }

  absl::Status DirectReadError(int err) const {
    if (err == EINVAL) {
      return absl::InvalidArgumentError(
          absl::StrCat(fname_,
                       ": the file system refuses an O_DIRECT read "
                       "(Options::use_direct_reads): ",
                       ErrnoMessage(err)));
    }
    return PosixError(fname_, err);
  }

  const std::string fname_;
  const int fd_;
};

// Maps made by the POSIX Env at once, at most: a table file keeps its map
// while open, and the kernel allows about 65,000 maps per process. Past the
// limit files are read with pread. 32-bit builds never map (address space).
constexpr int kMaxMmaps = sizeof(void*) >= 8 ? 16384 : 0;
std::atomic<int> mmaps_in_use{0};

// A whole file mapped read-only: Read returns views into the map (the page
// cache), with no system call and no copy.
class PosixMmapFile final : public RandomAccessFile {
 public:
  // Takes one of the kMaxMmaps places; gives it back when destroyed.
  PosixMmapFile(const char* base, size_t length)
      : base_(base), length_(length) {}
  ~PosixMmapFile() override {
    if (length_ > 0) ::munmap(const_cast<char*>(base_), length_);
    mmaps_in_use.fetch_sub(1, std::memory_order_relaxed);
  }

  absl::Status Read(uint64_t offset, size_t n, std::string_view* result,
                    char* /*scratch*/) const override {
    if (offset >= length_) {
      *result = std::string_view();
    } else {
      *result = std::string_view(base_ + offset,
                                 std::min<uint64_t>(n, length_ - offset));
    }
    return absl::OkStatus();
  }
  bool StableReads() const override { return true; }

 private:
  const char* const base_;
  const size_t length_;
};

// Appends collect in a 64 KiB buffer and reach the kernel on Flush, on Sync,
// on Close, or when the buffer fills; an append larger than the buffer is
// written directly.
class PosixWritableFile final : public WritableFile {
 public:
  PosixWritableFile(std::string fname, int fd)
      : fname_(std::move(fname)),
        fd_(fd),
        buf_(std::make_unique_for_overwrite<char[]>(kWritableBufferSize)) {}

  ~PosixWritableFile() override {
    if (fd_ >= 0) {
      // The owner dropped the file without Close: nobody is left to report a
      // failure to, and losing unsynced data is within the contract.
      Close().IgnoreError();
    }
  }

  absl::Status Append(std::string_view data) override {
    if (fd_ < 0) return ClosedError();
    const size_t room = kWritableBufferSize - used_;
    if (data.size() <= room) {
      std::memcpy(buf_.get() + used_, data.data(), data.size());
      used_ += data.size();
      return absl::OkStatus();
    }
    // Top up the buffer, write it out, then buffer or write the rest.
    std::memcpy(buf_.get() + used_, data.data(), room);
    used_ += room;
    data.remove_prefix(room);
    if (absl::Status s = FlushBuffer(); !s.ok()) return s;
    if (data.size() < kWritableBufferSize) {
      std::memcpy(buf_.get(), data.data(), data.size());
      used_ = data.size();
      return absl::OkStatus();
    }
    return WriteAll(data);
  }

  absl::Status Flush() override {
    if (fd_ < 0) return ClosedError();
    return FlushBuffer();
  }

  absl::Status Sync() override {
    if (fd_ < 0) return ClosedError();
    if (absl::Status s = FlushBuffer(); !s.ok()) return s;
    if (RetryOnEintr([&] { return ::fdatasync(fd_); }) != 0) {
      return PosixError(absl::StrCat("fdatasync ", fname_), errno);
    }
    return absl::OkStatus();
  }

  absl::Status Close() override {
    if (fd_ < 0) return ClosedError();
    absl::Status s = FlushBuffer();
    if (CloseFd(fd_) != 0 && s.ok()) s = PosixError(fname_, errno);
    fd_ = -1;
    return s;
  }

 private:
  absl::Status ClosedError() const {
    return absl::FailedPreconditionError(
        absl::StrCat(fname_, ": file is already closed"));
  }

  absl::Status FlushBuffer() {
    absl::Status s = WriteAll(std::string_view(buf_.get(), used_));
    // Whatever happened, the buffer's bytes are not retried: a failed write
    // leaves the file in an unknown state that the caller must handle.
    used_ = 0;
    return s;
  }

  absl::Status WriteAll(std::string_view data) {
    while (!data.empty()) {
      const ssize_t r =
          RetryOnEintr([&] { return ::write(fd_, data.data(), data.size()); });
      if (r < 0) return PosixError(fname_, errno);
      data.remove_prefix(static_cast<size_t>(r));
    }
    return absl::OkStatus();
  }

  const std::string fname_;
  int fd_;  // -1 once closed
  std::unique_ptr<char[]> buf_;
  size_t used_ = 0;
};

// A write-ahead log written through a shared mapping of space reserved
// ahead (Env::NewLogFile): an Append is a copy into the page cache, with no
// system call, and survives the process as a write() would. Invariants:
// [map_offset_, map_offset_ + map_length_) is mapped (map_ == nullptr: no
// window yet), map_offset_ is a multiple of the page size, and the file's
// blocks are reserved (posix_fallocate) up to reserved_ >= the window's end,
// so a store into the window never meets a full disk (which would raise
// SIGBUS); size_ bytes have been appended, all inside the reserved space.
// Close unmaps and trims the file to size_.
class PosixMappedLogFile final : public WritableFile {
 public:
  PosixMappedLogFile(std::string fname, int fd)
      : fname_(std::move(fname)), fd_(fd) {}

  ~PosixMappedLogFile() override {
    if (fd_ >= 0) Close().IgnoreError();  // as PosixWritableFile
  }

  absl::Status Append(std::string_view data) override {
    if (fd_ < 0) return ClosedError();
    // A whole Append in one window (a log fragment is at most one 32 KiB
    // block), plus room for the 8-byte store of a shorter one.
    const size_t n = data.size();
    if (absl::Status s = EnsureRoom(std::max<size_t>(n, 8)); !s.ok()) return s;
    char* dst = map_ + (size_ - map_offset_);
    // The first 8 bytes last, in one store: a crash before it leaves them
    // zero (never-written space), so a log fragment is either whole or has a
    // zero header. Bytes past an Append shorter than 8 are still unwritten
    // space and stay zero.
    uint64_t head = 0;
    if (n > 0) std::memcpy(&head, data.data(), std::min<size_t>(n, 8));
    if (n > 8) std::memcpy(dst + 8, data.data() + 8, n - 8);
    // Keeps the compiler from moving the head's store before the copy. A
    // killed process loses no store that retired, and stores retire in
    // program order, so no fence for the processor is needed.
    std::atomic_signal_fence(std::memory_order_seq_cst);
    std::memcpy(dst, &head, 8);
    size_ += n;
    return absl::OkStatus();
  }

  // Map the first window. An error (a file system that cannot map or
  // reserve) means the file should be written with write() instead.
  absl::Status Prepare() { return EnsureRoom(kFirstWindow); }

  absl::Status Flush() override {
    // Appended bytes are in the page cache already.
    return fd_ < 0 ? ClosedError() : absl::OkStatus();
  }

  absl::Status Sync() override {
    if (fd_ < 0) return ClosedError();
    // Writes back the file's dirty pages, those written through the mapping
    // included (Linux marks a shared mapping's page dirty when it is
    // written), and the reserved size.
    if (RetryOnEintr([&] { return ::fdatasync(fd_); }) != 0) {
      return PosixError(absl::StrCat("fdatasync ", fname_), errno);
    }
    return absl::OkStatus();
  }

  absl::Status Close() override {
    if (fd_ < 0) return ClosedError();
    absl::Status s = Unmap();
    if (RetryOnEintr(
            [&] { return ::ftruncate(fd_, static_cast<off_t>(size_)); }) != 0 &&
        s.ok()) {
      s = PosixError(absl::StrCat("ftruncate ", fname_), errno);
    }
    if (CloseFd(fd_) != 0 && s.ok()) s = PosixError(fname_, errno);
    fd_ = -1;
    return s;
  }

 private:
  // Windows grow from 64 KiB to 1 MiB, so a log that stays small (tests, a
  // small write buffer) reserves little.
  static constexpr size_t kFirstWindow = size_t{64} << 10;
  static constexpr size_t kMaxWindow = size_t{1} << 20;

  absl::Status ClosedError() const {
    return absl::FailedPreconditionError(
        absl::StrCat(fname_, ": file is already closed"));
  }

  absl::Status Unmap() {
    if (map_ == nullptr) return absl::OkStatus();
    const int r = ::munmap(map_, map_length_);
    map_ = nullptr;
    if (r != 0) return PosixError(absl::StrCat("munmap ", fname_), errno);
    return absl::OkStatus();
  }

  // Make [size_, size_ + n) part of the mapped window.
  absl::Status EnsureRoom(size_t n) {
    if (map_ != nullptr && size_ + n <= map_offset_ + map_length_) {
      return absl::OkStatus();
    }
    if (absl::Status s = Unmap(); !s.ok()) return s;
    static const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    const uint64_t offset = size_ / page * page;
    size_t length =
        map_length_ == 0 ? kFirstWindow : std::min(map_length_ * 2, kMaxWindow);
    const size_t needed = (size_ - offset) + n;
    length = std::max(length, (needed + page - 1) / page * page);
    if (offset + length > reserved_) {
      // posix_fallocate returns the error instead of setting errno.
      const int err =
          ::posix_fallocate(fd_, static_cast<off_t>(reserved_),
                            static_cast<off_t>(offset + length - reserved_));
      if (err != 0) {
        return PosixError(absl::StrCat("posix_fallocate ", fname_), err);
      }
      reserved_ = offset + length;
    }
    void* base = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED,
                        fd_, static_cast<off_t>(offset));
    if (base == MAP_FAILED) {
      return PosixError(absl::StrCat("mmap ", fname_), errno);
    }
    map_ = static_cast<char*>(base);
    map_offset_ = offset;
    map_length_ = length;
    return absl::OkStatus();
  }

  const std::string fname_;
  int fd_;  // -1 once closed
  char* map_ = nullptr;
  uint64_t map_offset_ = 0;
  size_t map_length_ = 0;  // the last window's length, 0 before the first
  uint64_t reserved_ = 0;
  uint64_t size_ = 0;
};

// Set or clear a whole-file write lock owned by the open file description of
// `fd` (F_OFD_SETLK, Linux 3.15+). Unlike classic fcntl record locks, which
// belong to the process, these conflict between two opens of the same file
// within one process, whatever path named it (the kernel identifies the file
// by its inode), and closing some other descriptor of the file does not drop
// them. They also conflict with classic fcntl locks of other processes. A
// child forked without exec shares the description, and so the lock, until
// it exits (the descriptor is O_CLOEXEC). Returns 0 or -1 with errno set.
int SetWholeFileLock(int fd, short type) {
  struct flock f = {};
  f.l_type = type;
  f.l_whence = SEEK_SET;  // l_start = l_len = 0: the whole file
  f.l_pid = 0;            // required by F_OFD_SETLK
  return RetryOnEintr([&] { return ::fcntl(fd, F_OFD_SETLK, &f); });
}

// Holds the lock until released; a lock dropped without UnlockFile is
// released by its destructor so the file does not stay locked forever.
class PosixFileLock final : public FileLock {
 public:
  PosixFileLock(std::string fname, int fd)
      : fname_(std::move(fname)), fd_(fd) {}
  ~PosixFileLock() override {
    if (fd_ >= 0) Release().IgnoreError();
  }

  absl::Status Release() {
    absl::Status s;
    if (SetWholeFileLock(fd_, F_UNLCK) != 0) {
      s = PosixError(absl::StrCat("unlock ", fname_), errno);
    }
    // Closing the only descriptor of the description releases the lock even
    // if the explicit unlock failed.
    CloseFd(fd_);
    fd_ = -1;
    return s;
  }

 private:
  const std::string fname_;
  int fd_;
};

// Runs scheduled work on one thread, in order. The thread starts with the
// first Schedule and is never joined: Env::Default() lives for the process.
class BackgroundThread {
 public:
  void Schedule(std::function<void()> work) {
    MutexLock lock(&mu_);
    if (!started_) {
      started_ = true;
      std::thread([this] { Run(); }).detach();
    }
    queue_.push_back(std::move(work));
    work_ready_.Signal();
  }

 private:
  [[noreturn]] void Run() {
    for (;;) {
      std::function<void()> work;
      {
        MutexLock lock(&mu_);
        while (queue_.empty()) work_ready_.Wait(&mu_);
        work = std::move(queue_.front());
        queue_.pop_front();
      }
      work();
    }
  }

  Mutex mu_;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  CondVar work_ready_;
  std::deque<std::function<void()>> queue_ ABSL_GUARDED_BY(mu_);
};

class PosixEnv final : public Env {
 public:
  absl::StatusOr<std::unique_ptr<SequentialFile>> NewSequentialFile(
      const std::string& fname) override {
    const int fd = RetryOnEintr(
        [&] { return ::open(fname.c_str(), O_RDONLY | O_CLOEXEC); });
    if (fd < 0) return PosixError(fname, errno);
    return std::make_unique<PosixSequentialFile>(fname, fd);
  }

  absl::StatusOr<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(
      const std::string& fname) override {
    const int fd = RetryOnEintr(
        [&] { return ::open(fname.c_str(), O_RDONLY | O_CLOEXEC); });
    if (fd < 0) return PosixError(fname, errno);
    return std::make_unique<PosixRandomAccessFile>(fname, fd);
  }

  absl::StatusOr<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(
      const std::string& fname, RandomAccessMode mode) override {
    if (mode == RandomAccessMode::kDirect) return NewDirectFile(fname);
    if (mode != RandomAccessMode::kMemoryMapped) {
      return NewRandomAccessFile(fname);
    }
    if (mmaps_in_use.fetch_add(1, std::memory_order_relaxed) >= kMaxMmaps) {
      mmaps_in_use.fetch_sub(1, std::memory_order_relaxed);
      return NewRandomAccessFile(fname);
    }
    const int fd = RetryOnEintr(
        [&] { return ::open(fname.c_str(), O_RDONLY | O_CLOEXEC); });
    if (fd < 0) {
      mmaps_in_use.fetch_sub(1, std::memory_order_relaxed);
      return PosixError(fname, errno);
    }
    struct ::stat st;
    void* base = MAP_FAILED;
    size_t length = 0;
    if (::fstat(fd, &st) == 0) {
      length = static_cast<size_t>(st.st_size);
      base = length == 0
                 ? nullptr  // nothing to map; reads see end of file
                 : ::mmap(nullptr, length, PROT_READ, MAP_SHARED, fd, 0);
    }
    if (base == MAP_FAILED) {
      // No map to be had (or no size): the file is still readable.
      mmaps_in_use.fetch_sub(1, std::memory_order_relaxed);
      return std::make_unique<PosixRandomAccessFile>(fname, fd);
    }
    CloseFd(fd);  // the map keeps the file's pages reachable
    return std::make_unique<PosixMmapFile>(static_cast<const char*>(base),
                                           length);
  }

  absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(
      const std::string& fname) override {
    return OpenForWrite(fname, O_TRUNC);
  }

  absl::StatusOr<std::unique_ptr<WritableFile>> NewAppendableFile(
      const std::string& fname) override {
    return OpenForWrite(fname, O_APPEND);
  }

  absl::StatusOr<std::unique_ptr<WritableFile>> NewLogFile(
      const std::string& fname) override {
    // O_RDWR: a shared writable mapping needs a descriptor open for reading.
    const int fd = RetryOnEintr([&] {
      return ::open(fname.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC,
                    0644);
    });
    if (fd < 0) return PosixError(fname, errno);
    auto mapped = std::make_unique<PosixMappedLogFile>(fname, fd);
    if (mapped->Prepare().ok()) return mapped;
    // No mapping to be had here: the same file through write(). Closing the
    // mapped one trims what it reserved.
    if (absl::Status s = mapped->Close(); !s.ok()) return s;
    return OpenForWrite(fname, O_TRUNC);
  }

  bool FileExists(const std::string& fname) override {
    return ::access(fname.c_str(), F_OK) == 0;
  }

  absl::StatusOr<std::vector<std::string>> GetChildren(
      const std::string& dir) override {
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return PosixError(dir, errno);
    std::vector<std::string> names;
    errno = 0;
    while (const struct dirent* entry = ::readdir(d)) {
      const std::string_view name(entry->d_name);
      if (name != "." && name != "..") names.emplace_back(name);
    }
    const int err = errno;  // readdir returns nullptr at the end and on error
    ::closedir(d);
    if (err != 0) return PosixError(dir, err);
    return names;
  }

  absl::Status RemoveFile(const std::string& fname) override {
    if (::unlink(fname.c_str()) != 0) return PosixError(fname, errno);
    return absl::OkStatus();
  }

  absl::Status CreateDir(const std::string& dir) override {
    if (::mkdir(dir.c_str(), 0755) == 0) return absl::OkStatus();
    const int err = errno;
    struct stat st;
    if (err == EEXIST && ::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
      return absl::OkStatus();
    }
    return PosixError(dir, err);
  }

  absl::Status RemoveDir(const std::string& dir) override {
    if (::rmdir(dir.c_str()) != 0) return PosixError(dir, errno);
    return absl::OkStatus();
  }

  absl::StatusOr<uint64_t> GetFileSize(const std::string& fname) override {
    struct stat st;
    if (::stat(fname.c_str(), &st) != 0) return PosixError(fname, errno);
    return static_cast<uint64_t>(st.st_size);
  }

  absl::Status RenameFile(const std::string& src,
                          const std::string& target) override {
    if (::rename(src.c_str(), target.c_str()) != 0) {
      return PosixError(absl::StrCat("rename ", src, " to ", target), errno);
    }
    return absl::OkStatus();
  }

  absl::Status LinkFile(const std::string& src,
                        const std::string& target) override {
    if (::link(src.c_str(), target.c_str()) == 0) return absl::OkStatus();
    const int err = errno;
    const std::string context = absl::StrCat("link ", src, " to ", target);
    switch (err) {
      case EXDEV:       // different file systems
      case EPERM:       // a file system without hard links
      case EOPNOTSUPP:  // likewise (some network file systems)
      case EMLINK:      // the file has as many links as it may
        return absl::UnimplementedError(
            absl::StrCat(context, ": ", ErrnoMessage(err)));
      default:
        return PosixError(context, err);
    }
  }

  absl::Status SyncDir(const std::string& dir) override {
    const int fd = RetryOnEintr([&] {
      return ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    });
    if (fd < 0) return PosixError(dir, errno);
    absl::Status s;
    if (RetryOnEintr([&] { return ::fsync(fd); }) != 0) {
      s = PosixError(absl::StrCat("fsync directory ", dir), errno);
    }
    CloseFd(fd);
    return s;
  }

  absl::StatusOr<std::unique_ptr<FileLock>> LockFile(
      const std::string& fname) override {
    const int fd = RetryOnEintr([&] {
      return ::open(fname.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    });
    if (fd < 0) return PosixError(fname, errno);
    if (SetWholeFileLock(fd, F_WRLCK) != 0) {
      const int err = errno;
      CloseFd(fd);  // our own description: no other holder's lock is lost
      if (err == EAGAIN || err == EACCES) {
        return absl::FailedPreconditionError(absl::StrCat(
            "lock ", fname,
            ": held by another handle in this or another process (",
            ErrnoMessage(err), ")"));
      }
      return PosixError(absl::StrCat("lock ", fname), err);
    }
    return std::make_unique<PosixFileLock>(fname, fd);
  }

  absl::Status UnlockFile(std::unique_ptr<FileLock> lock) override {
    return static_cast<PosixFileLock*>(lock.get())->Release();
  }

  void Schedule(std::function<void()> work) override {
    background_.Schedule(std::move(work));
  }

  uint64_t NowMicros() override {
    return static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(
            std::chrono::steady_clock::now().time_since_epoch())
            .count());
  }

  void SleepForMicroseconds(int64_t micros) override {
    std::this_thread::sleep_for(std::chrono::microseconds(micros));
  }

 private:
  static absl::StatusOr<std::unique_ptr<RandomAccessFile>> NewDirectFile(
      const std::string& fname) {
    const int fd = RetryOnEintr(
        [&] { return ::open(fname.c_str(), O_RDONLY | O_CLOEXEC | O_DIRECT); });
    if (fd < 0) {
      const int err = errno;
      if (err == EINVAL) {
        return absl::InvalidArgumentError(
            absl::StrCat(fname,
                         ": the file system refuses O_DIRECT, which "
                         "Options::use_direct_reads asks for: ",
                         ErrnoMessage(err)));
      }
      return PosixError(fname, err);
    }
    return std::make_unique<PosixDirectFile>(fname, fd);
  }

  absl::StatusOr<std::unique_ptr<WritableFile>> OpenForWrite(
      const std::string& fname, int mode_flag) {
    const int fd = RetryOnEintr([&] {
      return ::open(fname.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | mode_flag,
                    0644);
    });
    if (fd < 0) return PosixError(fname, errno);
    return std::make_unique<PosixWritableFile>(fname, fd);
  }

  BackgroundThread background_;
};

}  // namespace

Env* Env::Default() {
  // Never destroyed: background work may still run while the process exits.
  static PosixEnv* const kDefault = new PosixEnv;
  return kDefault;
}

}  // namespace sift
