// scaleout_bench: the steps of bench/scale_out.sh (doc/scale-out.md), one
// per subcommand so that the script can run them in separate processes:
//   gen         write shard S of SHARDS as one table with TableFileWriter
//   ingest      ingest tables into a new database
//   fill        write the same keys into a new database with Put, in random
//               order (what kvbench fillrandom does)
//   checkpoint  time CreateCheckpoint of an existing database
// Keys and values are kvbench's (bench/kvbench/keys.h): the key space of
// SHARDS * NUM keys, shard S holding keys [S * NUM, (S + 1) * NUM). Each
// subcommand prints one line of name=value pairs on stdout.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "bench/kvbench/keys.h"
#include "sift/db.h"
#include "sift/options.h"
#include "sift/table_file_writer.h"

namespace sift::bench {
namespace {

double Seconds(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

int Fail(const std::string& step, const absl::Status& s) {
  std::cerr << "scaleout_bench " << step << ": " << s << "\n";
  return 1;
}

uint64_t Property(DB* db, const std::string& name) {
  std::optional<std::string> v = db->GetProperty(name);
  return v ? std::stoull(*v) : 0;
}

// Wait until background work stops writing: sift.bytes-written unchanged
// for a second. Returns the seconds waited.
double Settle(DB* db) {
  const auto start = std::chrono::steady_clock::now();
  uint64_t last = Property(db, "sift.bytes-written");
  for (int stable = 0; stable < 10;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const uint64_t now = Property(db, "sift.bytes-written");
    stable = now == last ? stable + 1 : 0;
    last = now;
  }
  return Seconds(start) - 1.0;  // less the quiet second itself
}

// Bytes of the database's table files.
uint64_t TableBytes(const std::string& dir) {
  uint64_t total = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() == ".sst") total += e.file_size();
  }
  return total;
}

struct Data {
  uint64_t num = 1000000;  // keys per shard (gen) or in all (fill)
  int shards = 4;
  int key_size = 16;
  int value_size = 100;
  uint64_t seed = 301;
};

void AddDataOptions(CLI::App* sub, Data* d) {
  sub->add_option("--num", d->num, "Keys per shard");
  sub->add_option("--shards", d->shards, "Shards in the key space");
  sub->add_option("--key_size", d->key_size, "Key bytes");
  sub->add_option("--value_size", d->value_size, "Value bytes");
  sub->add_option("--seed", d->seed, "Seed of values and order");
}

int Gen(const Data& d, int shard, const std::string& out) {
  const uint64_t total = d.num * static_cast<uint64_t>(d.shards);
  if (absl::Status s = KeySpace::Validate(total, d.key_size); !s.ok()) {
    return Fail("gen", s);
  }
  const KeySpace keys(total, d.key_size);
  const ValueSource values(d.value_size, d.seed);
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::unique_ptr<TableFileWriter>> writer =
      TableFileWriter::Open(Options(), out);
  if (!writer.ok()) return Fail("gen", writer.status());
  std::string key(static_cast<size_t>(d.key_size), '\0');
  const uint64_t first = static_cast<uint64_t>(shard) * d.num;
  for (uint64_t i = first; i < first + d.num; ++i) {
    keys.Present(i, key.data());
    if (absl::Status s = (*writer)->Put(key, values.Get(i)); !s.ok()) {
      return Fail("gen", s);
    }
  }
  absl::StatusOr<ExternalTableInfo> info = (*writer)->Finish();
  if (!info.ok()) return Fail("gen", info.status());
  std::cout << "gen shard=" << shard << " entries=" << d.num
            << " file_bytes=" << std::filesystem::file_size(out)
            << " seconds=" << Seconds(start) << "\n";
  return 0;
}

absl::StatusOr<std::unique_ptr<DB>> OpenNew(const std::string& path) {
  Options options;
  options.create_if_missing = true;
  options.error_if_exists = true;
  return DB::Open(options, path);
}

int Ingest(const std::string& path, const std::vector<std::string>& files,
           bool move) {
  auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::unique_ptr<DB>> db = OpenNew(path);
  if (!db.ok()) return Fail("ingest", db.status());
  IngestOptions options;
  options.move_files = move;
  if (absl::Status s = (*db)->IngestExternalFiles(files, options); !s.ok()) {
    return Fail("ingest", s);
  }
  const double seconds = Seconds(start);
  const double settle = Settle(db->get());
  std::cout << "ingest files=" << files.size() << " move=" << move
            << " seconds=" << seconds << " settle_seconds=" << settle
            << " db_bytes_written=" << Property(db->get(), "sift.bytes-written")
            << " table_bytes=" << TableBytes(path) << "\n";
  return 0;
}

int Fill(const Data& d, const std::string& path) {
  const uint64_t total = d.num * static_cast<uint64_t>(d.shards);
  if (absl::Status s = KeySpace::Validate(total, d.key_size); !s.ok()) {
    return Fail("fill", s);
  }
  const KeySpace keys(total, d.key_size);
  const ValueSource values(d.value_size, d.seed);
  const RandomOrder order(total, d.seed);
  auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::unique_ptr<DB>> db = OpenNew(path);
  if (!db.ok()) return Fail("fill", db.status());
  std::string key(static_cast<size_t>(d.key_size), '\0');
  for (uint64_t n = 0; n < total; ++n) {
    const uint64_t i = order.At(n);
    keys.Present(i, key.data());
    if (absl::Status s = (*db)->Put(WriteOptions(), key, values.Get(i));
        !s.ok()) {
      return Fail("fill", s);
    }
  }
  const double seconds = Seconds(start);
  if (absl::Status s = (*db)->Flush(); !s.ok()) return Fail("fill", s);
  const double settle = Settle(db->get());
  std::cout << "fill entries=" << total << " seconds=" << seconds
            << " settle_seconds=" << settle
            << " user_bytes=" << total * (d.key_size + d.value_size)
            << " db_bytes_written=" << Property(db->get(), "sift.bytes-written")
            << " table_bytes=" << TableBytes(path) << "\n";
  return 0;
}

int Checkpoint(const std::string& path, const std::string& dir) {
  Options options;
  absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options, path);
  if (!db.ok()) return Fail("checkpoint", db.status());
  const auto start = std::chrono::steady_clock::now();
  if (absl::Status s = (*db)->CreateCheckpoint(dir); !s.ok()) {
    return Fail("checkpoint", s);
  }
  std::cout << "checkpoint seconds=" << Seconds(start)
            << " table_bytes=" << TableBytes(dir) << "\n";
  return 0;
}

int Main(int argc, char** argv) {
  CLI::App app("The steps of bench/scale_out.sh (doc/scale-out.md)",
               "scaleout_bench");
  app.require_subcommand(1);
  Data data;
  int shard = 0;
  std::string out, db, dir;
  std::vector<std::string> files;
  bool move = false;

  CLI::App* gen = app.add_subcommand("gen", "Write one shard as a table");
  AddDataOptions(gen, &data);
  gen->add_option("--shard", shard, "Which shard (0-based)")->required();
  gen->add_option("--out", out, "Table file to write")->required();

  CLI::App* ingest =
      app.add_subcommand("ingest", "Ingest tables into a new database");
  ingest->add_option("--db", db, "New database directory")->required();
  ingest->add_flag("--move", move, "IngestOptions::move_files");
  ingest->add_option("files", files, "Table files")->required();

  CLI::App* fill = app.add_subcommand(
      "fill", "Put the keys of every shard into a new database, random order");
  AddDataOptions(fill, &data);
  fill->add_option("--db", db, "New database directory")->required();

  CLI::App* ckpt =
      app.add_subcommand("checkpoint", "Time CreateCheckpoint of a database");
  ckpt->add_option("--db", db, "Database directory")->required();
  ckpt->add_option("--dir", dir, "Checkpoint directory")->required();

  CLI11_PARSE(app, argc, argv);
  if (gen->parsed()) return Gen(data, shard, out);
  if (ingest->parsed()) return Ingest(db, files, move);
  if (fill->parsed()) return Fill(data, db);
  return Checkpoint(db, dir);
}

}  // namespace
}  // namespace sift::bench

int main(int argc, char** argv) { return sift::bench::Main(argc, argv); }
