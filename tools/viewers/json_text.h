// Pieces of JSON text for the streaming Chrome-trace writer: quoted strings (escaped, and made valid
// UTF-8, since nsys strings come from applications) and Chrome-trace microsecond timestamps written
// from integer nanoseconds without going through a double.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gt::viewers {

// Appends "text" as a JSON string: quotes, backslash escapes, \u00XX for control characters, and
// U+FFFD for each byte that is not part of a valid UTF-8 sequence.
void AppendJsonString(std::string* out, std::string_view text);

// Appends ns as microseconds with three decimals: 1234567 -> 1234.567 (Kineto's "ts"/"dur" form).
void AppendMicros(std::string* out, int64_t ns);

}  // namespace gt::viewers
