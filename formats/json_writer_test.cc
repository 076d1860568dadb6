#include "formats/json_writer.h"

#include <gtest/gtest.h>

#include <cmath>

namespace moetrace {
namespace {

TEST(JsonWriter, CompactDocument) {
  JsonWriter w(/*pretty=*/false);
  w.BeginObject();
  w.Key("a").Int(-3).Key("b").Double(0.1).Key("c").Double(2.0).Key("d").Double(std::nan(""));
  w.Key("e").BeginArray().Uint(18446744073709551615ull).Bool(true).Null().EndArray();
  w.Key("f").BeginObject().EndObject().Key("g").String("<a \"x\"\n>").Key("h").Raw("{\"k\":1}");
  w.EndObject();
  EXPECT_EQ(w.str(),
            "{\"a\":-3,\"b\":0.1,\"c\":2,\"d\":null,\"e\":[18446744073709551615,true,null],"
            "\"f\":{},\"g\":\"\\u003ca \\\"x\\\"\\n\\u003e\",\"h\":{\"k\":1}}");
}

TEST(JsonWriter, PrettyIndentsByTwo) {
  JsonWriter w;
  w.BeginObject().Key("x").BeginArray().Int(1).Int(2).EndArray().EndObject();
  EXPECT_EQ(w.str(), "{\n  \"x\": [\n    1,\n    2\n  ]\n}\n");
}

}  // namespace
}  // namespace moetrace
