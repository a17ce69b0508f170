#include "tools/output.h"

#include <cstdio>
#include <iostream>

#include "absl/strings/str_format.h"

namespace sift::tools {

namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string Escape(std::string_view bytes) {
  std::string result;
  result.reserve(bytes.size());
  for (char c : bytes) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\\') {
      result += "\\\\";
    } else if (u >= 0x20 && u < 0x7f) {
      result += c;
    } else {
      result += "\\x";
      result += kHexDigits[u >> 4];
      result += kHexDigits[u & 0xf];
    }
  }
  return result;
}

std::string Hex(std::string_view bytes) {
  std::string result;
  result.reserve(2 * bytes.size());
  for (char c : bytes) {
    const auto u = static_cast<unsigned char>(c);
    result += kHexDigits[u >> 4];
    result += kHexDigits[u & 0xf];
  }
  return result;
}

absl::StatusOr<std::string> ParseHex(std::string_view text) {
  if (text.size() % 2 != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "hex argument \"%s\" has an odd number of digits", Escape(text)));
  }
  std::string result;
  result.reserve(text.size() / 2);
  for (size_t i = 0; i < text.size(); i += 2) {
    const int hi = HexValue(text[i]);
    const int lo = HexValue(text[i + 1]);
    if (hi < 0 || lo < 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "hex argument \"%s\" has a non-hex character at position %d",
          Escape(text), hi < 0 ? i : i + 1));
    }
    result += static_cast<char>(hi << 4 | lo);
  }
  return result;
}

std::string ShowBytes(std::string_view bytes, const OutputOptions& out) {
  return out.hex ? Hex(bytes) : Escape(bytes);
}

absl::StatusOr<std::string> ArgBytes(std::string_view arg,
                                     const OutputOptions& out) {
  if (out.hex) return ParseHex(arg);
  return std::string(arg);
}

std::string HumanBytes(uint64_t bytes) {
  if (bytes < 1024) return absl::StrFormat("%d bytes", bytes);
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = -1;
  while (value >= 1024 && unit < 3) {
    value /= 1024;
    ++unit;
  }
  return absl::StrFormat("%d bytes (%.1f %s)", bytes, value, kUnits[unit]);
}

std::string StatusCodeName(const absl::Status& status) {
  // Already upper case with underscores: "DATA_LOSS", "NOT_FOUND".
  return absl::StatusCodeToString(status.code());
}

int ReportError(std::string_view command, const absl::Status& status,
                const OutputOptions& out) {
  // Messages from the engine name the file already; keep them on one line.
  std::string message(status.message());
  for (char& c : message) {
    if (c == '\n') c = ' ';
  }
  std::cerr << "kvtool " << command << ": " << message << "\n";
  if (out.json) {
    PrintJson(Json{{"error", message}, {"code", StatusCodeName(status)}});
  }
  return kExitDataError;
}

int ReportUsageError(std::string_view command, const absl::Status& status,
                     const OutputOptions& out) {
  ReportError(command, status, out);
  return kExitUsage;
}

Json ProblemsJson(const std::vector<Problem>& problems) {
  Json result = Json::array();
  for (const Problem& p : problems) {
    Json j{{"offset", p.offset}, {"message", p.message}};
    if (p.torn_tail) j["torn_tail"] = true;
    result.push_back(std::move(j));
  }
  return result;
}

void PrintJson(const Json& doc) {
  // Strings we emit are escaped ASCII; `replace` guards against anything else
  // instead of throwing mid-output.
  std::cout << doc.dump(2, ' ', false, Json::error_handler_t::replace) << "\n";
}

}  // namespace sift::tools
