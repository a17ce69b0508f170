#ifndef SIFT_DB_OPTIONS_CHECK_H_
#define SIFT_DB_OPTIONS_CHECK_H_

// The contract of sift::Options (include/sift/options.h) as code: DB::Open
// refuses out-of-contract values instead of clamping them, and this is the
// one place that picks the default Env.

#include "absl/status/status.h"
#include "sift/options.h"

namespace sift {

// OK if every field of `options` is within its documented range; otherwise
// InvalidArgument naming the first bad field, its value and the allowed
// range.
absl::Status CheckOptions(const Options& options);

// `options` with defaults filled in: env == nullptr becomes Env::Default().
// Values are not changed otherwise.
Options SanitizeOptions(const Options& options);

// The name of `kind` ("kBlockedBloom"), or nullptr if the value is not an
// enumerator (an integer cast to FilterKind).
const char* FilterKindName(FilterKind kind);
// The name of `compression`, or nullptr if the value is not an enumerator.
const char* CompressionName(Compression compression);

}  // namespace sift

#endif  // SIFT_DB_OPTIONS_CHECK_H_
