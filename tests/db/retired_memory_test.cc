// RetiredMemory: what is retired into an epoch lives while that epoch or an
// older one is held, and a long chain of epochs goes without deep recursion.

#include "db/retired_memory.h"

#include <memory>
#include <vector>

#include "gtest/gtest.h"

namespace sift {
namespace {

TEST(RetiredMemoryTest, MemoryLivesWhileThisOrAnOlderEpochIsHeld) {
  auto e1 = std::make_shared<RetiredMemory>();
  auto e2 = std::make_shared<RetiredMemory>();
  auto e3 = std::make_shared<RetiredMemory>();
  e1->SetNext(e2);
  e2->SetNext(e3);
  std::weak_ptr<RetiredMemory> w2 = e2, w3 = e3;
  e2->Retire(std::make_unique<AlignedWords>(64));
  // The version of e2 goes, but a reader of e1's version is still reading.
  e2.reset();
  EXPECT_FALSE(w2.expired());
  e3.reset();
  EXPECT_FALSE(w3.expired());
  e1.reset();
  EXPECT_TRUE(w2.expired());
  EXPECT_TRUE(w3.expired());
}

TEST(RetiredMemoryTest, ALongChainIsFreedWithoutRecursion) {
  auto head = std::make_shared<RetiredMemory>();
  std::shared_ptr<RetiredMemory> tail = head;
  for (int i = 0; i < 1000000; ++i) {
    auto next = std::make_shared<RetiredMemory>();
    tail->SetNext(next);
    tail = std::move(next);
  }
  std::weak_ptr<RetiredMemory> last = tail;
  tail.reset();
  head.reset();  // would overflow the stack if each epoch freed the next
  EXPECT_TRUE(last.expired());
}

}  // namespace
}  // namespace sift
