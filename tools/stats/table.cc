// Printers for report tables. Layout follows what `nsys stats` prints (checked against real outputs of
// nsys 2023.2–2026.3 quoted in public repositories, see tests/stats/format_test.cc):
//  - table: a title line " ** <title> (<report>):", a blank line, then every line starts with one space
//    and columns are separated by two spaces; headers are centred (extra space on the right), numbers
//    right-aligned, text left-aligned and padded; a dashed rule under the header; text longer than 100
//    characters is cut to 99 + "…". No thousands separators (nsys adds them only under some locales).
//  - csv: header row of column names, minimal RFC 4180 quoting, NULL as an empty field, "\n" line ends.
//  - json: an array of objects keyed by column name; numbers as JSON numbers, NULL as null.
#include "tools/stats/table.h"

#include <algorithm>
#include <cstdio>
#include <ostream>

namespace gt::stats {
namespace {

// Decodes one UTF-8 sequence at `text[pos]`. Returns its length in bytes, or 0 when the bytes there are
// not valid UTF-8 (overlong forms, surrogates and values above U+10FFFF included).
size_t Utf8SequenceLength(std::string_view text, size_t pos) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(pos);
  if (lead < 0x80)
    return 1;
  size_t length = 0;
  uint32_t code_point = 0;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    code_point = lead & 0x1F;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    code_point = lead & 0x0F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    code_point = lead & 0x07;
  } else {
    return 0;
  }
  if (pos + length > text.size())
    return 0;
  for (size_t i = 1; i < length; ++i) {
    const unsigned char next = byte(pos + i);
    if ((next & 0xC0) != 0x80)
      return 0;
    code_point = (code_point << 6) | (next & 0x3F);
  }
  if ((length == 3 && code_point < 0x800) || (length == 4 && code_point < 0x10000) ||
      (code_point >= 0xD800 && code_point <= 0xDFFF) || code_point > 0x10FFFF) {
    return 0;
  }
  return length;
}

void PadTo(std::string* line, int width, int used) {
  if (width > used)
    line->append(static_cast<size_t>(width - used), ' ');
}

// What the table format shows for a cell: text cut to kMaxTableCellChars, numbers as printed.
std::string Shown(const Cell& cell) {
  return cell.kind() == Cell::Kind::kText ? TruncateForTable(cell.text()) : cell.ToString();
}

void AppendJsonValue(const Cell& cell, std::string* line) {
  switch (cell.kind()) {
    case Cell::Kind::kNull:
      *line += "null";
      break;
    case Cell::Kind::kInt:
    case Cell::Kind::kFixed:
      *line += cell.ToString();  // "-12", "0.000": valid JSON number literals
      break;
    case Cell::Kind::kText:
      *line += JsonString(cell.text());
      break;
  }
}

}  // namespace

Cell Cell::Int(int64_t value) {
  Cell cell(Kind::kInt);
  cell.int_ = value;
  return cell;
}

Cell Cell::Fixed(int64_t scaled, int decimals) {
  Cell cell(Kind::kFixed);
  cell.int_ = scaled;
  cell.decimals_ = decimals;
  return cell;
}

Cell Cell::Text(std::string value) {
  Cell cell(Kind::kText);
  cell.text_ = std::move(value);
  return cell;
}

std::string Cell::ToString() const {
  switch (kind_) {
    case Kind::kNull:
      return "";
    case Kind::kInt:
      return std::to_string(int_);
    case Kind::kText:
      return text_;
    case Kind::kFixed:
      break;
  }
  // Unsigned magnitude so INT64_MIN does not overflow on negation.
  const bool negative = int_ < 0;
  uint64_t magnitude = negative ? 0 - static_cast<uint64_t>(int_) : static_cast<uint64_t>(int_);
  uint64_t divisor = 1;
  for (int i = 0; i < decimals_; ++i)
    divisor *= 10;
  std::string result = negative ? "-" : "";
  result += std::to_string(magnitude / divisor);
  if (decimals_ > 0) {
    std::string fraction = std::to_string(magnitude % divisor);
    result += '.';
    result.append(static_cast<size_t>(decimals_) - fraction.size(), '0');
    result += fraction;
  }
  return result;
}

std::string CsvField(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos)
    return std::string(text);
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"')
      quoted += '"';
    quoted += c;
  }
  quoted += '"';
  return quoted;
}

std::string JsonString(std::string_view text) {
  std::string result = "\"";
  size_t pos = 0;
  while (pos < text.size()) {
    const unsigned char c = static_cast<unsigned char>(text[pos]);
    if (c < 0x80) {
      switch (c) {
        case '"':
          result += "\\\"";
          break;
        case '\\':
          result += "\\\\";
          break;
        case '\b':
          result += "\\b";
          break;
        case '\f':
          result += "\\f";
          break;
        case '\n':
          result += "\\n";
          break;
        case '\r':
          result += "\\r";
          break;
        case '\t':
          result += "\\t";
          break;
        default:
          if (c < 0x20 || c == 0x7F) {
            char escaped[8];
            std::snprintf(escaped, sizeof(escaped), "\\u%04x", c);
            result += escaped;
          } else {
            result += static_cast<char>(c);
          }
      }
      ++pos;
      continue;
    }
    const size_t length = Utf8SequenceLength(text, pos);
    if (length == 0) {
      result += "\\ufffd";  // JSON text must be Unicode; keep the row rather than fail the report
      ++pos;
    } else {
      result.append(text.substr(pos, length));
      pos += length;
    }
  }
  result += '"';
  return result;
}

int DisplayWidth(std::string_view utf8) {
  int width = 0;
  size_t pos = 0;
  while (pos < utf8.size()) {
    const size_t length = Utf8SequenceLength(utf8, pos);
    pos += length == 0 ? 1 : length;
    ++width;
  }
  return width;
}

std::string TruncateForTable(std::string_view utf8) {
  if (DisplayWidth(utf8) <= kMaxTableCellChars)
    return std::string(utf8);
  size_t pos = 0;
  for (int kept = 0; kept < kMaxTableCellChars - 1; ++kept) {
    const size_t length = Utf8SequenceLength(utf8, pos);
    pos += length == 0 ? 1 : length;
  }
  return std::string(utf8.substr(0, pos)) + "\xE2\x80\xA6";  // U+2026 HORIZONTAL ELLIPSIS
}

ColumnWidths::ColumnWidths(const std::vector<Column>& columns) {
  for (const Column& column : columns)
    widths_.push_back(DisplayWidth(column.name));
}

void ColumnWidths::Add(const std::vector<Cell>& row) {
  for (size_t c = 0; c < row.size() && c < widths_.size(); ++c)
    widths_[c] = std::max(widths_[c], DisplayWidth(Shown(row[c])));
}

RowPrinter::RowPrinter(const Table& head, Format format, std::ostream* out)
    : head_(head), format_(format), out_(out), widths_(ColumnWidths(head.columns).widths()) {}

void RowPrinter::SetWidths(std::vector<int> widths_chars) {
  widths_ = std::move(widths_chars);
}

void RowPrinter::Begin() {
  begun_ = true;
  const size_t num_columns = head_.columns.size();
  std::string& line = line_;
  switch (format_) {
    case Format::kTable:
      *out_ << " ** " << head_.title << " (" << head_.report << "):\n\n";
      line = " ";
      for (size_t c = 0; c < num_columns; ++c) {
        if (c > 0)
          line += "  ";
        const int used = DisplayWidth(head_.columns[c].name);
        const int left = (widths_[c] - used) / 2;
        PadTo(&line, left, 0);
        line += head_.columns[c].name;
        PadTo(&line, widths_[c] - left, used);
      }
      *out_ << line << '\n';
      line = " ";
      for (size_t c = 0; c < num_columns; ++c) {
        if (c > 0)
          line += "  ";
        line.append(static_cast<size_t>(widths_[c]), '-');
      }
      *out_ << line << '\n';
      break;
    case Format::kCsv:
      line.clear();
      for (size_t c = 0; c < num_columns; ++c) {
        if (c > 0)
          line += ',';
        line += CsvField(head_.columns[c].name);
      }
      *out_ << line << '\n';
      break;
    case Format::kJson:
      break;  // "[" or "[]" depends on whether a row comes
  }
}

void RowPrinter::Row(const std::vector<Cell>& row) {
  if (!begun_)
    Begin();
  std::string& line = line_;
  switch (format_) {
    case Format::kTable:
      line = " ";
      for (size_t c = 0; c < row.size(); ++c) {
        if (c > 0)
          line += "  ";
        const std::string shown = Shown(row[c]);
        const int used = DisplayWidth(shown);
        if (head_.columns[c].align == Align::kRight) {
          PadTo(&line, widths_[c], used);
          line += shown;
        } else {
          line += shown;
          PadTo(&line, widths_[c], used);
        }
      }
      line += '\n';
      break;
    case Format::kCsv:
      line.clear();
      for (size_t c = 0; c < row.size(); ++c) {
        if (c > 0)
          line += ',';
        line += CsvField(row[c].ToString());
      }
      line += '\n';
      break;
    case Format::kJson:
      // The previous row's "}" gets its ",\n" here: the last one is followed by "\n]".
      line = any_row_ ? ",\n  {" : "[\n  {";
      for (size_t c = 0; c < head_.columns.size() && c < row.size(); ++c) {
        if (c > 0)
          line += ", ";
        line += JsonString(head_.columns[c].name);
        line += ": ";
        AppendJsonValue(row[c], &line);
      }
      line += '}';
      break;
  }
  *out_ << line;
  any_row_ = true;
}

void RowPrinter::Finish() {
  if (!begun_)
    Begin();
  switch (format_) {
    case Format::kTable:
      *out_ << '\n';
      break;
    case Format::kCsv:
      break;
    case Format::kJson:
      *out_ << (any_row_ ? "\n]\n" : "[]\n");
      break;
  }
}

void WriteTable(const Table& table, Format format, std::ostream& out) {
  RowPrinter printer(table, format, &out);
  if (format == Format::kTable) {
    ColumnWidths widths(table.columns);
    for (const auto& row : table.rows)
      widths.Add(row);
    printer.SetWidths(widths.widths());
  }
  for (const auto& row : table.rows)
    printer.Row(row);
  printer.Finish();
}

}  // namespace gt::stats
