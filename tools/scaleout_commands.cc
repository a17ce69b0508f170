// checkpoint, ingest, dump and load: moving data in and out of a database
// as files (doc/scale-out.md). checkpoint, ingest and load open the database
// with the engine (taking its LOCK); dump reads it without opening it
// (tools/readonly_db.h), like scan.

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "sift/db.h"
#include "sift/iterator.h"
#include "sift/options.h"
#include "sift/table_file_writer.h"
#include "sift/write_batch.h"
#include "tools/command.h"
#include "tools/dump_format.h"
#include "tools/output.h"
#include "tools/readonly_db.h"

namespace sift::tools {
namespace {

absl::StatusOr<std::unique_ptr<DB>> OpenForWrite(const std::string& path,
                                                 bool create_if_missing) {
  Options options;
  options.create_if_missing = create_if_missing;
  return DB::Open(options, path);
}

// An optional key bound given on the command line (--hex aware).
absl::StatusOr<std::optional<std::string>> OptionalKey(
    const CLI::Option* opt, const std::string& arg, const OutputOptions& out) {
  if (opt->count() == 0) return std::optional<std::string>();
  absl::StatusOr<std::string> bytes = ArgBytes(arg, out);
  if (!bytes.ok()) return bytes.status();
  return std::optional<std::string>(*std::move(bytes));
}

// ---- checkpoint ----

struct CheckpointArgs {
  OutputOptions out;
  std::string db;
  std::string dir;
};

int RunCheckpoint(const CheckpointArgs& args) {
  auto db = OpenForWrite(args.db, false);
  if (!db.ok()) return ReportError("checkpoint", db.status(), args.out);
  if (absl::Status s = (*db)->CreateCheckpoint(args.dir); !s.ok()) {
    return ReportError("checkpoint", s, args.out);
  }
  if (args.out.json) {
    PrintJson(Json{{"ok", true}, {"db", args.db}, {"checkpoint", args.dir}});
  } else {
    std::cout << "checkpoint of " << args.db << " written to " << args.dir
              << "\n";
  }
  return kExitOk;
}

// ---- ingest ----

struct IngestArgs {
  OutputOptions out;
  std::string db;
  std::vector<std::string> files;
  bool move = false;
  bool create = false;
  bool no_verify = false;
};

int RunIngest(const IngestArgs& args) {
  auto db = OpenForWrite(args.db, args.create);
  if (!db.ok()) return ReportError("ingest", db.status(), args.out);
  IngestOptions options;
  options.move_files = args.move;
  options.verify_checksums = !args.no_verify;
  if (absl::Status s = (*db)->IngestExternalFiles(args.files, options);
      !s.ok()) {
    return ReportError("ingest", s, args.out);
  }
  if (args.out.json) {
    PrintJson(Json{{"ok", true}, {"files", args.files.size()}});
  } else {
    std::cout << "ingested " << args.files.size() << " table(s) into "
              << args.db << "\n";
  }
  return kExitOk;
}

// ---- dump ----

struct DumpArgs {
  OutputOptions out;
  std::string db;
  std::string from;
  std::string to;
  CLI::Option* from_opt = nullptr;
  CLI::Option* to_opt = nullptr;
  std::string format = "text";
  std::string file;
};

// Where dump entries go: a text dump or a table.
class DumpSink {
 public:
  virtual ~DumpSink() = default;
  virtual absl::Status Add(std::string_view key, std::string_view value) = 0;
  virtual absl::Status Finish() = 0;
};

class TextSink final : public DumpSink {
 public:
  explicit TextSink(const std::string& path)
      : path_(path), out_(path, std::ios::binary | std::ios::trunc) {
    out_ << kDumpHeader << "\n";
  }
  bool ok() const { return out_.good(); }
  absl::Status Add(std::string_view key, std::string_view value) override {
    out_ << EncodeDumpLine(key, value);
    return Check();
  }
  absl::Status Finish() override {
    out_.flush();
    out_.close();
    return Check();
  }

 private:
  absl::Status Check() const {
    if (out_.fail()) {
      return absl::UnavailableError(absl::StrCat(path_, ": write failed"));
    }
    return absl::OkStatus();
  }
  std::string path_;
  std::ofstream out_;
};

class TableSink final : public DumpSink {
 public:
  explicit TableSink(std::unique_ptr<TableFileWriter> writer)
      : writer_(std::move(writer)) {}
  absl::Status Add(std::string_view key, std::string_view value) override {
    ++entries_;
    return writer_->Put(key, value);
  }
  absl::Status Finish() override {
    if (entries_ == 0) {
      return absl::InvalidArgumentError(
          "the range holds no entries: no table written (a text dump of an "
          "empty range is its header line)");
    }
    return writer_->Finish().status();
  }

 private:
  std::unique_ptr<TableFileWriter> writer_;
  uint64_t entries_ = 0;
};

absl::StatusOr<std::unique_ptr<DumpSink>> NewDumpSink(const DumpArgs& args) {
  if (args.format == "table") {
    absl::StatusOr<std::unique_ptr<TableFileWriter>> writer =
        TableFileWriter::Open(Options(), args.file);
    if (!writer.ok()) return writer.status();
    return std::unique_ptr<DumpSink>(new TableSink(*std::move(writer)));
  }
  auto sink = std::make_unique<TextSink>(args.file);
  if (!sink->ok()) {
    return absl::UnavailableError(
        absl::StrCat(args.file, ": cannot create the dump file"));
  }
  return std::unique_ptr<DumpSink>(std::move(sink));
}

// Copy the entries of [from, to) to `sink`; *count receives how many.
absl::Status DumpRange(ReadOnlyDB* db, const std::optional<std::string>& from,
                       const std::optional<std::string>& to, DumpSink* sink,
                       uint64_t* count) {
  std::unique_ptr<Iterator> it = db->NewIterator();
  if (from) {
    it->Seek(*from);
  } else {
    it->SeekToFirst();
  }
  for (; it->Valid(); it->Next()) {
    if (to && it->key() >= std::string_view(*to)) break;
    if (absl::Status s = sink->Add(it->key(), it->value()); !s.ok()) return s;
    ++*count;
  }
  if (!it->status().ok()) return it->status();
  return sink->Finish();
}

int RunDump(const DumpArgs& args) {
  auto from = OptionalKey(args.from_opt, args.from, args.out);
  if (!from.ok()) return ReportUsageError("dump", from.status(), args.out);
  auto to = OptionalKey(args.to_opt, args.to, args.out);
  if (!to.ok()) return ReportUsageError("dump", to.status(), args.out);
  std::error_code ec;
  if (std::filesystem::exists(args.file, ec)) {
    return ReportUsageError(
        "dump",
        absl::InvalidArgumentError(absl::StrCat(
            "--out ", args.file, " already exists (dump writes a new file)")),
        args.out);
  }
  auto db = ReadOnlyDB::Open(args.db);
  if (!db.ok()) return ReportError("dump", db.status(), args.out);
  for (const std::string& damage : (*db)->log_damage()) {
    std::cerr << "kvtool dump: warning: " << damage << "\n";
  }
  absl::StatusOr<std::unique_ptr<DumpSink>> sink = NewDumpSink(args);
  if (!sink.ok()) return ReportError("dump", sink.status(), args.out);
  uint64_t count = 0;
  absl::Status s = DumpRange(db->get(), *from, *to, sink->get(), &count);
  sink->reset();
  if (!s.ok()) {
    std::filesystem::remove(args.file, ec);  // no partial dump left behind
    return ReportError("dump", s, args.out);
  }
  if (args.out.json) {
    PrintJson(Json{{"ok", true},
                   {"format", args.format},
                   {"file", args.file},
                   {"entries", count}});
  } else {
    std::cout << "dumped " << count << " entries to " << args.file << " ("
              << args.format << ")\n";
  }
  return kExitOk;
}

// ---- load ----

struct LoadArgs {
  OutputOptions out;
  std::string db;
  std::string file;
  bool create = false;
};

struct LoadResult {
  std::string method;  // "ingest" or "write"
  uint64_t entries = 0;
};

// First pass over a text dump: every line decodes, and whether the keys
// strictly increase (then the dump becomes one table). Nothing is written.
absl::Status ScanDump(const std::string& path, bool* sorted,
                      uint64_t* entries) {
  absl::StatusOr<std::unique_ptr<DumpReader>> reader = DumpReader::Open(path);
  if (!reader.ok()) return reader.status();
  *sorted = true;
  *entries = 0;
  std::string key, value, previous;
  while ((*reader)->Next(&key, &value)) {
    if (*entries > 0 && key <= previous) *sorted = false;
    previous.swap(key);
    ++*entries;
  }
  return (*reader)->status();
}

// A sorted dump: one table built next to the database's files (so that
// ingestion can link it), then ingested atomically.
absl::Status LoadSorted(DB* db, const std::string& dbname,
                        const std::string& path) {
  const std::string table =
      absl::StrCat(dbname, "/kvtool-load-", getpid(), ".sst.tmp");
  absl::Status s;
  {
    absl::StatusOr<std::unique_ptr<TableFileWriter>> writer =
        TableFileWriter::Open(Options(), table);
    if (!writer.ok()) return writer.status();
    absl::StatusOr<std::unique_ptr<DumpReader>> reader = DumpReader::Open(path);
    if (!reader.ok()) return reader.status();
    std::string key, value;
    while (s.ok() && (*reader)->Next(&key, &value)) {
      s = (*writer)->Put(key, value);
    }
    if (s.ok()) s = (*reader)->status();
    if (s.ok()) s = (*writer)->Finish().status();
  }
  if (s.ok()) {
    IngestOptions options;
    options.move_files = true;
    s = db->IngestExternalFiles({table}, options);
  }
  std::error_code ec;
  std::filesystem::remove(table, ec);
  return s;
}

// An unsorted dump: written with WriteBatch Puts, a batch per ~1 MiB (each
// batch is atomic, the load as a whole is not).
absl::Status LoadUnsorted(DB* db, const std::string& path) {
  absl::StatusOr<std::unique_ptr<DumpReader>> reader = DumpReader::Open(path);
  if (!reader.ok()) return reader.status();
  constexpr size_t kBatchBytes = size_t{1} << 20;
  WriteBatch batch;
  size_t bytes = 0;
  std::string key, value;
  while ((*reader)->Next(&key, &value)) {
    batch.Put(key, value);
    bytes += key.size() + value.size();
    if (bytes >= kBatchBytes) {
      if (absl::Status s = db->Write(WriteOptions(), &batch); !s.ok()) {
        return s;
      }
      batch.Clear();
      bytes = 0;
    }
  }
  if (!(*reader)->status().ok()) return (*reader)->status();
  if (batch.Count() > 0) return db->Write(WriteOptions(), &batch);
  return absl::OkStatus();
}

absl::StatusOr<LoadResult> Load(const LoadArgs& args) {
  absl::StatusOr<bool> text = IsTextDump(args.file);
  if (!text.ok()) return text.status();
  LoadResult result;
  bool sorted = false;
  if (*text) {
    // Checked before the database is opened: a bad line writes nothing.
    if (absl::Status s = ScanDump(args.file, &sorted, &result.entries);
        !s.ok()) {
      return s;
    }
  }
  absl::StatusOr<std::unique_ptr<DB>> db = OpenForWrite(args.db, args.create);
  if (!db.ok()) return db.status();
  absl::Status s;
  if (!*text) {
    result.method = "ingest";
    s = (*db)->IngestExternalFiles({args.file}, IngestOptions());
    if (!s.ok()) {
      s = absl::Status(
          s.code(),
          absl::StrCat(args.file, " is not a text dump (first line \"",
                       ToAbsl(kDumpHeader),
                       "\"), and as a table: ", s.message()));
    }
  } else if (result.entries == 0) {
    result.method = "none";
  } else if (sorted) {
    result.method = "ingest";
    s = LoadSorted(db->get(), args.db, args.file);
  } else {
    result.method = "write";
    s = LoadUnsorted(db->get(), args.file);
  }
  if (!s.ok()) return s;
  return result;
}

int RunLoad(const LoadArgs& args) {
  absl::StatusOr<LoadResult> r = Load(args);
  if (!r.ok()) return ReportError("load", r.status(), args.out);
  if (args.out.json) {
    PrintJson(
        Json{{"ok", true}, {"method", r->method}, {"entries", r->entries}});
  } else if (r->method == "ingest" && r->entries == 0) {
    std::cout << "ingested table " << args.file << " into " << args.db << "\n";
  } else {
    std::cout << "loaded " << r->entries << " entries into " << args.db << " ("
              << (r->method == "ingest"  ? "sorted: one table ingested"
                  : r->method == "write" ? "unsorted: batched writes"
                                         : "empty dump")
              << ")\n";
  }
  return kExitOk;
}

}  // namespace

void AddScaleOutCommands(CommandSet* commands) {
  {
    auto args = std::make_shared<CheckpointArgs>();
    CLI::App* sub = commands->Add(
        "checkpoint",
        "Write a consistent copy of DB into the new directory DIR (tables "
        "hard-linked where possible)",
        &args->out, [args] { return RunCheckpoint(*args); });
    sub->add_option("db", args->db, "Database directory")->required();
    sub->add_option("dir", args->dir, "Checkpoint directory (must not exist)")
        ->required();
  }
  {
    auto args = std::make_shared<IngestArgs>();
    CLI::App* sub = commands->Add(
        "ingest", "Add table files to DB atomically (all or none)", &args->out,
        [args] { return RunIngest(*args); });
    sub->add_option("db", args->db, "Database directory")->required();
    sub->add_option("files", args->files, "Table files (non-overlapping)")
        ->required();
    sub->add_flag("--move", args->move,
                  "Link the files into the database instead of copying them");
    sub->add_flag("--create", args->create,
                  "Create the database if it does not exist");
    sub->add_flag("--no_verify", args->no_verify,
                  "Skip the checksum check of the files' blocks");
  }
  {
    auto args = std::make_shared<DumpArgs>();
    CLI::App* sub = commands->Add(
        "dump",
        "Write the entries of DB in [--from, --to) to a text dump or a table",
        &args->out, [args] { return RunDump(*args); });
    sub->add_option("db", args->db, "Database directory")->required();
    args->from_opt =
        sub->add_option("--from", args->from, "First key (inclusive)");
    args->to_opt = sub->add_option("--to", args->to, "End key (exclusive)");
    sub->add_option("--format", args->format,
                    "text: portable escaped lines (doc/dump_format.md); "
                    "table: a table file for ingest")
        ->check(CLI::IsMember({"text", "table"}));
    sub->add_option("--out", args->file, "The file to write (must not exist)")
        ->required();
  }
  {
    auto args = std::make_shared<LoadArgs>();
    CLI::App* sub = commands->Add(
        "load",
        "Load a text dump (sorted: built into one table and ingested; "
        "unsorted: batched writes) or a table file (ingested) into DB",
        &args->out, [args] { return RunLoad(*args); });
    sub->add_option("db", args->db, "Database directory")->required();
    sub->add_option("file", args->file, "Text dump or table file")->required();
    sub->add_flag("--create", args->create,
                  "Create the database if it does not exist");
  }
}

}  // namespace sift::tools
