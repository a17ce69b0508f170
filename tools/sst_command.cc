// kvtool sst FILE [--blocks] [--entries]: what a table file holds.

#include <iostream>
#include <memory>
#include <string>

#include "absl/strings/str_format.h"
#include "sift/env.h"
#include "sift/options.h"
#include "tools/command.h"
#include "tools/db_files.h"
#include "tools/output.h"
#include "tools/table_inspect.h"

namespace sift::tools {

namespace {

struct SstArgs {
  OutputOptions out;
  std::string file;
  bool blocks = false;
  bool entries = false;
  uint64_t limit = 0;
};

std::string FilterKindName(int kind) {
  switch (kind) {
    case 0:
      return "none";
    case static_cast<int>(FilterKind::kStandardBloom):
      return "standard bloom";
    case static_cast<int>(FilterKind::kBlockedBloom):
      return "blocked bloom";
    case static_cast<int>(FilterKind::kBinaryFuse):
      return "binary fuse";
    default:
      return absl::StrFormat("unknown (%d)", kind);
  }
}

// A table key as text: "user @ seq : type" for a table of a database.
std::string ShowKey(const TableReport& report, std::string_view key,
                    const OutputOptions& out) {
  return report.internal_keys ? ShowInternalKey(key, out.hex)
                              : ShowBytes(key, out);
}

Json HandleJson(const BlockHandle& h) {
  return Json{{"offset", h.offset}, {"size", h.size}};
}

Json PropertiesJson(const TableReport& r, const OutputOptions& out) {
  const TableProperties& p = r.properties;
  return Json{{"entries", p.num_entries},
              {"raw_key_bytes", p.raw_key_bytes},
              {"raw_value_bytes", p.raw_value_bytes},
              {"data_bytes", p.data_bytes},
              {"data_blocks", p.num_data_blocks},
              {"compression", CompressionName(p.compression)},
              {"filter_kind", FilterKindName(p.filter_kind)},
              {"filter_bits_per_key", p.filter_bits_per_key},
              {"filter_probes", p.filter_num_probes},
              {"filter_keys", p.filter_num_keys},
              {"filter_bytes", p.filter_bytes},
              {"prefix_extractor", Escape(p.prefix_extractor_name)},
              {"whole_key_filtering", p.whole_key_filtering},
              {"prefix_filter_hashes", p.prefix_filter_hashes},
              {"range_filter_bits_per_key", p.range_filter_bits_per_key},
              {"range_filter_bytes", p.range_filter_bytes},
              {"range_filter_key_bytes", p.range_filter_key_bytes},
              {"smallest_key", ShowKey(r, p.smallest_key, out)},
              {"largest_key", ShowKey(r, p.largest_key, out)},
              {"comparator", Escape(p.comparator_name)},
              {"format_version", p.format_version}};
}

Json BlockJson(const BlockReport& b) {
  Json j{{"kind", BlockKindName(b.kind)},
         {"offset", b.handle.offset},
         {"size", b.handle.size},
         {"compression", CompressionName(b.compression)},
         {"checksum_ok", b.checksum_ok},
         {"uncompressed_size", b.uncompressed_size}};
  if (b.kind == BlockReport::Kind::kData ||
      b.kind == BlockReport::Kind::kIndex) {
    j["entries"] = b.num_entries;
  }
  j["status"] = b.status.ok() ? "ok" : std::string(b.status.message());
  return j;
}

void PrintText(const TableReport& r, const SstArgs& args,
               const std::vector<std::pair<std::string, std::string>>& shown,
               bool truncated) {
  const OutputOptions& out = args.out;
  std::cout << "table " << r.file << ": " << HumanBytes(r.file_size) << "\n";
  std::cout << "footer: format version " << r.footer.format_version
            << "; filter " << r.footer.filter.offset << "+"
            << r.footer.filter.size << ", properties "
            << r.footer.properties.offset << "+" << r.footer.properties.size
            << ", index " << r.footer.index.offset << "+" << r.footer.index.size
            << "\n";
  if (r.properties_status.ok()) {
    const TableProperties& p = r.properties;
    std::cout << "properties:\n"
              << "  entries:          " << p.num_entries << "\n"
              << "  raw key bytes:    " << HumanBytes(p.raw_key_bytes) << "\n"
              << "  raw value bytes:  " << HumanBytes(p.raw_value_bytes) << "\n"
              << "  data bytes:       " << HumanBytes(p.data_bytes) << " in "
              << p.num_data_blocks << " blocks\n"
              << "  compression:      " << CompressionName(p.compression)
              << "\n"
              << "  filter:           " << FilterKindName(p.filter_kind);
    if (p.filter_kind != 0) {
      std::cout << absl::StrFormat(", %.2f bits/key, k=%d, %d keys, %d bytes",
                                   p.filter_bits_per_key, p.filter_num_probes,
                                   p.filter_num_keys, p.filter_bytes);
      if (!p.prefix_extractor_name.empty()) {
        std::cout << (p.whole_key_filtering ? "; keys and prefixes of "
                                            : "; only prefixes of ")
                  << Escape(p.prefix_extractor_name)
                  << (p.prefix_filter_hashes == 2
                          ? " (each prefix under two hashes)"
                          : "");
      }
    }
    if (p.range_filter_bytes > 0) {
      std::cout << absl::StrFormat(
          "\n  range filter:     %.2f bits/key, %d bytes, keys map %d bytes "
          "after the common prefix",
          p.range_filter_bits_per_key, p.range_filter_bytes,
          p.range_filter_key_bytes);
    }
    std::cout << "\n"
              << "  smallest key:     " << ShowKey(r, p.smallest_key, out)
              << "\n"
              << "  largest key:      " << ShowKey(r, p.largest_key, out)
              << "\n"
              << "  comparator:       " << Escape(p.comparator_name) << "\n";
  } else {
    std::cout << "properties: unreadable\n";
  }
  std::cout << "index: " << r.index.size() << " data blocks";
  if (!r.index.empty()) {
    std::cout << ", separators " << ShowKey(r, r.index.front().key, out)
              << " .. " << ShowKey(r, r.index.back().key, out);
  }
  std::cout << "\n";

  uint64_t bad = 0;
  for (const BlockReport& b : r.blocks) bad += b.status.ok() ? 0 : 1;
  std::cout << "blocks: " << r.blocks.size() << " read, " << bad << " damaged, "
            << r.entries_read << " entries\n";
  if (args.blocks) {
    std::cout << absl::StrFormat("  %-10s %10s %8s %-7s %-8s %8s %7s\n", "kind",
                                 "offset", "size", "compr", "checksum", "raw",
                                 "entries");
    for (const BlockReport& b : r.blocks) {
      const bool has_entries = b.kind == BlockReport::Kind::kData ||
                               b.kind == BlockReport::Kind::kIndex;
      std::cout << absl::StrFormat(
          "  %-10s %10d %8d %-7s %-8s %8d %7s", BlockKindName(b.kind),
          b.handle.offset, b.handle.size, CompressionName(b.compression),
          b.compression < 0 ? "?" : (b.checksum_ok ? "ok" : "BAD"),
          b.uncompressed_size, has_entries ? absl::StrCat(b.num_entries) : "-");
      if (!b.status.ok()) std::cout << "  " << b.status.message();
      std::cout << "\n";
    }
  }
  if (args.entries) {
    std::cout << "entries:\n";
    for (const auto& [k, v] : shown)
      std::cout << "  " << k << "\t" << v << "\n";
    if (truncated) std::cout << "  ... (--limit reached)\n";
  }
  for (const Problem& p : r.problems) {
    std::cout << "problem at offset " << p.offset << ": " << p.message << "\n";
  }
}

int RunSst(const SstArgs& args) {
  Env* env = Env::Default();
  std::vector<std::pair<std::string, std::string>> shown;
  bool truncated = false;
  TableReport report;
  InspectOptions options;
  if (args.entries) {
    options.on_entry = [&](std::string_view key, std::string_view value) {
      if (args.limit > 0 && shown.size() >= args.limit) {
        truncated = true;
        return;
      }
      shown.emplace_back(ShowKey(report, key, args.out),
                         ShowBytes(value, args.out));
    };
  }
  absl::Status s = InspectTable(env, args.file, options, &report);
  if (!s.ok()) return ReportError("sst", s, args.out);

  if (args.out.json) {
    Json j{{"file", Escape(report.file)},
           {"file_size", report.file_size},
           {"format_version", report.footer.format_version},
           {"footer",
            {{"filter", HandleJson(report.footer.filter)},
             {"properties", HandleJson(report.footer.properties)},
             {"index", HandleJson(report.footer.index)}}}};
    j["properties"] = report.properties_status.ok()
                          ? PropertiesJson(report, args.out)
                          : Json();
    Json index{{"data_blocks", report.index.size()}};
    if (!report.index.empty()) {
      index["first_separator"] =
          ShowKey(report, report.index.front().key, args.out);
      index["last_separator"] =
          ShowKey(report, report.index.back().key, args.out);
    }
    j["index"] = index;
    j["entries_read"] = report.entries_read;
    if (args.blocks) {
      Json blocks = Json::array();
      for (const BlockReport& b : report.blocks) blocks.push_back(BlockJson(b));
      j["blocks"] = blocks;
    }
    if (args.entries) {
      Json entries = Json::array();
      for (const auto& [k, v] : shown) {
        entries.push_back(Json{{"key", k}, {"value", v}});
      }
      j["entries"] = entries;
      j["entries_truncated"] = truncated;
    }
    j["problems"] = ProblemsJson(report.problems);
    j["ok"] = report.problems.empty();
    PrintJson(j);
  } else {
    PrintText(report, args, shown, truncated);
  }
  if (!report.problems.empty()) {
    std::cerr << "kvtool sst: " << report.file << ": " << report.problems.size()
              << " problem(s) found\n";
    return kExitDataError;
  }
  return kExitOk;
}

}  // namespace

void AddSstCommand(CommandSet* commands) {
  auto args = std::make_shared<SstArgs>();
  CLI::App* sub = commands->Add(
      "sst",
      "Show a table file: footer, properties, index, blocks and checksums "
      "(exit 1 if anything is damaged)",
      &args->out, [args] { return RunSst(*args); });
  sub->add_option("file", args->file, "Table file (NNNNNN.sst)")->required();
  sub->add_flag("--blocks", args->blocks,
                "List every block: offset, size, compression, checksum");
  sub->add_flag("--entries", args->entries,
                "List the entries (internal keys as user key @ seq : type)");
  sub->add_option("--limit", args->limit,
                  "With --entries: show at most N entries (0: all)");
}

}  // namespace sift::tools
