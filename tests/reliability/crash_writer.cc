// crash_writer: the victim of the process-kill campaign
// (process_kill_test.cc). It opens a database on disk with small write
// buffers and tables, so that flushes and compactions happen all the time, and
// runs random puts, deletes and batches (some with sync=true) until it is
// killed. Before each operation it journals its intent, after the DB
// acknowledges it journals the ack (see journal.h), so that whoever kills it
// knows exactly what the database must hold.
//
//   crash_writer DB_DIR JOURNAL SEED [--threads=N] [--fsync-journal]
//                [--max-ops=N]
//
// With N threads (default 1), thread t writes only keys "t:key<n>" and
// journals to JOURNAL.t; --max-ops counts per thread.
// Exit status: killed by the test normally; 0 after --max-ops operations;
// 1 on bad arguments; 2 if the database fails (message on stderr).

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "sift/db.h"
#include "sift/options.h"
#include "sift/write_batch.h"
#include "tests/reliability/journal.h"
#include "util/random.h"

namespace sift::reliability {
namespace {

constexpr int kNumKeys = 3000;

[[noreturn]] void Fail(std::string_view what, const absl::Status& s) {
  std::fprintf(stderr, "crash_writer: %.*s: %s\n",
               static_cast<int>(what.size()), what.data(),
               s.ToString().c_str());
  std::fflush(stderr);
  std::_Exit(2);
}

// Thread `thread` owns the keys "<thread>:key<n>".
std::string KeyFor(Random* rnd, int thread) {
  // A tenth of the writes go to 50 hot keys, so keys are overwritten and
  // deleted many times and compactions have versions to drop.
  const uint64_t k = rnd->OneIn(10) ? rnd->Uniform(50) : rnd->Uniform(kNumKeys);
  return absl::StrFormat("%d:key%05d", thread, k);
}

std::string ValueFor(Random* rnd, uint64_t seed, uint64_t op_id) {
  // Unique per (run, op) so an old value is never mistaken for a new one.
  std::string v = absl::StrCat("v", seed, ".", op_id, ".");
  const size_t len = 8 + rnd->Uniform(300);
  while (v.size() < len) v.push_back(static_cast<char>('a' + rnd->Uniform(26)));
  return v;
}

// One writer thread: random operations on its own keys, each journaled
// before (intent) and after (ack) the DB call.
void WriteLoop(DB* db, int thread, JournalWriter* journal, uint64_t seed,
               uint64_t max_ops) {
  Random rnd(seed);
  for (uint64_t op_id = 1; max_ops == 0 || op_id <= max_ops; ++op_id) {
    JournalOp op;
    op.id = op_id;
    op.sync = rnd.OneIn(8);
    const uint64_t kind = rnd.Uniform(100);
    const int n = kind < 75 ? 1 : 2 + static_cast<int>(rnd.Uniform(7));
    for (int i = 0; i < n; ++i) {
      JournalUpdate u;
      u.key = KeyFor(&rnd, thread);
      u.is_delete = kind < 75 ? kind >= 60 : rnd.OneIn(4);
      if (!u.is_delete) u.value = ValueFor(&rnd, seed, op_id);
      op.updates.push_back(std::move(u));
    }
    if (absl::Status s = journal->LogIntent(op); !s.ok()) Fail("journal", s);
    WriteOptions wo;
    wo.sync = op.sync;
    absl::Status s;
    if (kind < 60) {
      s = db->Put(wo, op.updates[0].key, op.updates[0].value);
    } else if (kind < 75) {
      s = db->Delete(wo, op.updates[0].key);
    } else {
      WriteBatch batch;
      for (const JournalUpdate& u : op.updates) {
        if (u.is_delete) {
          batch.Delete(u.key);
        } else {
          batch.Put(u.key, u.value);
        }
      }
      s = db->Write(wo, &batch);
    }
    if (!s.ok()) Fail(absl::StrCat("op ", op_id), s);
    if (s = journal->LogAck(op_id); !s.ok()) Fail("journal", s);

    // Now and then ask for the expensive things explicitly too, so a kill
    // can land in the middle of them.
    if (thread == 0 && rnd.OneIn(400)) {
      if (s = db->Flush(); !s.ok()) Fail("flush", s);
    }
    if (thread == 0 && rnd.OneIn(1500)) {
      const std::string a = KeyFor(&rnd, thread);
      const std::string b = KeyFor(&rnd, thread);
      const std::string lo = std::min(a, b);
      const std::string hi = std::max(a, b);
      if (s = db->CompactRange(&lo, &hi); !s.ok()) Fail("compact", s);
    }
  }
}

int Run(const std::string& dbname, const std::string& journal_path,
        uint64_t seed, int threads, bool fsync_journal, uint64_t max_ops) {
  // Start the journals (truncating any old ones) before anything else, so
  // that a kill during Open leaves empty journals, not stale ones.
  std::vector<JournalWriter> journals;
  for (int t = 0; t < threads; ++t) {
    absl::StatusOr<JournalWriter> journal =
        JournalWriter::Open(absl::StrCat(journal_path, ".", t), fsync_journal);
    if (!journal.ok()) Fail("journal", journal.status());
    journals.push_back(*std::move(journal));
  }
  Options options;
  options.create_if_missing = true;
  options.write_buffer_size = 32 << 10;
  options.max_file_size = 64 << 10;
  options.block_size = 1024;
  absl::StatusOr<std::unique_ptr<DB>> opened = DB::Open(options, dbname);
  if (!opened.ok()) Fail("open", opened.status());
  std::unique_ptr<DB> db = *std::move(opened);

  // Several threads make the writes commit in groups.
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back(WriteLoop, db.get(), t, &journals[t],
                         seed * 1000 + static_cast<uint64_t>(t), max_ops);
  }
  for (std::thread& w : workers) w.join();
  return 0;
}

}  // namespace
}  // namespace sift::reliability

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr,
                 "usage: crash_writer DB_DIR JOURNAL SEED [--threads=N] "
                 "[--fsync-journal] [--max-ops=N]\n");
    return 1;
  }
  uint64_t seed = 0;
  if (!absl::SimpleAtoi(argv[3], &seed)) {
    std::fprintf(stderr, "crash_writer: bad seed %s\n", argv[3]);
    return 1;
  }
  bool fsync_journal = false;
  uint64_t max_ops = 0;
  int threads = 1;
  for (int i = 4; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--fsync-journal") {
      fsync_journal = true;
    } else if (arg.substr(0, 10) == "--threads=" &&
               absl::SimpleAtoi(
                   absl::string_view(arg.data() + 10, arg.size() - 10),
                   &threads) &&
               threads >= 1) {
    } else if (arg.substr(0, 10) == "--max-ops=" &&
               absl::SimpleAtoi(
                   absl::string_view(arg.data() + 10, arg.size() - 10),
                   &max_ops)) {
    } else {
      std::fprintf(stderr, "crash_writer: bad argument %s\n", argv[i]);
      return 1;
    }
  }
  return sift::reliability::Run(argv[1], argv[2], seed, threads, fsync_journal,
                                max_ops);
}
