#include "util/logging.h"

#include <memory>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "sift/env.h"

namespace sift {
namespace {

std::string ReadAll(Env* env, const std::string& fname) {
  auto file = env->NewSequentialFile(fname);
  EXPECT_TRUE(file.ok()) << file.status();
  std::string out;
  char buf[4096];
  for (;;) {
    std::string_view got;
    EXPECT_TRUE((*file)->Read(sizeof(buf), &got, buf).ok());
    if (got.empty()) break;
    out.append(got.data(), got.size());
  }
  return out;
}

TEST(LoggingTest, NumberToString) {
  EXPECT_EQ(NumberToString(0), "0");
  EXPECT_EQ(NumberToString(7), "7");
  EXPECT_EQ(NumberToString(1234567890), "1234567890");
  EXPECT_EQ(NumberToString(18446744073709551615ull), "18446744073709551615");
  std::string s = "n=";
  AppendNumberTo(&s, 42);
  EXPECT_EQ(s, "n=42");
}

TEST(LoggingTest, EscapeString) {
  EXPECT_EQ(EscapeString("plain key"), "plain key");
  EXPECT_EQ(EscapeString(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(EscapeString("\xff\x7f\n"), "\\xff\\x7f\\x0a");
  EXPECT_EQ(EscapeString("back\\slash"), "back\\\\slash");
  // One-to-one: the text "\x00" and the byte 0 print differently.
  EXPECT_NE(EscapeString("\\x00"), EscapeString(std::string(1, '\0')));
  std::string s = "key=";
  AppendEscapedStringTo(&s, "\x01");
  EXPECT_EQ(s, "key=\\x01");
}

TEST(LoggingTest, ConsumeDecimalNumber) {
  std::string_view in = "123abc";
  uint64_t v = 0;
  ASSERT_TRUE(ConsumeDecimalNumber(&in, &v));
  EXPECT_EQ(v, 123u);
  EXPECT_EQ(in, "abc");
  EXPECT_FALSE(ConsumeDecimalNumber(&in, &v));
  EXPECT_EQ(in, "abc");

  std::string_view max = "18446744073709551615";
  ASSERT_TRUE(ConsumeDecimalNumber(&max, &v));
  EXPECT_EQ(v, 18446744073709551615ull);
  EXPECT_TRUE(max.empty());
  std::string_view over = "18446744073709551616";
  EXPECT_FALSE(ConsumeDecimalNumber(&over, &v));
  EXPECT_EQ(over, "18446744073709551616");
  std::string_view empty;
  EXPECT_FALSE(ConsumeDecimalNumber(&empty, &v));
}

TEST(LoggingTest, LoggerWritesTimestampedLines) {
  std::unique_ptr<Env> env = NewMemEnv(Env::Default());
  {
    auto logger = Logger::Open(env.get(), "/db/LOG");
    ASSERT_TRUE(logger.ok()) << logger.status();
    (*logger)->Log("first message");
    (*logger)->Logf("flushed %d bytes to %s", 4096, "000005.sst");
    (*logger)->Log("ends with newline\n");
    EXPECT_TRUE((*logger)->status().ok());
  }
  const std::string text = ReadAll(env.get(), "/db/LOG");
  const std::regex line(R"(\d{4}/\d\d/\d\d-\d\d:\d\d:\d\d\.\d{6} ([^\n]*)\n)");
  std::vector<std::string> messages;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), line);
       it != std::sregex_iterator(); ++it) {
    messages.push_back((*it)[1]);
  }
  EXPECT_EQ(messages, (std::vector<std::string>{
                          "first message", "flushed 4096 bytes to 000005.sst",
                          "ends with newline"}))
      << text;
}

TEST(LoggerConcurrencyTest, LinesAreNotInterleaved) {
  std::unique_ptr<Env> env = NewMemEnv(Env::Default());
  {
    auto logger = Logger::Open(env.get(), "/LOG");
    ASSERT_TRUE(logger.ok());
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < 200; ++i) {
          (*logger)->Log(std::string(50, static_cast<char>('a' + t)));
        }
      });
    }
    for (auto& th : threads) th.join();
  }
  const std::string text = ReadAll(env.get(), "/LOG");
  const std::regex line(R"(\S+ (a{50}|b{50}|c{50}|d{50})\n)");
  size_t lines = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), line);
       it != std::sregex_iterator(); ++it) {
    ++lines;
  }
  EXPECT_EQ(lines, 800u);
}

}  // namespace
}  // namespace sift
