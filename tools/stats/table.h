// The in-memory result of a report and its three printers (table, CSV, JSON). Internal to gt_stats;
// tests include it to check the printers directly.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "tools/stats/stats.h"

namespace gt::stats {

// One value of a report. Decimals are kept as a scaled integer (12.5 with 1 decimal = 125) so every
// printer shows exactly the digits the report rounded to, with no float-to-text surprises.
class Cell {
 public:
  enum class Kind { kNull, kInt, kFixed, kText };

  static Cell Null() { return Cell(Kind::kNull); }
  static Cell Int(int64_t value);
  static Cell Fixed(int64_t scaled, int decimals);
  static Cell Text(std::string value);

  Kind kind() const { return kind_; }
  bool is_null() const { return kind_ == Kind::kNull; }
  int64_t int_value() const { return int_; }  // kInt: the value; kFixed: the scaled value
  int decimals() const { return decimals_; }
  const std::string& text() const { return text_; }

  // The value as printed: "" for NULL, "12" , "12.5", or the text itself.
  std::string ToString() const;

  bool operator==(const Cell& other) const = default;

 private:
  explicit Cell(Kind kind) : kind_(kind) {}
  Kind kind_;
  int64_t int_ = 0;
  int decimals_ = 0;
  std::string text_;
};

enum class Align { kLeft, kRight };

struct Column {
  std::string name;
  Align align = Align::kRight;  // numbers right, text left, as nsys's table printer
};

struct Table {
  std::string report;  // "nvtx_sum"
  std::string title;   // "NVTX Range Summary"
  std::vector<Column> columns;
  std::vector<std::vector<Cell>> rows;
};

// nsys truncates text cells wider than this in table format (99 characters + "…"); CSV/JSON keep all.
inline constexpr int kMaxTableCellChars = 100;

void WriteTable(const Table& table, Format format, std::ostream& out);

// Pieces of the printers, exposed for tests.
std::string CsvField(std::string_view text);    // RFC 4180 quoting when needed
std::string JsonString(std::string_view text);  // quoted JSON string; invalid UTF-8 -> U+FFFD
int DisplayWidth(std::string_view utf8);        // code points
std::string TruncateForTable(std::string_view utf8);

}  // namespace gt::stats
