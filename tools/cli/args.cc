#include "tools/cli/args.h"

#include <sstream>

namespace gt::cli {

bool ParseBoolValue(std::string_view t, bool* out) {
  if (t == "true" || t == "1" || t == "yes" || t == "on") return *out = true, true;
  if (t == "false" || t == "0" || t == "no" || t == "off") return *out = false, true;
  return false;
}

Status ParseUnsigned(std::string_view flag, std::string_view text, uint64_t lo, uint64_t hi, uint64_t* out) {
  uint64_t v = 0;
  bool ok = !text.empty() && text.size() <= 19;
  for (char c : text) {
    if (c < '0' || c > '9') {
      ok = false;
      break;
    }
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  if (!ok || v < lo || v > hi) {
    return Status::Error(std::string(flag) + ": '" + std::string(text) + "' is not a whole number in [" +
                         std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  *out = v;
  return Status::Ok();
}

const FlagSpec* ArgParser::Find(std::string_view long_name) const {
  for (const FlagSpec& f : flags_) {
    if (f.long_name == long_name) return &f;
  }
  return nullptr;
}

const FlagSpec* ArgParser::FindShort(char c) const {
  for (const FlagSpec& f : flags_) {
    if (f.short_name == c && c != 0) return &f;
  }
  return nullptr;
}

Status ArgParser::Parse(const std::vector<std::string>& args, bool stop_at_positional,
                        std::vector<std::string>* positionals, bool* help) const {
  *help = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      positionals->insert(positionals->end(), args.begin() + static_cast<long>(i) + 1, args.end());
      return Status::Ok();
    }
    if (a == "-h" || a == "--help") {
      *help = true;
      return Status::Ok();
    }
    if (a.size() < 2 || a[0] != '-') {
      if (stop_at_positional) {
        positionals->insert(positionals->end(), args.begin() + static_cast<long>(i), args.end());
        return Status::Ok();
      }
      positionals->push_back(a);
      continue;
    }
    const FlagSpec* spec = nullptr;
    std::string value;
    bool has_value = false;
    std::string shown;
    if (a[1] == '-') {
      std::string body = a.substr(2);
      size_t eq = body.find('=');
      std::string name = body.substr(0, eq);
      shown = "--" + name;
      spec = Find(name);
      if (eq != std::string::npos) {
        value = body.substr(eq + 1);
        has_value = true;
      }
    } else {
      shown = a.substr(0, 2);
      spec = FindShort(a[1]);
      if (a.size() > 2) {
        value = a.substr(a[2] == '=' ? 3 : 2);
        has_value = true;
      }
    }
    if (spec == nullptr) return Status::Error(command_ + ": unknown option '" + shown + "' (see gtrace " + command_ + " --help)");
    if (spec->takes_value) {
      if (!has_value) {
        if (i + 1 >= args.size()) return Status::Error(command_ + ": " + shown + " needs a value");
        value = args[++i];
      }
    } else if (!has_value) {
      // A switch may be followed by true/false (nsys style); otherwise it means true.
      bool b;
      if (i + 1 < args.size() && ParseBoolValue(args[i + 1], &b)) {
        value = args[++i];
      } else {
        value = "true";
      }
    }
    if (!spec->takes_value) {
      bool b;
      if (!ParseBoolValue(value, &b)) return Status::Error(command_ + ": " + shown + ": '" + value + "' is not true or false");
    }
    Status st = spec->apply(value);
    if (!st.ok()) return Status::Error(command_ + ": " + st.message());
  }
  return Status::Ok();
}

std::string ArgParser::Help() const {
  std::ostringstream out;
  out << "usage: " << usage_ << "\n\n" << description_ << "\n\noptions:\n";
  for (const FlagSpec& f : flags_) {
    std::string left = "  ";
    left += f.short_name ? std::string("-") + f.short_name + ", " : "    ";
    left += "--" + f.long_name;
    if (f.takes_value) left += "=" + f.value_name;
    else left += "[=true|false]";
    out << left;
    if (left.size() < 34) out << std::string(34 - left.size(), ' ');
    else out << "\n" << std::string(34, ' ');
    out << f.help << "\n";
  }
  out << "  -h, --help                      this help\n";
  return out.str();
}

}  // namespace gt::cli
