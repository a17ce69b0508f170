// Uses only the installed public headers.
#include <cstdio>
#include <memory>
#include <string>

#include "sift/db.h"
#include "sift/env.h"

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const std::string path = argv[1];
  sift::Options options;
  options.create_if_missing = true;
  (void)sift::DestroyDB(path, options);
  auto db = sift::DB::Open(options, path);
  if (!db.ok()) {
    std::fprintf(stderr, "open: %s\n", db.status().ToString().c_str());
    return 1;
  }
  if (!(*db)->Put(sift::WriteOptions(), "hello", "world").ok()) return 1;
  std::string value;
  if (!(*db)->Get(sift::ReadOptions(), "hello", &value).ok() || value != "world") return 1;
  if (!absl::IsNotFound((*db)->Get(sift::ReadOptions(), "absent", &value))) return 1;
  db->reset();
  if (!sift::DestroyDB(path, options).ok()) return 1;
  std::puts("install check ok");
  return 0;
}
