#include "db/retired_memory.h"

#include <utility>

namespace sift {

RetiredMemory::~RetiredMemory() {
  retired_.clear();
  std::shared_ptr<RetiredMemory> next = std::move(next_);
  // use_count() == 1: no version and no other epoch holds `next`, and none
  // can start to (epochs are reached only through versions and epochs), so
  // its successor can be taken before it is destroyed.
  while (next != nullptr && next.use_count() == 1) {
    std::shared_ptr<RetiredMemory> after = std::move(next->next_);
    next.reset();
    next = std::move(after);
  }
}

void RetiredMemory::Retire(std::unique_ptr<AlignedWords> memory) {
  std::lock_guard<std::mutex> lock(mu_);
  retired_.push_back(std::move(memory));
}

}  // namespace sift
