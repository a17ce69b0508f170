// RandomAccessMode::kDirect: O_DIRECT reads of a real file, checked against
// the file's bytes for unaligned offsets and lengths, reads that cross or
// start past the end, large reads, and the errors of a refusing file system.

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "gtest/gtest.h"
#include "sift/env.h"
#include "util/random.h"

namespace sift {
namespace {

// A directory on a real file system: under $SIFT_TEST_DIR or the working
// directory (ctest's is in the build tree), not testing::TempDir(), which
// may be a tmpfs.
class DirectReadTest : public testing::Test {
 protected:
  void SetUp() override {
    const char* base = std::getenv("SIFT_TEST_DIR");
    std::string parent = base != nullptr && *base != '\0' ? base : ".";
    std::error_code ec;
    std::filesystem::create_directories(parent, ec);
    std::string tmpl = parent + "/sift_direct_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  // Write `size` pseudo-random bytes to `name`; returns them.
  std::string WriteFile(const std::string& name, size_t size) {
    Random rnd(static_cast<uint32_t>(size) + 7);
    std::string bytes(size, '\0');
    for (char& c : bytes) c = static_cast<char>(rnd.Uniform(256));
    auto file = env_->NewWritableFile(dir_ + "/" + name);
    EXPECT_TRUE(file.ok()) << file.status();
    EXPECT_TRUE((*file)->Append(bytes).ok());
    EXPECT_TRUE((*file)->Close().ok());
    return bytes;
  }

  std::unique_ptr<RandomAccessFile> OpenDirect(const std::string& name) {
    auto file =
        env_->NewRandomAccessFile(dir_ + "/" + name, RandomAccessMode::kDirect);
    EXPECT_TRUE(file.ok()) << file.status();
    return file.ok() ? *std::move(file) : nullptr;
  }

  // Read [offset, offset + n) and compare with the model.
  void ExpectRead(const RandomAccessFile& file, const std::string& model,
                  uint64_t offset, size_t n) {
    std::vector<char> scratch(n + 1);
    std::string_view got;
    ASSERT_TRUE(file.Read(offset, n, &got, scratch.data()).ok());
    const std::string want =
        offset >= model.size() ? "" : model.substr(offset, n);
    ASSERT_EQ(got.size(), want.size()) << "offset " << offset << " n " << n;
    EXPECT_TRUE(got == want) << "offset " << offset << " n " << n;
  }

  Env* const env_ = Env::Default();
  std::string dir_;
};

TEST_F(DirectReadTest, UnalignedOffsetsAndLengths) {
  const std::string model = WriteFile("f", 3 * 4096 + 1234);
  auto file = OpenDirect("f");
  ASSERT_NE(file, nullptr);
  EXPECT_FALSE(file->StableReads());
  const std::vector<uint64_t> offsets = {0,    1,    511,  512,  4095,
                                         4096, 4097, 8191, 9000, 12288};
  const std::vector<size_t> lengths = {1, 7, 512, 4095, 4096, 4097, 8193};
  for (uint64_t offset : offsets) {
    for (size_t n : lengths) ExpectRead(*file, model, offset, n);
  }
}

TEST_F(DirectReadTest, ReadsAtAndPastTheEnd) {
  const std::string model = WriteFile("f", 10000);  // ends mid-block
  auto file = OpenDirect("f");
  ASSERT_NE(file, nullptr);
  ExpectRead(*file, model, 9990, 100);   // crosses the end: 10 bytes
  ExpectRead(*file, model, 8192, 4096);  // the last, partial block
  ExpectRead(*file, model, 9999, 1);     // the last byte
  ExpectRead(*file, model, 10000, 10);   // at the end: nothing
  ExpectRead(*file, model, 50000, 10);   // far past the end: nothing
  std::string_view got;
  ASSERT_TRUE(file->Read(5, 0, &got, nullptr).ok());
  EXPECT_TRUE(got.empty());
}

TEST_F(DirectReadTest, EmptyAndAlignedFiles) {
  const std::string empty = WriteFile("empty", 0);
  auto e = OpenDirect("empty");
  ASSERT_NE(e, nullptr);
  ExpectRead(*e, empty, 0, 100);
  const std::string aligned = WriteFile("aligned", 2 * 4096);
  auto a = OpenDirect("aligned");
  ASSERT_NE(a, nullptr);
  ExpectRead(*a, aligned, 0, 2 * 4096);
  ExpectRead(*a, aligned, 4096, 8192);  // crosses the end at a block edge
}

TEST_F(DirectReadTest, LargeUnalignedRead) {
  const std::string model = WriteFile("big", (5 << 20) + 333);
  auto file = OpenDirect("big");
  ASSERT_NE(file, nullptr);
  ExpectRead(*file, model, 4097, 4 << 20);
  ExpectRead(*file, model, 1, model.size());  // to the end, unaligned both
}

TEST_F(DirectReadTest, AlignedRequestsAreReadIntoTheCallersBuffer) {
  const std::string model = WriteFile("f", 5 * 4096 + 1234);  // ends mid-block
  auto file = OpenDirect("f");
  ASSERT_NE(file, nullptr);
  struct Free {
    void operator()(char* p) const { std::free(p); }
  };
  const size_t cap = 8 * 4096;
  std::unique_ptr<char, Free> scratch(
      static_cast<char*>(std::aligned_alloc(4096, cap)));
  ASSERT_NE(scratch, nullptr);
  struct Case {
    uint64_t offset;
    size_t n;
  };
  for (const Case c :
       {Case{0, 4096}, Case{4096, 3 * 4096}, Case{0, cap}, Case{4 * 4096, 4096},
        Case{5 * 4096, 4096}, Case{8 * 4096, 4096}}) {
    std::string_view got;
    ASSERT_TRUE(file->Read(c.offset, c.n, &got, scratch.get()).ok());
    const std::string want =
        c.offset >= model.size() ? "" : model.substr(c.offset, c.n);
    ASSERT_EQ(got.size(), want.size()) << c.offset << " " << c.n;
    EXPECT_TRUE(got == want) << c.offset << " " << c.n;
    if (!got.empty()) {
      EXPECT_EQ(got.data(), scratch.get());
    }
  }
}

TEST_F(DirectReadTest, MissingFileIsNotFound) {
  auto file =
      env_->NewRandomAccessFile(dir_ + "/missing", RandomAccessMode::kDirect);
  ASSERT_FALSE(file.ok());
  EXPECT_TRUE(absl::IsNotFound(file.status())) << file.status();
  EXPECT_NE(file.status().message().find("missing"), std::string::npos);
}

// procfs refuses O_DIRECT (EINVAL): the open fails, naming the file and the
// option, instead of falling back to buffered reads.
TEST_F(DirectReadTest, RefusingFileSystemIsAClearError) {
  const std::string path = "/proc/version";
  if (!env_->FileExists(path)) GTEST_SKIP() << path << " not available";
  auto file = env_->NewRandomAccessFile(path, RandomAccessMode::kDirect);
  if (file.ok()) GTEST_SKIP() << path << " accepts O_DIRECT here";
  EXPECT_TRUE(absl::IsInvalidArgument(file.status())) << file.status();
  const std::string msg(file.status().message());
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
  EXPECT_NE(msg.find("use_direct_reads"), std::string::npos) << msg;
}

TEST(MemEnvDirectTest, DirectModeIsServedBuffered) {
  auto env = NewMemEnv(Env::Default());
  auto w = env->NewWritableFile("/f");
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Append("hello direct").ok());
  ASSERT_TRUE((*w)->Close().ok());
  auto file = env->NewRandomAccessFile("/f", RandomAccessMode::kDirect);
  ASSERT_TRUE(file.ok()) << file.status();
  char scratch[16];
  std::string_view got;
  ASSERT_TRUE((*file)->Read(6, 100, &got, scratch).ok());
  EXPECT_EQ(got, "direct");
}

}  // namespace
}  // namespace sift
