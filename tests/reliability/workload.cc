#include "tests/reliability/workload.h"

#include <cassert>
#include <map>
#include <memory>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "sift/table_file_writer.h"
#include "tests/reliability/reliability_util.h"
#include "util/random.h"

namespace sift::reliability {

namespace {

constexpr int kNumKeys = 300;

std::string RandomKey(Random* rnd) {
  return absl::StrFormat("k%04d", rnd->Uniform(kNumKeys));
}

std::string RandomValue(Random* rnd, uint64_t write_id) {
  std::string v = absl::StrFormat("w%d.", write_id);
  const size_t len = 10 + rnd->Uniform(110);
  while (v.size() < len) v.push_back(static_cast<char>('a' + rnd->Uniform(26)));
  return v;
}

}  // namespace

std::vector<WorkloadStep> MakeWorkload(std::string_view script, uint64_t seed) {
  Random rnd(seed);
  std::vector<WorkloadStep> steps;
  uint64_t next_write = 0;
  for (absl::string_view token :
       absl::StrSplit(absl::string_view(script.data(), script.size()), ' ',
                      absl::SkipEmpty())) {
    const char kind = token[0];
    int count = 1;
    if (token.size() > 1) {
      const bool parsed = absl::SimpleAtoi(token.substr(1), &count);
      assert(parsed);
      (void)parsed;
    }
    for (int i = 0; i < count; ++i) {
      WorkloadStep step;
      switch (kind) {
        case 'w': {
          step.kind = WorkloadStep::Kind::kWrite;
          step.write.id = next_write++;
          step.write.sync = rnd.OneIn(4);
          const uint64_t what = rnd.Uniform(10);
          const int n = what < 8 ? 1 : 2 + static_cast<int>(rnd.Uniform(4));
          for (int j = 0; j < n; ++j) {
            JournalUpdate u;
            u.key = RandomKey(&rnd);
            u.is_delete = what < 8 ? what >= 6 : rnd.OneIn(3);
            if (!u.is_delete) u.value = RandomValue(&rnd, step.write.id);
            step.write.updates.push_back(std::move(u));
          }
          break;
        }
        case 'g':
          step.kind = WorkloadStep::Kind::kGet;
          step.key = RandomKey(&rnd);
          break;
        case 's':
          step.kind = WorkloadStep::Kind::kScan;
          break;
        case 'f':
          step.kind = WorkloadStep::Kind::kFlush;
          break;
        case 'c':
          step.kind = WorkloadStep::Kind::kCompact;
          break;
        case 'r':
          step.kind = WorkloadStep::Kind::kReopen;
          break;
        case 'i': {
          step.kind = WorkloadStep::Kind::kIngest;
          step.write.id = next_write++;
          step.write.sync = true;
          std::map<std::string, JournalUpdate> sorted;
          const int n = 20 + static_cast<int>(rnd.Uniform(21));
          for (int j = 0; j < n; ++j) {
            JournalUpdate u;
            u.key = RandomKey(&rnd);
            u.is_delete = rnd.OneIn(4);
            if (!u.is_delete) u.value = RandomValue(&rnd, step.write.id);
            sorted[u.key] = std::move(u);
          }
          for (auto& [key, u] : sorted) {
            step.write.updates.push_back(std::move(u));
          }
          break;
        }
        default:
          assert(false && "unknown workload step");
      }
      steps.push_back(std::move(step));
    }
  }
  return steps;
}

Options WorkloadOptions(Env* env) {
  Options options;
  options.env = env;
  options.create_if_missing = true;
  // Never full: flushes happen only when the script asks.
  options.write_buffer_size = 8 << 20;
  options.max_file_size = 16 << 10;  // compactions write several tables
  options.block_size = 512;          // and tables hold several blocks
  options.block_cache_capacity = 0;  // every block read is a file read
  return options;
}

absl::Status RunIngestStep(DB* db, Env* env, const WorkloadStep& step) {
  absl::Status s = env->CreateDir(kExternalDir);
  if (!s.ok()) return s;
  const std::string path =
      absl::StrCat(kExternalDir, "/ingest-", step.write.id, ".sst");
  Options options = WorkloadOptions(env);
  absl::StatusOr<std::unique_ptr<TableFileWriter>> writer =
      TableFileWriter::Open(options, path);
  if (!writer.ok()) return writer.status();
  for (const JournalUpdate& u : step.write.updates) {
    s = u.is_delete ? (*writer)->Delete(u.key) : (*writer)->Put(u.key, u.value);
    if (!s.ok()) return s;
  }
  absl::StatusOr<ExternalTableInfo> info = (*writer)->Finish();
  if (!info.ok()) return info.status();
  s = env->SyncDir(kExternalDir);
  if (!s.ok()) return s;
  return db->IngestExternalFiles({path}, IngestOptions());
}

std::vector<uint64_t> PrefixFingerprints(
    const std::vector<WorkloadStep>& steps) {
  KvMap state;
  uint64_t fp = 0;
  std::vector<uint64_t> out = {0};
  for (const WorkloadStep& step : steps) {
    if (step.kind != WorkloadStep::Kind::kWrite &&
        step.kind != WorkloadStep::Kind::kIngest) {
      continue;
    }
    for (const JournalUpdate& u : step.write.updates) {
      auto it = state.find(u.key);
      if (it != state.end()) {
        fp -= EntryHash(it->first, it->second);
        state.erase(it);
      }
      if (!u.is_delete) {
        state[u.key] = u.value;
        fp += EntryHash(u.key, u.value);
      }
    }
    out.push_back(fp);
  }
  return out;
}

KvMap PrefixState(const std::vector<WorkloadStep>& steps, size_t k) {
  KvMap state;
  for (const WorkloadStep& step : steps) {
    if (step.kind != WorkloadStep::Kind::kWrite &&
        step.kind != WorkloadStep::Kind::kIngest) {
      continue;
    }
    if (step.write.id >= k) break;
    ApplyOp(step.write, &state);
  }
  return state;
}

}  // namespace sift::reliability
