// kvtool filter FILE [--probe KEY...]: a table's Bloom filter, its
// parameters against the theory, and what it answers for given keys.

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "db/dbformat.h"
#include "filter/bloom_math.h"
#include "filter/filter.h"
#include "filter/modular_bloom.h"
#include "sift/env.h"
#include "sift/options.h"
#include "table/table.h"
#include "table/table_options.h"
#include "tools/command.h"
#include "tools/output.h"
#include "tools/table_inspect.h"

namespace sift::tools {

namespace {

struct FilterArgs {
  OutputOptions out;
  std::string file;
  std::vector<std::string> probes;
};

std::string LayoutName(const FilterInfo& info) {
  if (!info.known) return absl::StrFormat("unknown (kind %d)", info.kind);
  switch (info.kind) {
    case static_cast<uint8_t>(FilterKind::kStandardBloom):
      return "standard bloom";
    case static_cast<uint8_t>(FilterKind::kBlockedBloom):
      return "blocked bloom (512-bit lines)";
    case static_cast<uint8_t>(FilterKind::kBinaryFuse):
      return absl::StrFormat("binary fuse (%d-wise, %d-bit fingerprints)",
                             info.num_probes, info.fingerprint_bits);
    case kModularBloomTag:
      return absl::StrFormat(
          "modular blocked bloom (%d units of 512-bit lines, %d in memory)",
          info.num_units, info.resident_units);
    default:
      return absl::StrFormat("kind %d", info.kind);
  }
}

// Whether the table really holds `key`, found by seeking its entries.
struct Presence {
  absl::Status status;  // why it could not be told
  bool present = false;
  std::string detail;  // "value @ 12", "deletion @ 40" for database tables
};

class TableLookup {
 public:
  TableLookup(const std::string& file, const TableReport& report)
      : icmp_(BytewiseComparator()), internal_(report.internal_keys) {
    Env* env = Env::Default();
    TableOptions options;
    if (internal_) {
      options.comparator = &icmp_;
      options.filter_key = &ExtractUserKey;
    }
    auto f = env->NewRandomAccessFile(file);
    if (!f.ok()) {
      status_ = f.status();
      return;
    }
    auto table = Table::Open(options, *std::move(f), report.file_size, file);
    if (!table.ok()) {
      status_ = table.status();
      return;
    }
    table_ = *std::move(table);
  }

  Presence Find(std::string_view key) const {
    Presence p;
    if (table_ == nullptr) {
      p.status = status_;
      return p;
    }
    std::unique_ptr<Iterator> it = table_->NewIterator(ReadOptions());
    if (internal_) {
      it->Seek(
          InternalKey(key, kMaxSequenceNumber, kValueTypeForSeek).Encode());
      ParsedInternalKey parsed;
      if (it->Valid() && ParseInternalKey(it->key(), &parsed) &&
          parsed.user_key == key) {
        p.present = true;
        p.detail = absl::StrFormat(
            "%s @ %d", parsed.type == kTypeValue ? "value" : "deletion",
            parsed.sequence);
      }
    } else {
      it->Seek(key);
      p.present = it->Valid() && it->key() == key;
    }
    p.status = it->status();
    return p;
  }

 private:
  InternalKeyComparator icmp_;
  const bool internal_;
  absl::Status status_;
  std::unique_ptr<Table> table_;
};

// The filter's parameters and what theory and its fill say of it.
struct FilterFigures {
  FilterInfo info;
  double fill = 0;
  double theory = 1.0;     // false-positive rate from k, m and n
  double from_fill = 1.0;  // fill^k
  size_t memory = 0;
};

FilterFigures Figures(const FilterReader& filter) {
  FilterFigures f;
  f.info = filter.info();
  f.fill = filter.FillRatio();
  f.memory = filter.MemoryUsage();
  if (f.info.known) {
    f.theory = TheoreticalFpr(f.info);
    // A fuse filter does not saturate: its rate is its theory.
    f.from_fill = f.info.fingerprint_bits == 0
                      ? FprFromFill(f.fill, f.info.num_probes)
                      : f.theory;
  }
  return f;
}

// The filter's answers for the probed keys against the table's contents.
struct ProbeResults {
  Json json = Json::array();
  std::vector<std::string> lines;
  bool lookup_failed = false;  // a lookup failed, or a false negative
  uint64_t false_positives = 0;
};

ProbeResults Probe(const FilterReader& filter, const std::string& file,
                   const TableReport& report,
                   const std::vector<std::string>& keys,
                   const OutputOptions& out) {
  ProbeResults r;
  if (keys.empty()) return r;
  const TableLookup lookup(file, report);
  for (const std::string& key : keys) {
    const bool may = filter.KeyMayMatch(key);
    const Presence p = lookup.Find(key);
    if (!p.status.ok()) r.lookup_failed = true;
    if (may && p.status.ok() && !p.present) ++r.false_positives;
    // A false negative would be a bug in the filter; never hide it.
    if (!may && p.present) r.lookup_failed = true;
    const std::string in_table =
        !p.status.ok() ? absl::StrCat("unknown: ", p.status.message())
        : p.present
            ? absl::StrCat("yes", p.detail.empty() ? "" : ", ", p.detail)
            : "no";
    Json j{{"key", ShowBytes(key, out)},
           {"answer", may ? "possibly present" : "definitely not present"},
           {"may_match", may}};
    if (p.status.ok()) {
      j["in_table"] = p.present;
      if (!p.detail.empty()) j["newest_entry"] = p.detail;
    } else {
      j["in_table"] = nullptr;
      j["error"] = std::string(p.status.message());
    }
    r.json.push_back(std::move(j));
    r.lines.push_back(absl::StrFormat(
        "  \"%s\": %s (in table: %s)%s", ShowBytes(key, out),
        may ? "possibly present" : "definitely not present", in_table,
        !may && p.present ? "  FALSE NEGATIVE: the filter is wrong" : ""));
  }
  return r;
}

void PrintJsonReport(const FilterArgs& args, const TableReport& report,
                     const FilterFigures& f, const ProbeResults& probes) {
  const FilterInfo& info = f.info;
  Json j{{"file", Escape(args.file)},
         {"layout", LayoutName(info)},
         {"kind", info.kind},
         {"version", info.version},
         {"known", info.known},
         {"num_probes", info.num_probes},
         {"num_bits", info.num_bits},
         {"num_keys", info.num_keys},
         {"num_units", info.num_units},
         {"bits_per_key", info.bits_per_key()},
         {"seed", info.seed},
         {"serialized_bytes", report.filter_contents.size()},
         {"memory_bytes", f.memory},
         {"fill_ratio", f.fill},
         {"theoretical_fpr", f.theory},
         {"fpr_from_fill", f.from_fill}};
  if (report.properties_status.ok()) {
    j["configured_bits_per_key"] = report.properties.filter_bits_per_key;
    j["prefix_extractor"] = Escape(report.properties.prefix_extractor_name);
    j["whole_key_filtering"] = report.properties.whole_key_filtering;
    j["prefix_filter_hashes"] = report.properties.prefix_filter_hashes;
  }
  if (!args.probes.empty()) {
    j["probes"] = probes.json;
    j["probe_false_positives"] = probes.false_positives;
  }
  PrintJson(j);
}

void PrintTextReport(const FilterArgs& args, const TableReport& report,
                     const FilterFigures& f, const ProbeResults& probes) {
  const FilterInfo& info = f.info;
  std::cout << "filter of " << args.file << "\n"
            << "  layout:           " << LayoutName(info) << ", format "
            << "version " << static_cast<int>(info.version) << "\n";
  if (!info.known) {
    std::cout << "  this reader does not know the layout: every key is "
                 "\"possibly present\"\n";
  }
  std::cout << absl::StrFormat(
      "  probes (k):       %d\n"
      "  bits (m):         %d\n"
      "  keys (n):         %d\n"
      "  bits/key:         %.2f",
      info.num_probes, info.num_bits, info.num_keys, info.bits_per_key());
  if (report.properties_status.ok()) {
    std::cout << absl::StrFormat(" (configured %.2f)",
                                 report.properties.filter_bits_per_key);
    const TableProperties& p = report.properties;
    if (!p.prefix_extractor_name.empty()) {
      std::cout << "\n  holds:            "
                << (p.whole_key_filtering ? "keys and prefixes of "
                                          : "only prefixes of ")
                << Escape(p.prefix_extractor_name)
                << (p.prefix_filter_hashes == 2
                        ? " (each prefix under two hashes)"
                        : "");
    }
  }
  std::cout << absl::StrFormat(
      "\n"
      "  serialized:       %d bytes\n"
      "  memory:           %d bytes\n"
      "  fill ratio:       %.4f\n"
      "  theoretical FPR:  %.4g%%\n"
      "  FPR from fill:    %.4g%% (fill^k)\n",
      report.filter_contents.size(), f.memory, f.fill, 100 * f.theory,
      100 * f.from_fill);
  if (!args.probes.empty()) {
    std::cout << "probes:\n";
    for (const std::string& line : probes.lines) std::cout << line << "\n";
  }
}

// The table has no filter, or its filter block could not be read: say so;
// returns the exit status.
int ReportMissingFilter(const FilterArgs& args, const TableReport& report) {
  if (!report.footer.has_filter()) {
    if (args.out.json) {
      PrintJson(Json{{"file", Escape(args.file)}, {"filter", nullptr}});
    } else {
      std::cout << "table " << args.file
                << " has no filter: every lookup reads its index and a "
                   "data block\n";
    }
    return kExitOk;
  }
  // Reading the filter block failed; the report says why.
  for (const Problem& p : report.problems) {
    std::cerr << "kvtool filter: " << args.file << " at offset " << p.offset
              << ": " << p.message << "\n";
  }
  if (args.out.json) {
    PrintJson(Json{{"file", Escape(args.file)},
                   {"error", "filter block unreadable"},
                   {"problems", ProblemsJson(report.problems)}});
  }
  return kExitDataError;
}

int RunFilter(const FilterArgs& args) {
  std::vector<std::string> keys;
  for (const std::string& arg : args.probes) {
    absl::StatusOr<std::string> key = ArgBytes(arg, args.out);
    if (!key.ok()) return ReportUsageError("filter", key.status(), args.out);
    keys.push_back(*std::move(key));
  }
  TableReport report;
  InspectOptions options;
  options.read_data_blocks = false;  // the filter and its metadata suffice
  absl::Status s = InspectTable(Env::Default(), args.file, options, &report);
  if (!s.ok()) return ReportError("filter", s, args.out);
  if (report.filter_contents.empty()) return ReportMissingFilter(args, report);
  absl::StatusOr<std::unique_ptr<FilterReader>> filter =
      FilterReader::Parse(report.filter_contents);
  if (!filter.ok()) {
    return ReportError("filter",
                       absl::DataLossError(absl::StrCat(
                           args.file, ": ", filter.status().message())),
                       args.out);
  }
  const FilterFigures figures = Figures(**filter);
  const ProbeResults probes =
      Probe(**filter, args.file, report, keys, args.out);
  if (args.out.json) {
    PrintJsonReport(args, report, figures, probes);
  } else {
    PrintTextReport(args, report, figures, probes);
  }
  return probes.lookup_failed ? kExitDataError : kExitOk;
}

}  // namespace

void AddFilterCommand(CommandSet* commands) {
  auto args = std::make_shared<FilterArgs>();
  CLI::App* sub = commands->Add(
      "filter",
      "Show a table's Bloom filter (layout, k, bits, keys, fill, false-"
      "positive rates) and probe it with keys",
      &args->out, [args] { return RunFilter(*args); });
  sub->add_option("file", args->file, "Table file (NNNNNN.sst)")->required();
  sub->add_option("--probe", args->probes,
                  "Keys to ask the filter about (user keys; several allowed)");
}

}  // namespace sift::tools
