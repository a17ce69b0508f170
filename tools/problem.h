#ifndef SIFT_TOOLS_PROBLEM_H_
#define SIFT_TOOLS_PROBLEM_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace sift::tools {

// Something wrong found at an offset of a file (the file is known from
// context).
struct Problem {
  uint64_t offset = 0;
  std::string message;  // what is wrong, without the file name
  // Not damage: the file ends inside a log record (the write in progress at
  // a crash), which recovery treats as the end of the log.
  bool torn_tail = false;
};

// `message` without a leading "<file>: " (messages from the engine name the
// file, which the reports show once per file already).
inline std::string StripFilePrefix(std::string_view message,
                                   std::string_view file) {
  if (message.size() > file.size() + 2 &&
      message.substr(0, file.size()) == file &&
      message.substr(file.size(), 2) == ": ") {
    message.remove_prefix(file.size() + 2);
  }
  return std::string(message);
}

}  // namespace sift::tools

#endif  // SIFT_TOOLS_PROBLEM_H_
