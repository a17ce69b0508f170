#include "absl/status/status.h"
#include "db/db_impl.h"

namespace sift {

absl::Status DBImpl::IngestExternalFiles(const std::vector<std::string>& paths,
                                         const IngestOptions& options) {
  (void)paths;
  (void)options;
  return absl::UnimplementedError("DB::IngestExternalFiles: in progress");
}

}  // namespace sift
