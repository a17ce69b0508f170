// kvtool wal FILE: the write batches of a write-ahead log, with their
// sequence numbers and operations, and every damaged or torn record at its
// offset.

#include <iostream>
#include <memory>
#include <string>

#include "absl/strings/str_format.h"
#include "db/wal_link.h"
#include "db/write_batch_internal.h"
#include "sift/env.h"
#include "sift/write_batch.h"
#include "tools/command.h"
#include "tools/log_scan.h"
#include "tools/output.h"

namespace sift::tools {

namespace {

struct WalArgs {
  OutputOptions out;
  std::string file;
  bool summary = false;
};

// Collects a batch's operations for printing.
class OpCollector : public WriteBatch::Handler {
 public:
  OpCollector(const OutputOptions& out, bool keep) : out_(out), keep_(keep) {}

  void Put(std::string_view key, std::string_view value) override {
    ++count_;
    if (!keep_) return;
    const std::string k = ShowBytes(key, out_);
    const std::string v = ShowBytes(value, out_);
    ops_.push_back(Json{{"op", "put"}, {"key", k}, {"value", v}});
    lines_.push_back(absl::StrFormat("put \"%s\" = \"%s\"", k, v));
  }
  void Delete(std::string_view key) override {
    ++count_;
    if (!keep_) return;
    const std::string k = ShowBytes(key, out_);
    ops_.push_back(Json{{"op", "delete"}, {"key", k}});
    lines_.push_back(absl::StrFormat("delete \"%s\"", k));
  }

  uint32_t count() const { return count_; }
  Json& ops() { return ops_; }
  const std::vector<std::string>& lines() const { return lines_; }

 private:
  const OutputOptions& out_;
  const bool keep_;
  uint32_t count_ = 0;
  Json ops_ = Json::array();
  std::vector<std::string> lines_;
};

int RunWal(const WalArgs& args) {
  Env* env = Env::Default();
  Json records = Json::array();
  std::vector<LogProblem> batch_problems;
  uint64_t num_ops = 0;
  SequenceNumber first_seq = 0, last_seq = 0;
  bool any = false;

  auto on_record = [&](uint64_t offset, std::string_view record) {
    if (WalLink::IsLink(record)) {
      WalLink link;
      if (absl::Status s = link.DecodeFrom(record); !s.ok()) {
        batch_problems.push_back({offset, std::string(s.message()), false});
        if (!args.out.json) {
          std::cout << "offset " << offset << ": BAD LINK (" << s.message()
                    << ")\n";
        }
        return;
      }
      if (args.out.json) {
        records.push_back(
            Json{{"offset", offset},
                 {"link",
                  {{"previous_log", link.previous_log()},
                   {"previous_records", link.previous_records()}}}});
      } else {
        std::cout << absl::StrFormat(
            "offset %d: link to log %06d, which held %d records\n", offset,
            link.previous_log(), link.previous_records());
      }
      return;
    }
    WriteBatch batch;
    absl::Status s = WriteBatchInternal::SetContents(&batch, record);
    const bool keep_ops = !args.summary;
    OpCollector ops(args.out, keep_ops);
    if (s.ok()) s = batch.Iterate(&ops);
    if (s.ok() && ops.count() != WriteBatchInternal::Count(&batch)) {
      s = absl::DataLossError(
          absl::StrFormat("batch header says %d operations, it holds %d",
                          WriteBatchInternal::Count(&batch), ops.count()));
    }
    if (!s.ok()) {
      batch_problems.push_back(
          {offset, absl::StrCat("bad write batch: ", s.message()), false});
      if (!args.out.json) {
        std::cout << "offset " << offset << ": BAD BATCH (" << s.message()
                  << ")\n";
      }
      return;
    }
    const SequenceNumber seq = WriteBatchInternal::Sequence(&batch);
    const uint32_t count = ops.count();
    if (!any) first_seq = seq;
    any = true;
    if (count > 0) last_seq = std::max(last_seq, seq + count - 1);
    num_ops += count;
    if (args.out.json) {
      Json j{{"offset", offset},
             {"sequence", seq},
             {"count", count},
             {"bytes", record.size()}};
      if (keep_ops) j["ops"] = std::move(ops.ops());
      records.push_back(std::move(j));
    } else {
      std::cout << absl::StrFormat(
          "offset %d: batch seq %d..%d, %d op%s, %d bytes\n", offset, seq,
          count > 0 ? seq + count - 1 : seq, count, count == 1 ? "" : "s",
          record.size());
      for (const std::string& line : ops.lines()) {
        std::cout << "  " << line << "\n";
      }
    }
  };

  LogScanResult scan;
  absl::Status s = ScanLog(env, args.file, on_record, &scan);
  if (!s.ok()) return ReportError("wal", s, args.out);
  std::vector<LogProblem> problems = scan.problems;
  problems.insert(problems.end(), batch_problems.begin(), batch_problems.end());
  std::sort(problems.begin(), problems.end(),
            [](const LogProblem& a, const LogProblem& b) {
              return a.offset < b.offset;
            });
  const bool damaged = scan.damaged() || !batch_problems.empty();

  if (args.out.json) {
    Json p = ProblemsJson(problems);
    PrintJson(Json{{"file", Escape(args.file)},
                   {"file_size", scan.file_size},
                   {"num_records", scan.num_records},
                   {"num_ops", num_ops},
                   {"first_sequence", any ? Json(first_seq) : Json()},
                   {"last_sequence", any ? Json(last_seq) : Json()},
                   {"records", std::move(records)},
                   {"problems", std::move(p)},
                   {"ok", !damaged}});
  } else {
    for (const LogProblem& problem : problems) {
      std::cout << absl::StrFormat("%s at offset %d: %s\n",
                                   problem.torn_tail ? "torn tail" : "DAMAGE",
                                   problem.offset, problem.message);
    }
    std::cout << absl::StrFormat("%s: %d bytes, %d records, %d operations",
                                 args.file, scan.file_size, scan.num_records,
                                 num_ops);
    if (any)
      std::cout << absl::StrFormat(", sequence %d..%d", first_seq, last_seq);
    std::cout << "\n";
  }
  if (damaged) {
    std::cerr << "kvtool wal: " << args.file << ": damaged (see the "
              << (args.out.json ? "\"problems\"" : "DAMAGE lines") << ")\n";
    return kExitDataError;
  }
  return kExitOk;
}

}  // namespace

void AddWalCommand(CommandSet* commands) {
  auto args = std::make_shared<WalArgs>();
  CLI::App* sub = commands->Add(
      "wal",
      "Decode a write-ahead log: batches with sequence numbers and operations; "
      "damaged or torn records at their offset (exit 1 if damaged)",
      &args->out, [args] { return RunWal(*args); });
  sub->add_option("file", args->file, "Log file (NNNNNN.log)")->required();
  sub->add_flag("--summary", args->summary,
                "One line per batch, without its operations");
}

}  // namespace sift::tools
