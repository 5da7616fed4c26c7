// core/common/json: nlohmann/json's reader behind HComm's config errors (the
// line and column where the text stops being JSON, and why), and the writer's
// layout for people.
#include "core/common/json.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <string>

#include "core/common/error.hpp"

namespace hcomm {
namespace {

using Json = nlohmann::ordered_json;

std::string parse_error(const std::string& text) {
  try {
    json::parse(text);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), HCOMM_ERR_CONFIG) << e.what();
    return e.what();
  }
  return "(no error)";
}

TEST(Json, WriterKeepsDocumentOrderAndRows) {
  const Json v = {{"s", "quote \" backslash \\ tab \t newline \n \x01"},
                  {"n", {0, -3, 0.1, 1e-300, 12345678901234.5, 25.0, -0.0}},
                  {"big", {std::numeric_limits<uint64_t>::max(), std::numeric_limits<int64_t>::min()}},
                  {"b", {true, false, nullptr}},
                  {"empty", Json::object()},
                  {"matrix", {{1, 2}, {3, 4}}},
                  {"records", {{{"k", Json::array({1})}, {"v", 2}}, {{"k", Json::array({3})}, {"v", 4}}}},
                  {"nested", {Json::array(), {{"k", Json::array({1})}}}}};
  const std::string text = json::write(v);
  EXPECT_EQ(text, R"({
  "s": "quote \" backslash \\ tab \t newline \n \u0001",
  "n": [0, -3, 0.1, 1e-300, 12345678901234.5, 25, 0],
  "big": [18446744073709551615, -9223372036854775808],
  "b": [true, false, null],
  "empty": {},
  "matrix": [[1, 2], [3, 4]],
  "records": [
    {"k": [1], "v": 2},
    {"k": [3], "v": 4}
  ],
  "nested": [
    [],
    {"k": [1]}
  ]
}
)");
  // What was written reads back as the same values and the same text.
  const Json back = json::parse(text);
  EXPECT_EQ(back, v);
  EXPECT_EQ(json::write(back), text);
  EXPECT_EQ(back["s"], "quote \" backslash \\ tab \t newline \n \x01");
  EXPECT_EQ(back["n"][2].get<double>(), 0.1);
  EXPECT_EQ(back["big"][0].get<uint64_t>(), std::numeric_limits<uint64_t>::max());
}

TEST(Json, WriterPutsEachTopLevelMemberOnALine) {
  EXPECT_EQ(json::write(Json::array({{{"a", 1}}, {{"a", "x"}}})), "[\n  {\"a\": 1},\n  {\"a\": \"x\"}\n]\n");
  EXPECT_EQ(json::write(Json::array()), "[]\n");
  EXPECT_EQ(json::write(1.5), "1.5\n");
  // Not JSON numbers: null. Bytes that are not UTF-8: U+FFFD.
  EXPECT_EQ(json::write(Json::array({std::numeric_limits<double>::infinity(), std::nan("")})),
            "[\n  null,\n  null\n]\n");
  EXPECT_EQ(json::write("a\xff"), "\"a\xef\xbf\xbd\"\n");
}

TEST(Json, ReaderTakesUnicodeEscapes) {
  EXPECT_EQ(json::parse(R"("\u00e9\u0041")").get<std::string>(),
            "\xc3\xa9"
            "A");
  EXPECT_EQ(json::parse(R"("\ud83d\ude00")").get<std::string>(), "\xf0\x9f\x98\x80");
}

TEST(Json, BadJsonSaysWhereAndWhy) {
  EXPECT_EQ(parse_error("{\n  \"hosts\": [1, 2,\n  ]\n}"),
            "line 3, column 3: syntax error while parsing value - unexpected ']'; expected '[', '{', or a literal");
  EXPECT_EQ(parse_error("{\"a\": 1 \"b\": 2}"),
            "line 1, column 11: syntax error while parsing object - unexpected string literal; expected '}'");
  EXPECT_EQ(parse_error("[1, 2"),
            "line 1, column 6: syntax error while parsing array - unexpected end of input; expected ']'");
  EXPECT_EQ(parse_error("{\"a\" 1}"),
            "line 1, column 6: syntax error while parsing object separator - unexpected number literal; expected ':'");
  EXPECT_EQ(parse_error("\"abc"),
            "line 1, column 5: syntax error while parsing value - invalid string: missing closing quote; last read: "
            "'\"abc'");
  EXPECT_EQ(parse_error("[1x]"),
            "line 1, column 3: syntax error while parsing array - invalid literal; last read: '1x'; expected ']'");
  EXPECT_EQ(parse_error("-"),
            "line 1, column 2: syntax error while parsing value - invalid number; expected digit after '-'; last read: "
            "'-'");
  EXPECT_EQ(parse_error("{} x"),
            "line 1, column 4: syntax error while parsing value - invalid literal; last read: '{} x'; expected end of "
            "input");
  EXPECT_EQ(parse_error(""),
            "line 1, column 1: syntax error while parsing value - unexpected end of input; expected '[', '{', or a "
            "literal");
  EXPECT_EQ(parse_error("[\"\xff\"]"),
            "line 1, column 3: syntax error while parsing value - invalid string: ill-formed UTF-8 byte; last read: "
            "'\"\xff'");
}

// The faults nlohmann reports without a position: too deep, too big.
TEST(Json, DepthAndRangeErrorsSayWhere) {
  EXPECT_EQ(parse_error(std::string(100, '[')), "line 1, column 65: nesting deeper than 64 levels");
  // Brackets and quotes inside strings do not count; objects nest as arrays do.
  EXPECT_EQ(parse_error("[\"\\\"[[{\",\n" + std::string(70, '[')), "line 2, column 64: nesting deeper than 64 levels");
  std::string objects;
  for (int i = 0; i < 70; ++i) objects += "{\"a\": ";
  EXPECT_EQ(parse_error(objects), "line 1, column 385: nesting deeper than 64 levels");
  EXPECT_EQ(parse_error("[1e5, \"1e999\",\n -1e400]"), "line 2, column 2: number out of range");
  EXPECT_EQ(parse_error("1" + std::string(400, '0')), "line 1, column 1: number out of range");
  // The deepest nesting allowed, and a tiny number, read.
  const Json deep = json::parse(std::string(64, '[') + std::string(64, ']'));
  EXPECT_EQ(json::write(json::parse(json::write(deep))), json::write(deep));
  EXPECT_EQ(json::parse("1e-400").get<double>(), 0.0);
}

TEST(Json, NulBytesAreErrors) {
  EXPECT_EQ(parse_error(std::string("{}\0x", 4)), "line 1, column 3: a NUL byte (JSON text holds none)");
  EXPECT_EQ(parse_error(std::string("[\"a\0\"]", 6)), "line 1, column 4: a NUL byte (JSON text holds none)");
  EXPECT_EQ(parse_error(std::string("[1,\n\0", 5)), "line 2, column 1: a NUL byte (JSON text holds none)");
}

}  // namespace
}  // namespace hcomm
