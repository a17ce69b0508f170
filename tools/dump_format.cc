#include "tools/dump_format.h"

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "tools/output.h"

namespace sift::tools {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Inverse of Escape for one field that starts at column `column` (1-based)
// of its line.
absl::Status Unescape(std::string_view field, size_t column, std::string* out) {
  out->clear();
  for (size_t i = 0; i < field.size(); ++i) {
    const char c = field[i];
    const auto u = static_cast<unsigned char>(c);
    if (c != '\\') {
      if (u < 0x20 || u >= 0x7f) {
        return absl::InvalidArgumentError(absl::StrCat(
            "column ", column + i, ": byte 0x", Hex(std::string_view(&c, 1)),
            " must be escaped as \\x", Hex(std::string_view(&c, 1))));
      }
      out->push_back(c);
      continue;
    }
    if (i + 1 < field.size() && field[i + 1] == '\\') {
      out->push_back('\\');
      ++i;
    } else if (i + 3 < field.size() && field[i + 1] == 'x' &&
               HexValue(field[i + 2]) >= 0 && HexValue(field[i + 3]) >= 0) {
      out->push_back(static_cast<char>(HexValue(field[i + 2]) * 16 +
                                       HexValue(field[i + 3])));
      i += 3;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("column ", column + i,
                       ": a backslash must start \\\\ or \\xNN (two hex "
                       "digits)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::string EncodeDumpLine(std::string_view key, std::string_view value) {
  return absl::StrCat(Escape(key), "\t", Escape(value), "\n");
}

absl::Status DecodeDumpLine(std::string_view line, std::string* key,
                            std::string* value) {
  const size_t tab = line.find('\t');
  if (tab == std::string_view::npos) {
    return absl::InvalidArgumentError(
        "no tab between key and value (expected <key>\\t<value>)");
  }
  if (line.find('\t', tab + 1) != std::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "column ", line.find('\t', tab + 1) + 1,
        ": a second tab (tabs inside keys and values are escaped as \\x09)"));
  }
  if (absl::Status s = Unescape(line.substr(0, tab), 1, key); !s.ok()) {
    return s;
  }
  return Unescape(line.substr(tab + 1), tab + 2, value);
}

absl::StatusOr<bool> IsTextDump(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in.is_open()) {
    const int err = errno;
    const std::string msg = absl::StrCat(path, ": ", std::strerror(err));
    return err == ENOENT ? absl::NotFoundError(msg)
                         : absl::UnavailableError(msg);
  }
  std::string head(kDumpHeader.size() + 1, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  if (in.gcount() != static_cast<std::streamsize>(head.size())) return false;
  return head == absl::StrCat(ToAbsl(kDumpHeader), "\n");
}

absl::StatusOr<std::unique_ptr<DumpReader>> DumpReader::Open(
    const std::string& path) {
  absl::StatusOr<bool> is_dump = IsTextDump(path);
  if (!is_dump.ok()) return is_dump.status();
  if (!*is_dump) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ":1: not a text dump (the first line must be \"",
                     ToAbsl(kDumpHeader), "\")"));
  }
  std::ifstream in(path, std::ios::binary);
  std::string header;
  std::getline(in, header);
  return std::unique_ptr<DumpReader>(new DumpReader(path, std::move(in)));
}

bool DumpReader::Next(std::string* key, std::string* value) {
  if (!status_.ok()) return false;
  if (!std::getline(in_, line_)) {
    if (in_.bad()) {
      status_ = absl::UnavailableError(
          absl::StrCat(path_, ": read error after line ", line_number_));
    }
    return false;
  }
  ++line_number_;
  if (in_.eof()) {
    // getline stopped at the end of the file, not at a newline: a dump cut
    // short (every line, the last included, ends in a newline).
    status_ = absl::InvalidArgumentError(absl::StrCat(
        path_, ":", line_number_,
        ": the last line has no newline (is the dump truncated?)"));
    return false;
  }
  if (absl::Status s = DecodeDumpLine(line_, key, value); !s.ok()) {
    status_ = absl::InvalidArgumentError(
        absl::StrCat(path_, ":", line_number_, ": ", s.message()));
    return false;
  }
  return true;
}

}  // namespace sift::tools
