#include "db/super_version.h"

#include <algorithm>
#include <atomic>
#include <utility>
#include <vector>

namespace sift {

struct SuperVersionPublisher::Slot {
  // Taken by the owning thread for each read, and by Install (try_lock
  // only) and Total. Uncontended in the common case.
  std::mutex mu;
  std::shared_ptr<const SuperVersion> sv ABSL_GUARDED_BY(mu);
  uint64_t generation ABSL_GUARDED_BY(mu) = 0;
  ReadStats stats ABSL_GUARDED_BY(mu);
};

struct SuperVersionPublisher::Registry {
  // Tells registries apart in the threads' slot tables (an address could be
  // reused by a later publisher).
  const uint64_t id = NextId();
  static uint64_t NextId() {
    static std::atomic<uint64_t> next{1};
    return next.fetch_add(1, std::memory_order_relaxed);
  }

  // Bumped by every Install; 0 is never current, so a new slot is stale.
  std::atomic<uint64_t> generation{1};

  mutable std::mutex mu;
  std::vector<std::shared_ptr<Slot>> slots ABSL_GUARDED_BY(mu);
  // Stats of the slots of threads that have exited.
  ReadStats retired ABSL_GUARDED_BY(mu);
  // The publisher is gone: exiting threads have nothing to hand back.
  bool closed ABSL_GUARDED_BY(mu) = false;

  // Called by an exiting thread for its slot.
  void Retire(const std::shared_ptr<Slot>& slot) {
    std::lock_guard<std::mutex> lock(mu);
    if (closed) return;
    {
      std::lock_guard<std::mutex> slot_lock(slot->mu);
      retired += slot->stats;
      slot->sv.reset();
    }
    std::erase(slots, slot);
  }
};

namespace {

// The slots of one thread, one per publisher it has read through. Usually a
// single entry, so a linear search is the fastest map.
class ThreadSlots {
 public:
  ThreadSlots() = default;
  ThreadSlots(const ThreadSlots&) = delete;
  ThreadSlots& operator=(const ThreadSlots&) = delete;
  ~ThreadSlots() {
    for (Entry& e : entries_) {
      if (auto registry = e.registry.lock()) registry->Retire(e.slot);
    }
  }

  SuperVersionPublisher::Slot* Find(uint64_t registry_id) const {
    for (const Entry& e : entries_) {
      if (e.id == registry_id) return e.slot.get();
    }
    return nullptr;
  }

  // REQUIRES: Find(registry->id) == nullptr
  SuperVersionPublisher::Slot* Add(
      const std::shared_ptr<SuperVersionPublisher::Registry>& registry) {
    // Entries of publishers that are gone are of no more use.
    std::erase_if(entries_,
                  [](const Entry& e) { return e.registry.expired(); });
    auto slot = std::make_shared<SuperVersionPublisher::Slot>();
    {
      std::lock_guard<std::mutex> lock(registry->mu);
      registry->slots.push_back(slot);
    }
    entries_.push_back(Entry{registry->id, registry, slot});
    return slot.get();
  }

 private:
  struct Entry {
    uint64_t id;
    std::weak_ptr<SuperVersionPublisher::Registry> registry;
    std::shared_ptr<SuperVersionPublisher::Slot> slot;
  };
  std::vector<Entry> entries_;
};

thread_local ThreadSlots thread_slots;

}  // namespace

SuperVersionPublisher::SuperVersionPublisher()
    : registry_(std::make_shared<Registry>()) {}

SuperVersionPublisher::~SuperVersionPublisher() {
  std::lock_guard<std::mutex> lock(registry_->mu);
  registry_->closed = true;
  for (const std::shared_ptr<Slot>& slot : registry_->slots) {
    std::lock_guard<std::mutex> slot_lock(slot->mu);
    slot->sv.reset();
  }
}

void SuperVersionPublisher::Install(std::shared_ptr<const SuperVersion> sv) {
  current_ = std::move(sv);
  const uint64_t generation =
      registry_->generation.fetch_add(1, std::memory_order_acq_rel) + 1;
  std::lock_guard<std::mutex> lock(registry_->mu);
  for (const std::shared_ptr<Slot>& slot : registry_->slots) {
    // A busy slot is in a read; it notices the new generation next time.
    if (!slot->mu.try_lock()) continue;
    if (slot->generation != generation) slot->sv.reset();
    slot->mu.unlock();
  }
}

SuperVersionPublisher::Slot* SuperVersionPublisher::ThisThreadSlot() {
  Slot* slot = thread_slots.Find(registry_->id);
  return slot != nullptr ? slot : thread_slots.Add(registry_);
}

SuperVersionPublisher::Lease::Lease(SuperVersionPublisher* publisher,
                                    Mutex* db_mutex)
    : slot_(publisher->ThisThreadSlot()) {
  slot_->mu.lock();
  // Acquire pairs with Install's bump: a thread that sees the new generation
  // sees the SuperVersion it was bumped for when it copies current_.
  const uint64_t generation =
      publisher->registry_->generation.load(std::memory_order_acquire);
  if (slot_->generation != generation || slot_->sv == nullptr) {
    slot_->mu.unlock();
    std::shared_ptr<const SuperVersion> fresh;
    uint64_t fresh_generation;
    {
      MutexLock lock(db_mutex);
      fresh = publisher->current_;
      fresh_generation =
          publisher->registry_->generation.load(std::memory_order_relaxed);
    }
    slot_->mu.lock();
    slot_->sv = std::move(fresh);
    slot_->generation = fresh_generation;
  }
  sv_ = slot_->sv.get();
}

SuperVersionPublisher::Lease::~Lease() { slot_->mu.unlock(); }

void SuperVersionPublisher::Lease::AddStats(const ReadStats& stats) {
  slot_->stats += stats;
}

void SuperVersionPublisher::AddStats(const ReadStats& stats) {
  Slot* slot = ThisThreadSlot();
  std::lock_guard<std::mutex> lock(slot->mu);
  slot->stats += stats;
}

ReadStats SuperVersionPublisher::Total() const {
  std::lock_guard<std::mutex> lock(registry_->mu);
  ReadStats total = registry_->retired;
  for (const std::shared_ptr<Slot>& slot : registry_->slots) {
    std::lock_guard<std::mutex> slot_lock(slot->mu);
    total += slot->stats;
  }
  return total;
}

}  // namespace sift
