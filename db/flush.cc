#include "db/flush.h"

#include <cassert>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "db/builder.h"
#include "db/filter_allocation.h"
#include "db/obsolete_files.h"

namespace sift {

absl::Status WriteMemTableToTable(DBState& state, MemTable* mem,
                                  VersionEdit* edit, const Version* base,
                                  std::vector<PendingOutput>* tables) {
  const uint64_t start_micros = state.env->NowMicros();
  // Protects the file from DeleteObsoleteFiles until the edit naming it is
  // applied (the caller keeps the guard until then).
  PendingOutput table = state.NewPendingOutput();
  FileMetaData meta;
  meta.number = table.number();
  std::unique_ptr<Iterator> iter = mem->NewIterator();
  const uint64_t entries = mem->NumEntries();
  // The level is picked before the table is written: its filter is sized for
  // it. Only the background thread changes the version, so it stays current
  // while the mutex is released.
  int level = 0;
  iter->SeekToFirst();
  if (base != nullptr && iter->Valid()) {
    const std::string smallest(ExtractUserKey(iter->key()));
    iter->SeekToLast();
    level =
        base->PickLevelForMemTableOutput(smallest, ExtractUserKey(iter->key()));
  }
  const std::shared_ptr<const Version> current = state.versions->current();

  absl::Status s;
  {
    state.mutex.Unlock();
    TableOptions table_options = state.table_cache->table_options();
    table_options.filter_bits_per_key =
        FilterBitsForFlush(state.options, *current, level, iter.get());
    s = BuildTable(state.dbname, state.env, state.options, table_options,
                   state.table_cache.get(), iter.get(), &meta);
    if (s.ok() && meta.file_size > 0) {
      // The table's directory entry must be durable before a MANIFEST
      // names it, or a crash could leave the MANIFEST pointing at nothing.
      s = state.env->SyncDir(state.dbname);
    }
    state.mutex.Lock();
  }

  if (s.ok() && meta.file_size > 0) {
    edit->AddFile(level, meta);
    CompactionStats& stats = state.level_stats[level];
    stats.micros += state.env->NowMicros() - start_micros;
    stats.bytes_written += meta.file_size;
    stats.output_files += 1;
    stats.entries_read += entries;
    tables->push_back(std::move(table));
  }
  state.Log(absl::StrCat("flush: table #", meta.number, " (", entries,
                         " entries, ", meta.file_size, " bytes) to level ",
                         level, ": ", s.ToString()));
  return s;
}

absl::Status FlushImmutableMemTable(DBState& state, bool pick_level) {
  assert(state.imm() != nullptr);
  const std::shared_ptr<MemTable> imm = state.imm();
  // Only the background thread changes the version, so `base` stays current
  // while the mutex is released.
  const std::shared_ptr<const Version> base = state.versions->current();

  VersionEdit edit;
  std::vector<PendingOutput> tables;
  absl::Status s = WriteMemTableToTable(
      state, imm.get(), &edit, pick_level ? base.get() : nullptr, &tables);
  if (s.ok()) {
    // Every WAL before the current one held only writes of imm (or of
    // memtables flushed earlier): they are obsolete once this edit lands.
    edit.SetLogNumber(state.logfile_number());
    s = state.versions->LogAndApply(&edit, &state.mutex);
  }
  if (s.ok()) {
    // The version names the table now: its guard may go.
    tables.clear();
    state.DropImmutableMemTable();  // publishes the new version too
    DeleteObsoleteFiles(state);
  } else {
    // Writers waiting for room would wait forever: fail them instead. The
    // table (if written) stays pending, so it is never deleted while an
    // abandoned MANIFEST might name it.
    for (PendingOutput& table : tables) table.KeepPending();
    state.RecordBackgroundError(s);
  }
  state.bg_cv.SignalAll();
  return s;
}

}  // namespace sift
