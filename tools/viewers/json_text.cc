#include "tools/viewers/json_text.h"

#include <cstdio>

namespace gt::viewers {
namespace {

// Length of the valid UTF-8 sequence at s[i], or 0.
size_t Utf8Length(std::string_view s, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = byte(i);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > s.size())
    return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80)
      return 0;
  }
  // Reject overlong forms, surrogates and code points past U+10FFFF.
  if (n == 2 && c < 0xC2)
    return 0;
  if (n == 3) {
    unsigned char c1 = byte(i + 1);
    if ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 >= 0xA0))
      return 0;
  }
  if (n == 4) {
    unsigned char c1 = byte(i + 1);
    if ((c == 0xF0 && c1 < 0x90) || c > 0xF4 || (c == 0xF4 && c1 >= 0x90))
      return 0;
  }
  return n;
}

}  // namespace

void AppendJsonString(std::string* out, std::string_view text) {
  out->push_back('"');
  for (size_t i = 0; i < text.size();) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(static_cast<char>(c));
      ++i;
    } else if (c < 0x20) {
      char buf[8];
      switch (c) {
        case '\n':
          out->append("\\n");
          break;
        case '\t':
          out->append("\\t");
          break;
        case '\r':
          out->append("\\r");
          break;
        default:
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out->append(buf);
      }
      ++i;
    } else if (c < 0x80) {
      out->push_back(static_cast<char>(c));
      ++i;
    } else {
      size_t n = Utf8Length(text, i);
      if (n == 0) {
        out->append("\xEF\xBF\xBD");  // U+FFFD
        ++i;
      } else {
        out->append(text.substr(i, n));
        i += n;
      }
    }
  }
  out->push_back('"');
}

void AppendMicros(std::string* out, int64_t ns) {
  char buf[32];
  if (ns < 0) {
    out->push_back('-');
    ns = -ns;
  }
  std::snprintf(buf, sizeof(buf), "%lld.%03lld", static_cast<long long>(ns / 1000), static_cast<long long>(ns % 1000));
  out->append(buf);
}

}  // namespace gt::viewers
