// Expansion of output names the way nsys does: %h host, %p pid, %q{VAR} environment variable,
// %% a percent sign. Pure function; the CLI treats an error as fatal, the injected library warns
// and keeps the text literally.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "schema/status.h"

namespace gt {

using EnvLookup = std::function<const char*(const char*)>;

// Unset %q{VAR} expands to the empty string (and is reported in *warning when non-null).
Status ExpandOutputPattern(std::string_view pattern, std::string_view host, uint32_t pid, const EnvLookup& env,
                           std::string* out, std::string* warning = nullptr);

}  // namespace gt
