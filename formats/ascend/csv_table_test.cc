#include "formats/ascend/csv_table.h"

#include <gtest/gtest.h>

#include "formats/errors.h"
#include "formats/formats_test_util.h"

namespace moetrace {
namespace {

using testing_formats::ErrorOf;

TEST(CsvTable, QuotedFieldsWithCommasQuotesAndNewlines) {
  CsvTable t = CsvTable::Parse(
      "Name,Input Shapes,Start Time(us)\r\n"
      "Cast,\"\"\"4,1025;2;2\"\"\",\"1736413971558972.912\t\"\r\n"
      "\n"
      "\"Multi\nLine\",\"a,\"\"b\"\"\",7\n",
      "k.csv");
  ASSERT_EQ(t.row_count(), 2u);
  EXPECT_EQ(t.line(0), 2);
  EXPECT_EQ(t.line(1), 4);
  int shapes = t.Require("Input Shapes");
  EXPECT_EQ(t.Field(0, shapes), "4,1025;2;2");
  EXPECT_EQ(t.MicrosNs(0, t.Require("Start Time(us)")), 1736413971558972912);
  EXPECT_EQ(t.Field(1, 0), "Multi\nLine");
  EXPECT_EQ(t.Field(1, shapes), "a,\"b\"");
  EXPECT_EQ(t.Int(1, 2), 7);
  EXPECT_EQ(t.Find("Missing"), -1);
  EXPECT_EQ(t.Field(0, 9), "");  // short row
}

TEST(CsvTable, ErrorsNameFileLineAndColumn) {
  CsvTable t = CsvTable::Parse("Name,Duration(us)\nA,1.5\nB,fast\n", "kernel_details.csv");
  EXPECT_EQ(ErrorOf([&] { t.Require("Start Time(us)"); }),
            "kernel_details.csv: line 1: missing column 'Start Time(us)' in the header");
  EXPECT_EQ(ErrorOf([&] { t.MicrosNs(1, 1); }),
            "kernel_details.csv: line 3: column 'Duration(us)': expected a number, got 'fast'");
  EXPECT_EQ(ErrorOf([] { CsvTable::Parse("", "e.csv"); }),
            "e.csv: line 1: expected a CSV header, found an empty file");
  EXPECT_EQ(ErrorOf([] { CsvTable::Parse("A,B\n1,\"open\n", "q.csv"); }),
            "q.csv: line 2: unterminated quoted field");
}

// A short row in the file is read (its missing fields absent) and counted;
// a short last row that the file ends inside is a file cut short.
TEST(CsvTable, ShortRowsAreCountedAndACutLastRowIsAnError) {
  CsvTable t = CsvTable::Parse("A,B,C\n1,2,3\n4,5\n6,7,8", "k.csv");
  EXPECT_EQ(t.row_count(), 3u);
  EXPECT_EQ(t.short_rows(), 1);
  EXPECT_EQ(t.Field(1, 2), "");
  EXPECT_EQ(CsvTable::Parse("A,B,C\n1,2\n", "k.csv").short_rows(), 1);  // ends with its line end
  EXPECT_EQ(ErrorOf([] { CsvTable::Parse("A,B,C\n1,2,3\n4,5", "k.csv"); }),
            "k.csv: line 3: the file ends inside a row (2 of 3 fields): truncated");
}

// Fields are split in place: quoted parts collapse where they are, plain
// text before or after them stays, and spans never run into the next field.
TEST(CsvTable, InPlaceSplitKeepsEveryFieldExact) {
  CsvTable t = CsvTable::Parse(
      "\xEF\xBB\xBF"
      "A,B,C,D\r\n"
      "  \"x\"\"y\" ,z\"q,\"ab\"cd,a\rb\r\n"
      "\"a\"  \"b\",\"\",\"\"\"\",last",
      "t.csv");
  ASSERT_EQ(t.header().size(), 4u);
  EXPECT_EQ(t.header()[0], "A");  // the BOM is not part of the first name
  ASSERT_EQ(t.row_count(), 2u);
  EXPECT_EQ(t.Field(0, 0), "x\"y");
  EXPECT_EQ(t.Field(0, 1), "z\"q");    // a quote after text is text
  EXPECT_EQ(t.Field(0, 2), "abcd");     // text after the closing quote is kept
  EXPECT_EQ(t.Field(0, 3), "a\rb");    // a lone CR is text, CRLF ends the row
  EXPECT_EQ(t.Field(1, 0), "a  \"b\"");  // one quoted part per field
  EXPECT_EQ(t.Field(1, 1), "");
  EXPECT_EQ(t.Field(1, 2), "\"");     // '""""' is one quote
  EXPECT_EQ(t.Field(1, 3), "last");   // no newline at the end
  EXPECT_EQ(t.line(1), 3);
}

TEST(CsvTable, FieldOver16MiBIsAnError) {
  std::string text = "A\n" + std::string((size_t{1} << 24), 'x') + "\n";
  EXPECT_EQ(ErrorOf([&] { CsvTable::Parse(text, "big.csv"); }),
            "big.csv: line 2: a field longer than 16 MiB");
}

TEST(CsvTable, TablesOfOneThreadKeepTheirOwnText) {
  // The thread lends its kept buffers (kept_buffer.h) to one table at a
  // time: a table read while another is alive must not share its text or
  // lists, and a table after a larger one must not see the older rows.
  CsvTable big = CsvTable::Parse("A,B\n1,2\n3,4\n5,6\n7,8\n", "big.csv");
  CsvTable small = CsvTable::Parse("C\n\"x,y\"\n", "small.csv");
  ASSERT_EQ(big.row_count(), 4u);
  ASSERT_EQ(small.row_count(), 1u);
  EXPECT_EQ(big.Field(3, 1), "8");
  EXPECT_EQ(small.Field(0, 0), "x,y");
  big = CsvTable::Parse("D,E\n9,10\n", "moved.csv");  // the old table's buffers go back
  EXPECT_EQ(big.row_count(), 1u);
  EXPECT_EQ(big.header(), (std::vector<std::string>{"D", "E"}));
  EXPECT_EQ(big.Field(0, 1), "10");
  EXPECT_EQ(big.Field(1 - 1, 2), "");
  EXPECT_EQ(small.Field(0, 0), "x,y");
}

TEST(CsvTable, HeaderProbe) {
  EXPECT_TRUE(CsvHeaderHas("Step Id,Name,Type\n1,a,b", "Name"));
  EXPECT_FALSE(CsvHeaderHas("Step Id,Op Name,Type\n", "Name"));
  EXPECT_FALSE(CsvHeaderHas("Step Id,Type\nName", "Name"));
}

}  // namespace
}  // namespace moetrace
