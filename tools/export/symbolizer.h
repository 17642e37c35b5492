// Symbolizer: return addresses of a recorded process -> function, source file and line, offline, from
// the module files on this machine (elfutils libdwfl: ELF symbol tables, DWARF line tables, separate
// debug files found by build id under /usr/lib/debug). C++ names are demangled.
//
// A module file is used only when it is the one the process had: when the stream recorded a build id,
// the file's must be equal. A module whose file moved, changed or vanished still yields module +
// offset (`libfoo.so+0x1a2b`, unresolved). Extra directories to look for moved files by their base
// name: GTRACE_SYMBOL_PATH (colon-separated), checked by build id.
//
// Single-threaded (the exporter's thread). Module files are opened once per (path, build id).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace gt::exporter {

struct SymbolizedFrame {
  std::string function;  // demangled; "" when no symbol covers the address
  std::string file;      // DWARF source file; "" when there is no line information
  int line = 0;
  uint64_t module_offset = 0;  // address - load bias (the ELF virtual address)
  bool module_found = false;   // a matching module file was opened
};

class Symbolizer {
 public:
  Symbolizer();
  ~Symbolizer();
  Symbolizer(const Symbolizer&) = delete;
  Symbolizer& operator=(const Symbolizer&) = delete;

  // `vaddr` is the address in the module's ELF address space (runtime address - load bias). For a
  // return address pass the address itself: the lookup uses vaddr - 1 (the call instruction).
  SymbolizedFrame Lookup(const std::string& path, const std::string& build_id, uint64_t vaddr, bool return_address);

  // Paths tried and rejected (missing, build id differs), for one export warning each.
  const std::vector<std::string>& problems() const { return problems_; }

 private:
  struct ModuleFile;
  ModuleFile* Open(const std::string& path, const std::string& build_id);

  std::vector<std::string> search_dirs_;
  std::map<std::pair<std::string, std::string>, std::unique_ptr<ModuleFile>> files_;
  std::vector<std::string> problems_;
};

// "void f<int>(int)" for "_Z1fIiEvT_"; the input unchanged when it is not a mangled C++ name.
std::string DemangleSymbol(const std::string& name);

}  // namespace gt::exporter
