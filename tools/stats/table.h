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

// Prints a report's rows one at a time, in any format, with the same bytes WriteTable prints for the
// whole table (WriteTable is built on it): reports whose rows are many (the traces) print each row as
// SQLite yields it. The table format needs each column's width before its first line: give them with
// SetWidths (RunReport measures them in a first pass with a ColumnWidths). Nothing is written until
// the first Row or Finish, so a report that fails before its first row leaves `out` untouched.
// Used on the report's thread; `head` (report, title, columns) and `out` must outlive the printer.
class RowPrinter {
 public:
  RowPrinter(const Table& head, Format format, std::ostream* out);
  RowPrinter(const RowPrinter&) = delete;
  RowPrinter& operator=(const RowPrinter&) = delete;

  void SetWidths(std::vector<int> widths_chars);  // kTable: from ColumnWidths::widths()
  void Row(const std::vector<Cell>& row);
  void Finish();  // after the last row (also with none)

 private:
  void Begin();
  const Table& head_;
  Format format_;
  std::ostream* out_;
  std::vector<int> widths_;
  bool begun_ = false;
  bool any_row_ = false;
  std::string line_;  // reused
};

// The table format's column widths (display width of header and shown cells), fed row by row.
class ColumnWidths {
 public:
  explicit ColumnWidths(const std::vector<Column>& columns);
  void Add(const std::vector<Cell>& row);
  const std::vector<int>& widths() const { return widths_; }

 private:
  std::vector<int> widths_;
};

// Pieces of the printers, exposed for tests.
std::string CsvField(std::string_view text);    // RFC 4180 quoting when needed
std::string JsonString(std::string_view text);  // quoted JSON string; invalid UTF-8 -> U+FFFD
int DisplayWidth(std::string_view utf8);        // code points
std::string TruncateForTable(std::string_view utf8);

}  // namespace gt::stats
