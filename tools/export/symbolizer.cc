#include "tools/export/symbolizer.h"

#include <cxxabi.h>
#include <elfutils/libdwfl.h>
#include <sys/stat.h>

#include <cstdlib>
#include <cstring>

namespace gt::exporter {
namespace {

bool IsFile(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string BaseName(const std::string& p) {
  size_t slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

std::string Hex(const std::string& bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

// Where libdwfl looks for separate debug files (".debug" beside the file, /usr/lib/debug, by build id).
char* g_debuginfo_path = nullptr;

const Dwfl_Callbacks kCallbacks = {
    dwfl_build_id_find_elf,
    dwfl_standard_find_debuginfo,
    dwfl_offline_section_address,
    &g_debuginfo_path,
};

}  // namespace

std::string DemangleSymbol(const std::string& name) {
  if (name.size() < 2 || name[0] != '_' || name[1] != 'Z')
    return name;
  int status = 0;
  char* d = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  if (d == nullptr || status != 0) {
    free(d);
    return name;
  }
  std::string out(d);
  free(d);
  return out;
}

struct Symbolizer::ModuleFile {
  Dwfl* dwfl = nullptr;
  Dwfl_Module* module = nullptr;
  ~ModuleFile() {
    if (dwfl != nullptr)
      dwfl_end(dwfl);
  }
};

Symbolizer::Symbolizer() {
  if (const char* p = getenv("GTRACE_SYMBOL_PATH"); p != nullptr) {
    std::string list(p);
    size_t start = 0;
    while (start <= list.size()) {
      size_t colon = list.find(':', start);
      std::string dir = list.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
      if (!dir.empty())
        search_dirs_.push_back(dir);
      if (colon == std::string::npos)
        break;
      start = colon + 1;
    }
  }
}

Symbolizer::~Symbolizer() = default;

Symbolizer::ModuleFile* Symbolizer::Open(const std::string& path, const std::string& build_id) {
  auto key = std::make_pair(path, build_id);
  auto it = files_.find(key);
  if (it != files_.end())
    return it->second.get();
  auto file = std::make_unique<ModuleFile>();
  std::vector<std::string> candidates = {path};
  for (const std::string& dir : search_dirs_)
    candidates.push_back(dir + "/" + BaseName(path));
  std::string why;
  for (const std::string& candidate : candidates) {
    if (!IsFile(candidate))
      continue;
    Dwfl* dwfl = dwfl_begin(&kCallbacks);
    if (dwfl == nullptr)
      break;
    dwfl_report_begin(dwfl);
    // Base 0 with p_vaddr added: module addresses are the file's virtual addresses.
    Dwfl_Module* m = dwfl_report_elf(dwfl, BaseName(candidate).c_str(), candidate.c_str(), -1, 0, true);
    dwfl_report_end(dwfl, nullptr, nullptr);
    if (m == nullptr) {
      why = candidate + ": not an ELF file libdwfl can read";
      dwfl_end(dwfl);
      continue;
    }
    if (!build_id.empty()) {
      const unsigned char* bits = nullptr;
      GElf_Addr where = 0;
      int n = dwfl_module_build_id(m, &bits, &where);
      if (n <= 0 || static_cast<size_t>(n) != build_id.size() ||
          std::memcmp(bits, build_id.data(), build_id.size()) != 0) {
        why = candidate + ": build id differs from the recorded " + Hex(build_id);
        dwfl_end(dwfl);
        continue;
      }
    }
    file->dwfl = dwfl;
    file->module = m;
    break;
  }
  if (file->module == nullptr && path.find('/') != std::string::npos) {
    problems_.push_back(why.empty() ? path + ": not found" : why);
  }
  ModuleFile* raw = file.get();
  files_.emplace(key, std::move(file));
  return raw;
}

SymbolizedFrame Symbolizer::Lookup(const std::string& path,
                                   const std::string& build_id,
                                   uint64_t vaddr,
                                   bool return_address) {
  SymbolizedFrame out;
  out.module_offset = vaddr;
  ModuleFile* f = Open(path, build_id);
  if (f == nullptr || f->module == nullptr)
    return out;
  out.module_found = true;
  GElf_Addr a = return_address && vaddr > 0 ? vaddr - 1 : vaddr;
  GElf_Off offset = 0;
  GElf_Sym sym;
  const char* name = dwfl_module_addrinfo(f->module, a, &offset, &sym, nullptr, nullptr, nullptr);
  if (name != nullptr) {
    std::string n(name);
    size_t at = n.find('@');  // symbol version ("__libc_start_main@@GLIBC_2.34")
    if (at != std::string::npos && at > 0)
      n.resize(at);
    out.function = DemangleSymbol(n);
  }
  if (Dwfl_Line* line = dwfl_module_getsrc(f->module, a)) {
    int lineno = 0;
    const char* file = dwfl_lineinfo(line, nullptr, &lineno, nullptr, nullptr, nullptr);
    if (file != nullptr && lineno > 0) {
      out.file = file;
      out.line = lineno;
    }
  }
  return out;
}

}  // namespace gt::exporter
