#include "util/counting_env.h"

#include <memory>
#include <string>

#include "gtest/gtest.h"

namespace sift {
namespace {

TEST(CountingEnvTest, CountsReadsWritesAndSyncs) {
  std::unique_ptr<Env> mem = NewMemEnv(Env::Default());
  CountingEnv env(mem.get());
  {
    auto f = env.NewWritableFile("/f");
    ASSERT_TRUE(f.ok());
    ASSERT_TRUE((*f)->Append("hello").ok());
    ASSERT_TRUE((*f)->Append(" world").ok());
    ASSERT_TRUE((*f)->Sync().ok());
    ASSERT_TRUE((*f)->Close().ok());
  }
  ASSERT_TRUE(env.SyncDir("/").ok());
  EXPECT_EQ(env.writes(), 2u);
  EXPECT_EQ(env.write_bytes(), 11u);
  EXPECT_EQ(env.syncs(), 2u);

  char buf[16];
  std::string_view got;
  auto rnd = env.NewRandomAccessFile("/f");
  ASSERT_TRUE(rnd.ok());
  ASSERT_TRUE((*rnd)->Read(6, 16, &got, buf).ok());
  EXPECT_EQ(got, "world");
  ASSERT_TRUE((*rnd)->Read(0, 2, &got, buf).ok());
  EXPECT_EQ(env.random_reads(), 2u);
  EXPECT_EQ(env.random_read_bytes(), 7u);  // bytes returned, not requested

  auto seq = env.NewSequentialFile("/f");
  ASSERT_TRUE(seq.ok());
  ASSERT_TRUE((*seq)->Read(4, &got, buf).ok());
  ASSERT_TRUE((*seq)->Read(16, &got, buf).ok());
  ASSERT_TRUE((*seq)->Read(16, &got, buf).ok());
  EXPECT_EQ(env.sequential_reads(), 3u);
  EXPECT_EQ(env.sequential_read_bytes(), 11u);

  // Appendable files are counted too; failures to open count nothing.
  auto app = env.NewAppendableFile("/f");
  ASSERT_TRUE(app.ok());
  ASSERT_TRUE((*app)->Append("!").ok());
  EXPECT_FALSE(env.NewRandomAccessFile("/missing").ok());
  EXPECT_EQ(env.writes(), 3u);
  EXPECT_EQ(env.random_reads(), 2u);

  env.Reset();
  EXPECT_EQ(env.random_reads(), 0u);
  EXPECT_EQ(env.random_read_bytes(), 0u);
  EXPECT_EQ(env.sequential_reads(), 0u);
  EXPECT_EQ(env.sequential_read_bytes(), 0u);
  EXPECT_EQ(env.writes(), 0u);
  EXPECT_EQ(env.write_bytes(), 0u);
  EXPECT_EQ(env.syncs(), 0u);
}

}  // namespace
}  // namespace sift
