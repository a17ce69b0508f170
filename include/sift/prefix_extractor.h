#ifndef SIFT_INCLUDE_SIFT_PREFIX_EXTRACTOR_H_
#define SIFT_INCLUDE_SIFT_PREFIX_EXTRACTOR_H_

#include <cstddef>
#include <memory>
#include <string_view>

namespace sift {

// Maps a key to its prefix, for prefix filters (Options::prefix_extractor):
// each table written with an extractor also stores the prefix of every key
// in its domain in its filter, so that a scan confined to one prefix skips
// every table whose filter says the prefix is absent, without reading a
// block (doc/filters.md, "Prefix filters").
//
// An extractor must obey the prefix rules, or scans may miss keys:
//   1. Transform(key) is a prefix of key (a view into it).
//   2. For every key k in the domain with p = Transform(k), every key that
//      starts with p is in the domain and has the prefix p.
// Rule 2 is what makes a prefix's keys one contiguous run in key order, so
// that "no key with prefix p" is the same as "no key in [p, successor of
// p)". A fixed length and "up to and including the first delimiter byte"
// both obey them; "up to the last delimiter" does not.
//
// Name() is stored in every table written with the extractor. A table is
// prefix-filtered only when its stored name equals the name of the
// extractor the database is opened with: give an extractor that maps keys
// differently a different name.
//
// Thread safety: const methods are called concurrently by any number of
// threads; implementations must allow it.
class PrefixExtractor {
 public:
  virtual ~PrefixExtractor() = default;

  // A stable name identifying the mapping (not empty, at most 255 bytes).
  // The view lives as long as the extractor.
  virtual std::string_view Name() const = 0;
  // True if `key` has a prefix. Keys outside the domain are stored in no
  // prefix filter, and a scan starting at one is not prefix-filtered.
  virtual bool InDomain(std::string_view key) const = 0;
  // The prefix of `key`, a view into `key`. REQUIRES: InDomain(key).
  virtual std::string_view Transform(std::string_view key) const = 0;
};

// The first `length` bytes; keys shorter than `length` are outside the
// domain. Name: "sift.fixed:<length>". REQUIRES: length > 0.
std::shared_ptr<const PrefixExtractor> NewFixedPrefixExtractor(size_t length);

// Everything up to and including the first `delimiter` byte; keys without it
// are outside the domain ("user:42:name" -> "user:" with ':'). Name:
// "sift.delimited:<byte as two hex digits>".
std::shared_ptr<const PrefixExtractor> NewDelimitedPrefixExtractor(
    char delimiter);

}  // namespace sift

#endif  // SIFT_INCLUDE_SIFT_PREFIX_EXTRACTOR_H_
