#include "formats/json_syntax.h"

#include <gtest/gtest.h>

#include "formats/errors.h"

namespace moetrace {
namespace {

std::string SyntaxErrorOf(std::string_view text) {
  try {
    ThrowIfMalformedJson("c.json", text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(JsonSyntax, NamesTheByteOfTheFirstError) {
  EXPECT_EQ(SyntaxErrorOf(R"({"a": {"b": [1, 2, "x"]}, "c": null})"), "");
  EXPECT_EQ(SyntaxErrorOf("[1, 2]"), "");
  EXPECT_EQ(SyntaxErrorOf("7"), "");
  EXPECT_EQ(SyntaxErrorOf(""), "c.json: byte 0: malformed JSON: Empty: no JSON found");
  EXPECT_EQ(SyntaxErrorOf(R"({"a": 1,})"),
            "c.json: byte 8: malformed JSON: The JSON document has an improper structure: missing or superfluous "
            "commas, braces, missing keys, etc.");
  EXPECT_EQ(SyntaxErrorOf(R"({"a": [1, 2)"), "c.json: byte 10: malformed JSON: Problem while parsing a number");
  EXPECT_EQ(SyntaxErrorOf(R"({"a": tru})"),
            "c.json: byte 6: malformed JSON: The JSON element does not have the requested type.");
  EXPECT_EQ(SyntaxErrorOf(R"({"a": 1} x)"), "c.json: byte 9: malformed JSON: Unexpected trailing content in the JSON input.");
  // Errors found while the whole text is indexed, before any value is read:
  // a text cut short, a string never closed, bytes that are not UTF-8.
  EXPECT_EQ(SyntaxErrorOf(R"({"a": [{"b": "x"}, )"),
            "c.json: byte 19: malformed JSON: The JSON document has an improper structure: missing or superfluous "
            "commas, braces, missing keys, etc.");
  EXPECT_EQ(SyntaxErrorOf(R"({"a": [1, 2], "b": [)").substr(0, 15), "c.json: byte 20");
  EXPECT_EQ(SyntaxErrorOf(R"({"a": "x\"", "b": "cut)").substr(0, 15), "c.json: byte 18");
  EXPECT_EQ(SyntaxErrorOf("{\"a\": \"ok\", \"b\": \"\xff\"}").substr(0, 15), "c.json: byte 18");
}

}  // namespace
}  // namespace moetrace
