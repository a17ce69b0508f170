#include "util/key_buffer.h"

#include <cstdint>
#include <string>

#include "gtest/gtest.h"
#include "util/random.h"

namespace sift {
namespace {

bool InsideObject(const void* p, const void* object, size_t size) {
  const auto a = reinterpret_cast<uintptr_t>(p);
  const auto b = reinterpret_cast<uintptr_t>(object);
  return a >= b && a < b + size;
}

TEST(KeyBufferTest, ShortKeysLiveInsideTheObject) {
  KeyBuffer key;
  EXPECT_EQ(key.view(), "");
  key.TruncateAndAppend(0, "0000000000915434");
  key.TruncateAndAppend(16, std::string(8, '\x01'));
  EXPECT_EQ(key.view(), "0000000000915434" + std::string(8, '\x01'));
  EXPECT_TRUE(InsideObject(key.view().data(), &key, sizeof(key)));
  // Up to kInline bytes in all.
  key.TruncateAndAppend(24, std::string(KeyBuffer::kInline - 24, 'x'));
  EXPECT_EQ(key.size(), KeyBuffer::kInline);
  EXPECT_TRUE(InsideObject(key.view().data(), &key, sizeof(key)));
}

// Keys rebuilt as a block stores them (the bytes shared with the previous
// key, then the rest) through lengths on both sides of the inline space
// match the same rebuilding in a std::string; a buffer that grew keeps its
// shared bytes.
TEST(KeyBufferTest, MatchesAStringThroughGrowth) {
  Random rnd(3);
  KeyBuffer key;
  std::string model;
  for (int i = 0; i < 5000; ++i) {
    const size_t shared = rnd.Uniform(static_cast<uint32_t>(model.size()) + 1);
    std::string tail(rnd.Uniform(i % 100 == 99 ? 600 : 40), '\0');
    for (char& c : tail) c = static_cast<char>(rnd.Uniform(256));
    model.resize(shared);
    model += tail;
    key.TruncateAndAppend(shared, tail);
    ASSERT_EQ(key.view(), model) << i;
    if (rnd.OneIn(50)) {
      key.clear();
      model.clear();
      EXPECT_EQ(key.size(), 0u);
    }
  }
}

}  // namespace
}  // namespace sift
