#ifndef SIFT_DB_SKIPLIST_H_
#define SIFT_DB_SKIPLIST_H_

// A sorted set of keys with lock-free reads: the memtable's index.
//
// Thread safety: one writer at a time (Insert must be serialized by the
// caller) and any number of concurrent readers (Contains, Iterator) without
// locks. This works because:
//   - nodes are never removed or freed while the list lives (their memory
//     belongs to the allocator, which releases everything at once);
//   - a node is fully initialized before it is published: the writer links
//     it into each level with a release store, and readers follow links with
//     acquire loads, so a reader that reaches a node sees its key and its own
//     outgoing links as they were when it was published;
//   - the list's height only grows; a reader that sees a new height before the
//     head's links at that level are set finds nullptr there and simply moves
//     down a level.
//
// Key is a small, trivially copyable value (the memtable uses a pointer to an
// encoded entry). Comparator is a copyable function object with
// `int operator()(const Key& a, const Key& b) const`. Allocator (util/arena.h's
// Arena in the engine) provides `char* AllocateAligned(size_t bytes, size_t
// alignment)` returning memory that stays valid for the allocator's lifetime.

#include <atomic>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <new>
#include <type_traits>

#include "util/random.h"

namespace sift {

template <typename Key, class Comparator, class Allocator>
class SkipList {
 private:
  struct Node;

 public:
  // `allocator` (not owned) must outlive the list; nodes are allocated from it
  // and never freed individually.
  SkipList(Comparator cmp, Allocator* allocator);
  SkipList(const SkipList&) = delete;
  SkipList& operator=(const SkipList&) = delete;

  // REQUIRES: no concurrent Insert; nothing equal to `key` is in the list.
  void Insert(const Key& key);

  // True iff an entry equal to `key` is in the list.
  bool Contains(const Key& key) const;

  // A position in the list. Sees every key inserted before the position was
  // reached; may or may not see keys inserted concurrently.
  // REQUIRES: the list outlives the iterator.
  class Iterator {
   public:
    explicit Iterator(const SkipList* list) : list_(list), node_(nullptr) {}

    bool Valid() const { return node_ != nullptr; }
    // REQUIRES: Valid()
    const Key& key() const {
      assert(Valid());
      return node_->key;
    }
    // REQUIRES: Valid()
    void Next() {
      assert(Valid());
      node_ = node_->Next(0);
    }
    // REQUIRES: Valid()
    void Prev() {
      assert(Valid());
      // No back links: search for the last node before this one.
      node_ = list_->FindLessThan(node_->key);
      if (node_ == list_->head_) node_ = nullptr;
    }
    // Position at the first entry >= target.
    void Seek(const Key& target) {
      node_ = list_->FindGreaterOrEqual(target, nullptr);
    }
    void SeekToFirst() { node_ = list_->head_->Next(0); }
    void SeekToLast() {
      node_ = list_->FindLast();
      if (node_ == list_->head_) node_ = nullptr;
    }

   private:
    const SkipList* list_;
    const Node* node_;
  };

 private:
  static constexpr int kMaxHeight = 12;
  // Each level holds about 1/kBranching of the nodes of the level below.
  static constexpr uint64_t kBranching = 4;

  int GetMaxHeight() const {
    return max_height_.load(std::memory_order_relaxed);
  }
  Node* NewNode(const Key& key, int height);
  int RandomHeight();
  bool Equal(const Key& a, const Key& b) const { return compare_(a, b) == 0; }
  // True iff `key` sorts after the key of `n` (a null node is +infinity).
  bool KeyIsAfterNode(const Key& key, const Node* n) const {
    return n != nullptr && compare_(n->key, key) < 0;
  }
  // The first node with key >= `key`, or nullptr. If `prev` is given, fills
  // prev[level] with the last node before `key` at each level.
  Node* FindGreaterOrEqual(const Key& key, Node** prev) const;
  // The last node with key < `key`, or head_ if there is none.
  Node* FindLessThan(const Key& key) const;
  // The last node, or head_ if the list is empty.
  Node* FindLast() const;

  const Comparator compare_;
  Allocator* const allocator_;
  Node* const head_;
  // Height of the tallest node. Written only by the writer; readers may see a
  // stale value, which is safe (see the file comment).
  std::atomic<int> max_height_;
  Random rnd_;  // writer only
};

// A node is its key followed in the same allocation by `height` links.
template <typename Key, class Comparator, class Allocator>
struct SkipList<Key, Comparator, Allocator>::Node {
  using Link = std::atomic<Node*>;
  static constexpr size_t kLinksOffset =
      (sizeof(Key) + alignof(Link) - 1) / alignof(Link) * alignof(Link);

  explicit Node(const Key& k) : key(k) {}

  Key const key;

  Link* links() {
    return std::launder(
        reinterpret_cast<Link*>(reinterpret_cast<char*>(this) + kLinksOffset));
  }
  const Link* links() const { return const_cast<Node*>(this)->links(); }

  // Acquire: whoever follows the link sees the node it points to fully built.
  Node* Next(int level) const {
    return links()[level].load(std::memory_order_acquire);
  }
  // Release: publishes the node `x` points to together with its contents.
  void SetNext(int level, Node* x) {
    links()[level].store(x, std::memory_order_release);
  }
  // For links of a node no reader can reach yet.
  Node* NoBarrierNext(int level) const {
    return links()[level].load(std::memory_order_relaxed);
  }
  void NoBarrierSetNext(int level, Node* x) {
    links()[level].store(x, std::memory_order_relaxed);
  }
};

template <typename Key, class Comparator, class Allocator>
SkipList<Key, Comparator, Allocator>::SkipList(Comparator cmp,
                                               Allocator* allocator)
    : compare_(cmp),
      allocator_(allocator),
      head_(NewNode(Key(), kMaxHeight)),
      max_height_(1),
      rnd_(0x5eedULL) {}

template <typename Key, class Comparator, class Allocator>
typename SkipList<Key, Comparator, Allocator>::Node*
SkipList<Key, Comparator, Allocator>::NewNode(const Key& key, int height) {
  static_assert(std::is_trivially_destructible_v<Key>,
                "nodes are never destroyed");
  constexpr size_t kAlignment = alignof(Node) > alignof(typename Node::Link)
                                    ? alignof(Node)
                                    : alignof(typename Node::Link);
  char* mem = allocator_->AllocateAligned(
      Node::kLinksOffset + sizeof(typename Node::Link) * height, kAlignment);
  Node* node = new (mem) Node(key);
  for (int i = 0; i < height; ++i) {
    new (mem + Node::kLinksOffset + i * sizeof(typename Node::Link))
        typename Node::Link(nullptr);
  }
  return node;
}

template <typename Key, class Comparator, class Allocator>
int SkipList<Key, Comparator, Allocator>::RandomHeight() {
  int height = 1;
  while (height < kMaxHeight && rnd_.OneIn(kBranching)) ++height;
  return height;
}

template <typename Key, class Comparator, class Allocator>
typename SkipList<Key, Comparator, Allocator>::Node*
SkipList<Key, Comparator, Allocator>::FindGreaterOrEqual(const Key& key,
                                                         Node** prev) const {
  Node* x = head_;
  int level = GetMaxHeight() - 1;
  // The node that stopped the search one level up: it is known not to be
  // before `key`, so meeting it again on a lower level needs no comparison.
  // Each level down reaches it again unless a node lies between; that saves
  // about one key comparison per level.
  const Node* known_not_before = nullptr;
  while (true) {
    Node* next = x->Next(level);
    if (next != known_not_before && KeyIsAfterNode(key, next)) {
      x = next;  // keep going right on this level
    } else {
      if (prev != nullptr) prev[level] = x;
      if (level == 0) return next;
      known_not_before = next;
      --level;
    }
  }
}

template <typename Key, class Comparator, class Allocator>
typename SkipList<Key, Comparator, Allocator>::Node*
SkipList<Key, Comparator, Allocator>::FindLessThan(const Key& key) const {
  Node* x = head_;
  int level = GetMaxHeight() - 1;
  while (true) {
    Node* next = x->Next(level);
    if (next != nullptr && compare_(next->key, key) < 0) {
      x = next;
    } else {
      if (level == 0) return x;
      --level;
    }
  }
}

template <typename Key, class Comparator, class Allocator>
typename SkipList<Key, Comparator, Allocator>::Node*
SkipList<Key, Comparator, Allocator>::FindLast() const {
  Node* x = head_;
  int level = GetMaxHeight() - 1;
  while (true) {
    Node* next = x->Next(level);
    if (next != nullptr) {
      x = next;
    } else {
      if (level == 0) return x;
      --level;
    }
  }
}

template <typename Key, class Comparator, class Allocator>
void SkipList<Key, Comparator, Allocator>::Insert(const Key& key) {
  Node* prev[kMaxHeight];
  Node* x = FindGreaterOrEqual(key, prev);
  assert(x == nullptr || !Equal(key, x->key));
  (void)x;

  const int height = RandomHeight();
  if (height > GetMaxHeight()) {
    for (int i = GetMaxHeight(); i < height; ++i) prev[i] = head_;
    // Readers seeing the new height early find nullptr links at the new
    // levels of head_, which sends them down a level: harmless.
    max_height_.store(height, std::memory_order_relaxed);
  }

  Node* node = NewNode(key, height);
  for (int i = 0; i < height; ++i) {
    // The node is unreachable until prev[i]->SetNext publishes it at level i.
    node->NoBarrierSetNext(i, prev[i]->NoBarrierNext(i));
    prev[i]->SetNext(i, node);
  }
}

template <typename Key, class Comparator, class Allocator>
bool SkipList<Key, Comparator, Allocator>::Contains(const Key& key) const {
  Node* x = FindGreaterOrEqual(key, nullptr);
  return x != nullptr && Equal(key, x->key);
}

}  // namespace sift

#endif  // SIFT_DB_SKIPLIST_H_
