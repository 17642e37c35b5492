// The printers (table, CSV, JSON), cell formatting and the statistics helpers.
#include <gtest/gtest.h>

#include <sstream>

#include "tests/stats/nsys_test_db.h"
#include "tools/stats/statistics.h"
#include "tools/stats/table.h"

namespace gt::stats {
namespace {

std::string Print(const Table& table, Format format) {
  std::ostringstream out;
  WriteTable(table, format, out);
  return out.str();
}

Table SampleTable() {
  Table table;
  table.report = "demo_sum";
  table.title = "Demo Summary";
  table.columns = {{"Time (%)", Align::kRight},
                   {"Total Time (ns)", Align::kRight},
                   {"Avg (ns)", Align::kRight},
                   {"Name", Align::kLeft}};
  table.rows = {{Cell::Fixed(625, 1), Cell::Int(100), Cell::Fixed(1000, 1), Cell::Text("B")},
                {Cell::Fixed(375, 1), Cell::Int(60), Cell::Fixed(123456789, 1), Cell::Text("a longer name")},
                {Cell::Null(), Cell::Int(-7), Cell::Fixed(-5, 1), Cell::Text("")}};
  return table;
}

TEST(Cell, PrintsScaledDecimalsExactly) {
  EXPECT_EQ(Cell::Fixed(125, 1).ToString(), "12.5");
  EXPECT_EQ(Cell::Fixed(-5, 1).ToString(), "-0.5");
  EXPECT_EQ(Cell::Fixed(0, 3).ToString(), "0.000");
  EXPECT_EQ(Cell::Fixed(4194, 3).ToString(), "4.194");
  EXPECT_EQ(Cell::Fixed(7, 3).ToString(), "0.007");
  EXPECT_EQ(Cell::Fixed(INT64_MIN, 1).ToString(), "-922337203685477580.8");
  EXPECT_EQ(Cell::Int(-42).ToString(), "-42");
  EXPECT_EQ(Cell::Null().ToString(), "");
}

TEST(TableFormat, CentresHeadersRightAlignsNumbersLeftAlignsText) {
  // Widths 8, 15, 10, 13: the widest of header and values; headers centred, extra space right.
  const std::string expected =
      " ** Demo Summary (demo_sum):\n"
      "\n"
      " Time (%)  Total Time (ns)   Avg (ns)       Name     \n"
      " --------  ---------------  ----------  -------------\n"
      "     62.5              100       100.0  B            \n"
      "     37.5               60  12345678.9  a longer name\n"
      "                        -7        -0.5               \n"
      "\n";
  EXPECT_EQ(Print(SampleTable(), Format::kTable), expected);
}

TEST(TableFormat, TruncatesLongTextTo100CharactersWithEllipsis) {
  Table table;
  table.report = "t";
  table.title = "T";
  table.columns = {{"Name", Align::kLeft}};
  const std::string long_name(120, 'x');
  table.rows = {{Cell::Text(long_name)}};
  const std::string text = Print(table, Format::kTable);
  const std::string shown = std::string(99, 'x') + "\xE2\x80\xA6";
  EXPECT_NE(text.find(" " + shown + "\n"), std::string::npos) << text;
  EXPECT_NE(text.find(" " + std::string(100, '-') + "\n"), std::string::npos) << text;
  // CSV and JSON keep the whole name.
  EXPECT_EQ(Print(table, Format::kCsv), "Name\n" + long_name + "\n");
  EXPECT_NE(Print(table, Format::kJson).find(long_name), std::string::npos);
}

TEST(TableFormat, AlignsMultiByteCharactersByCodePoint) {
  Table table;
  table.report = "t";
  table.title = "T";
  table.columns = {{"N", Align::kLeft}, {"V", Align::kRight}};
  table.rows = {{Cell::Text("\xC3\xA9t\xC3\xA9"), Cell::Int(1)}, {Cell::Text("abcd"), Cell::Int(22)}};
  EXPECT_EQ(Print(table, Format::kTable), " ** T (t):\n\n  N    V \n ----  --\n \xC3\xA9t\xC3\xA9    1\n abcd  22\n\n");
  EXPECT_EQ(DisplayWidth("\xE5\x90\x8D\xE5\x89\x8D"), 2);
  EXPECT_EQ(DisplayWidth("a\xFF"
                         "b"),
            3);  // an invalid byte counts as one
}

TEST(CsvFormat, QuotesOnlyFieldsThatNeedIt) {
  EXPECT_EQ(CsvField("plain text"), "plain text");
  EXPECT_EQ(CsvField("add_one(const float *, float *, int)"), "\"add_one(const float *, float *, int)\"");
  EXPECT_EQ(CsvField("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(CsvField("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(CsvField("cr\r"), "\"cr\r\"");
  EXPECT_EQ(CsvField(""), "");
}

TEST(CsvFormat, WritesHeaderRowsAndEmptyNulls) {
  EXPECT_EQ(Print(SampleTable(), Format::kCsv),
            "Time (%),Total Time (ns),Avg (ns),Name\n"
            "62.5,100,100.0,B\n"
            "37.5,60,12345678.9,a longer name\n"
            ",-7,-0.5,\n");
  const auto rows = testing::ParseCsv(CsvField("a,\"b\"\nc") + ",x\n");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"a,\"b\"\nc", "x"}));
}

TEST(JsonFormat, EscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(JsonString("plain"), "\"plain\"");
  EXPECT_EQ(JsonString("q\"b\\s/"), "\"q\\\"b\\\\s/\"");
  EXPECT_EQ(JsonString("\n\r\t\b\f"), "\"\\n\\r\\t\\b\\f\"");
  EXPECT_EQ(JsonString(std::string("\x01\x1f\x7f", 3)), "\"\\u0001\\u001f\\u007f\"");
  EXPECT_EQ(JsonString(std::string("nul\0x", 5)), "\"nul\\u0000x\"");
}

TEST(JsonFormat, KeepsValidUtf8AndReplacesInvalidBytes) {
  EXPECT_EQ(JsonString("caf\xC3\xA9 \xE5\x90\x8D \xF0\x9F\x9A\x80"), "\"caf\xC3\xA9 \xE5\x90\x8D \xF0\x9F\x9A\x80\"");
  EXPECT_EQ(JsonString("a\xFFz"), "\"a\\ufffdz\"");
  EXPECT_EQ(JsonString("\xC3"), "\"\\ufffd\"");                        // truncated sequence
  EXPECT_EQ(JsonString("\xC0\xAF"), "\"\\ufffd\\ufffd\"");             // overlong '/'
  EXPECT_EQ(JsonString("\xED\xA0\x80"), "\"\\ufffd\\ufffd\\ufffd\"");  // UTF-16 surrogate
}

TEST(JsonFormat, WritesArrayOfObjectsWithNumbersAndNulls) {
  EXPECT_EQ(Print(SampleTable(), Format::kJson),
            "[\n"
            "  {\"Time (%)\": 62.5, \"Total Time (ns)\": 100, \"Avg (ns)\": 100.0, \"Name\": \"B\"},\n"
            "  {\"Time (%)\": 37.5, \"Total Time (ns)\": 60, \"Avg (ns)\": 12345678.9, \"Name\": \"a longer name\"},\n"
            "  {\"Time (%)\": null, \"Total Time (ns)\": -7, \"Avg (ns)\": -0.5, \"Name\": \"\"}\n"
            "]\n");
  Table empty = SampleTable();
  empty.rows.clear();
  EXPECT_EQ(Print(empty, Format::kJson), "[]\n");
}

TEST(Statistics, ThreeValues) {
  std::vector<int64_t> values = {30, 10, 20};
  const Summary s = Summarize(&values);
  EXPECT_EQ(s.count, 3);
  EXPECT_EQ(s.total, 60);
  EXPECT_EQ(s.min, 10);
  EXPECT_EQ(s.max, 30);
  EXPECT_EQ(s.avg.ToString(), "20.0");
  EXPECT_EQ(s.median.ToString(), "20.0");
  EXPECT_EQ(s.stddev.ToString(), "10.0");
}

TEST(Statistics, EvenCountMedianIsMeanOfMiddlePairAndStdDevIsSample) {
  // nsys prints Avg = Med = 167993715.5 and StdDev 233376198.5 for these two calls.
  std::vector<int64_t> values = {333015608, 2971823};
  const Summary s = Summarize(&values);
  EXPECT_EQ(s.avg.ToString(), "167993715.5");
  EXPECT_EQ(s.median.ToString(), "167993715.5");
  EXPECT_EQ(s.stddev.ToString(), "233376198.5");
  std::vector<int64_t> four = {41, 10, 30, 20};
  const Summary t = Summarize(&four);
  EXPECT_EQ(t.median.ToString(), "25.0");
  EXPECT_EQ(t.avg.ToString(), "25.3");  // 25.25 rounds half away from zero, as SQLite round()
  EXPECT_EQ(t.stddev.ToString(), "13.3");
}

TEST(Statistics, SingleValueHasZeroStdDev) {
  std::vector<int64_t> values = {7};
  const Summary s = Summarize(&values);
  EXPECT_EQ(s.stddev.ToString(), "0.0");
  EXPECT_EQ(s.median.ToString(), "7.0");
}

TEST(Statistics, ScalesToMegabytesWithThreeDecimals) {
  std::vector<int64_t> values = {4194304, 1000000};
  const Summary s = Summarize(&values, 1'000'000, 3);
  EXPECT_EQ(s.avg.ToString(), "2.597");
  EXPECT_EQ(s.median.ToString(), "2.597");
  EXPECT_EQ(s.stddev.ToString(), "2.259");
  EXPECT_EQ(ScaledValue(500, 1'000'000, 3).ToString(), "0.001");  // 0.0005 rounds up
  EXPECT_EQ(ScaledValue(499, 1'000'000, 3).ToString(), "0.000");
}

TEST(Statistics, PercentAndRounding) {
  EXPECT_EQ(Percent(60, 160).ToString(), "37.5");
  EXPECT_EQ(Percent(1, 3).ToString(), "33.3");
  EXPECT_EQ(Percent(2, 3).ToString(), "66.7");
  EXPECT_EQ(Percent(5, 5).ToString(), "100.0");
  EXPECT_TRUE(Percent(0, 0).is_null());
  EXPECT_EQ(RoundDiv(5, 2), 3);
  EXPECT_EQ(RoundDiv(-5, 2), -3);
  EXPECT_EQ(RoundDiv(7, 3), 2);
}

TEST(Statistics, StripsOnlyFourDigitCuptiVersionSuffixes) {
  EXPECT_EQ(StripApiVersionSuffix("cudaMalloc_v3020"), "cudaMalloc");
  EXPECT_EQ(StripApiVersionSuffix("cudaLaunchKernel_v7000"), "cudaLaunchKernel");
  EXPECT_EQ(StripApiVersionSuffix("cudaGraphLaunch_v10000"), "cudaGraphLaunch_v10000");
  EXPECT_EQ(StripApiVersionSuffix("cudaGetDeviceProperties_v2_v12000"), "cudaGetDeviceProperties_v2_v12000");
  EXPECT_EQ(StripApiVersionSuffix("cuMemAllocHost_v2"), "cuMemAllocHost_v2");
  EXPECT_EQ(StripApiVersionSuffix("cuKernelGetName"), "cuKernelGetName");
  EXPECT_EQ(StripApiVersionSuffix("_v1234"), "");
}

TEST(Statistics, DecodesGlobalIds) {
  EXPECT_EQ(PidOf(283004824020018), 91186);
  EXPECT_EQ(TidOf(283004824020018), 91186);
  EXPECT_EQ(TidOf(0x101643201644a), 91210);
  EXPECT_EQ(PidOf(testing::GlobalTid(123, 456)), 123);
}

}  // namespace
}  // namespace gt::stats
