#include "util/small_buffer.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace sift {
namespace {

// Counts live instances, and cannot be moved or copied (as LookupKey).
struct Pinned {
  explicit Pinned(int v, int* live) : value(v), live(live) { ++*live; }
  Pinned(const Pinned&) = delete;
  Pinned& operator=(const Pinned&) = delete;
  ~Pinned() { --*live; }
  int value;
  int* live;
};

bool InsideObject(const void* p, const void* object, size_t size) {
  const auto a = reinterpret_cast<uintptr_t>(p);
  const auto b = reinterpret_cast<uintptr_t>(object);
  return a >= b && a < b + size;
}

TEST(SmallBufferTest, UpToNElementsLiveInsideTheObject) {
  SmallBuffer<uint64_t, 8> buffer(8);
  EXPECT_EQ(buffer.capacity(), 8u);
  EXPECT_TRUE(buffer.empty());
  for (uint64_t i = 0; i < 8; ++i) buffer.emplace_back(i * 3);
  EXPECT_TRUE(InsideObject(buffer.data(), &buffer, sizeof(buffer)));
  ASSERT_EQ(buffer.size(), 8u);
  for (uint64_t i = 0; i < 8; ++i) EXPECT_EQ(buffer[i], i * 3);
}

TEST(SmallBufferTest, MoreThanNGoToTheHeap) {
  SmallBuffer<std::string, 2> buffer(100);
  EXPECT_FALSE(InsideObject(buffer.data(), &buffer, sizeof(buffer)));
  for (int i = 0; i < 100; ++i) buffer.emplace_back(std::to_string(i));
  ASSERT_EQ(buffer.size(), 100u);
  int i = 0;
  for (const std::string& s : buffer) EXPECT_EQ(s, std::to_string(i++));
  EXPECT_EQ(buffer.front(), "0");
  EXPECT_EQ(buffer.back(), "99");
}

TEST(SmallBufferTest, ElementsNeverMoveAndAreDestroyedOnce) {
  int live = 0;
  for (const size_t capacity : {size_t{4}, size_t{40}}) {
    {
      SmallBuffer<Pinned, 4> buffer(capacity);
      std::vector<const Pinned*> addresses;
      for (size_t i = 0; i < capacity; ++i) {
        addresses.push_back(&buffer.emplace_back(static_cast<int>(i), &live));
      }
      EXPECT_EQ(live, static_cast<int>(capacity));
      for (size_t i = 0; i < capacity; ++i) {
        EXPECT_EQ(&buffer[i], addresses[i]);
        EXPECT_EQ(buffer[i].value, static_cast<int>(i));
      }
      buffer.clear();
      EXPECT_EQ(live, 0);
      EXPECT_EQ(buffer.capacity(), capacity);
      buffer.emplace_back(7, &live);  // usable again after clear
      EXPECT_EQ(live, 1);
    }
    EXPECT_EQ(live, 0) << "capacity " << capacity;
  }
}

TEST(SmallBufferTest, KeepsTheElementsAlignment) {
  struct alignas(64) Line {
    unsigned char bytes[64];
  };
  for (const size_t capacity : {size_t{1}, size_t{3}, size_t{9}}) {
    SmallBuffer<Line, 3> buffer(capacity);
    for (size_t i = 0; i < capacity; ++i) {
      const Line& line = buffer.emplace_back();
      EXPECT_EQ(reinterpret_cast<uintptr_t>(&line) % 64, 0u);
    }
  }
}

}  // namespace
}  // namespace sift
