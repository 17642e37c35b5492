#include "collector/output_path.h"

namespace gt {

Status ExpandOutputPattern(std::string_view pattern, std::string_view host, uint32_t pid, const EnvLookup& env,
                           std::string* out, std::string* warning) {
  out->clear();
  for (size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    if (c != '%') {
      out->push_back(c);
      continue;
    }
    if (i + 1 >= pattern.size()) return Status::Error("output name '" + std::string(pattern) + "' ends with a lone '%'");
    char k = pattern[++i];
    switch (k) {
      case '%':
        out->push_back('%');
        break;
      case 'h':
        out->append(host);
        break;
      case 'p':
        out->append(std::to_string(pid));
        break;
      case 'q': {
        if (i + 1 >= pattern.size() || pattern[i + 1] != '{') {
          return Status::Error("output name '" + std::string(pattern) + "': %q must be followed by {VARIABLE}");
        }
        size_t close = pattern.find('}', i + 2);
        if (close == std::string_view::npos) {
          return Status::Error("output name '" + std::string(pattern) + "': unterminated %q{");
        }
        std::string var(pattern.substr(i + 2, close - (i + 2)));
        if (var.empty()) return Status::Error("output name '" + std::string(pattern) + "': empty %q{}");
        const char* value = env ? env(var.c_str()) : nullptr;
        if (value != nullptr) {
          out->append(value);
        } else if (warning != nullptr) {
          *warning = "environment variable " + var + " in output name is not set; it expands to nothing";
        }
        i = close;
        break;
      }
      default:
        return Status::Error("output name '" + std::string(pattern) + "': unknown placeholder '%" + std::string(1, k) +
                             "' (known: %h, %p, %q{VAR}, %%)");
    }
  }
  if (out->empty()) return Status::Error("output name '" + std::string(pattern) + "' expands to nothing");
  return Status::Ok();
}

}  // namespace gt
