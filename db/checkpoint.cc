#include "absl/status/status.h"
#include "db/db_impl.h"

namespace sift {

absl::Status DBImpl::CreateCheckpoint(const std::string& dir) {
  return absl::UnimplementedError("DB::CreateCheckpoint(" + dir +
                                  "): not available in this build");
}

}  // namespace sift
