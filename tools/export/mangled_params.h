// Which parameters of a mangled function name are written as a bare template parameter (`T_`,
// `T0_`, ...): nsys's demangler prints those as T1, T2, ... where the GNU demangler substitutes
// the template argument (nsys_spelling.h). A small skipping parser of the Itanium C++ ABI mangling,
// enough to find the parameter list of a (template) function; it gives up (nullopt) on anything it
// does not know. Pure functions, any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gt::exporter {

// For `_Z...`: one entry per parameter, "" for an ordinary one and "T<k>" (k = template parameter
// index + 1) for a bare template parameter. An empty vector for `(void)`.
std::optional<std::vector<std::string>> TemplateParameterRefs(std::string_view mangled);

}  // namespace gt::exporter
