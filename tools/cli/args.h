// Command-line parsing for the gtrace subcommands, in nsys's style: `--name=value`,
// `--name value`, `-x value`, boolean flags with an optional true/false value. Unknown flags and
// bad values are errors naming the flag.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "schema/status.h"

namespace gt::cli {

struct FlagSpec {
  std::string long_name;   // "output"
  char short_name = 0;     // 'o'
  bool takes_value = true;  // false: boolean switch (accepts --x, --x=true/false, --x true/false)
  std::string value_name;  // "NAME", for help
  std::string help;
  std::function<Status(std::string_view value)> apply;
};

class ArgParser {
 public:
  ArgParser(std::string command, std::string usage, std::string description)
      : command_(std::move(command)), usage_(std::move(usage)), description_(std::move(description)) {}
  void Add(FlagSpec spec) { flags_.push_back(std::move(spec)); }
  // Parses args; positional arguments go to *positionals. With `stop_at_positional` (profile),
  // everything from the first positional (or after "--") is positional.
  // *help is set when -h/--help was given.
  Status Parse(const std::vector<std::string>& args, bool stop_at_positional, std::vector<std::string>* positionals,
               bool* help) const;
  std::string Help() const;

 private:
  const FlagSpec* Find(std::string_view long_name) const;
  const FlagSpec* FindShort(char c) const;
  std::string command_, usage_, description_;
  std::vector<FlagSpec> flags_;
};

bool ParseBoolValue(std::string_view text, bool* out);
Status ParseUnsigned(std::string_view flag, std::string_view text, uint64_t lo, uint64_t hi, uint64_t* out);

}  // namespace gt::cli
