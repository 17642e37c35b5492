#include "inject/callstack/unwinder.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

namespace gt::callstack {
namespace {

// libunwind's per-architecture names of unw_set_caching_policy / unw_local_addr_space (local-only
// unwinding, the "_UL" prefix). UNW_CACHE_PER_THREAD = 2 in libunwind.h.
#if defined(__x86_64__)
constexpr const char kSetCachingPolicy[] = "_ULx86_64_set_caching_policy";
constexpr const char kLocalAddrSpace[] = "_ULx86_64_local_addr_space";
#elif defined(__aarch64__)
constexpr const char kSetCachingPolicy[] = "_ULaarch64_set_caching_policy";
constexpr const char kLocalAddrSpace[] = "_ULaarch64_local_addr_space";
#else
constexpr const char kSetCachingPolicy[] = "";
constexpr const char kLocalAddrSpace[] = "";
#endif
constexpr int kUnwCachePerThread = 2;

std::string SelfDir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&LoadUnwinder), &info) == 0 || info.dli_fname == nullptr)
    return {};
  char real[PATH_MAX];
  if (realpath(info.dli_fname, real) == nullptr)
    return {};
  std::string p(real);
  size_t slash = p.rfind('/');
  return slash == std::string::npos ? std::string() : p.substr(0, slash);
}

}  // namespace

bool LoadUnwinder(Unwinder* out, std::string* error) {
  std::string tried;
  auto try_one = [&](const std::string& candidate) -> bool {
    void* h = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) {
      const char* e = dlerror();
      tried += (tried.empty() ? "" : "; ") + candidate + ": " + (e != nullptr ? e : "not found");
      return false;
    }
    auto fn = reinterpret_cast<BacktraceFn>(dlsym(h, "unw_backtrace"));
    if (fn == nullptr) {
      tried += (tried.empty() ? "" : "; ") + candidate + ": no unw_backtrace (not the nongnu libunwind?)";
      dlclose(h);
      return false;
    }
    out->handle = h;
    out->backtrace = fn;
    char real[PATH_MAX];
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(fn), &info) != 0 && info.dli_fname != nullptr &&
        realpath(info.dli_fname, real) != nullptr) {
      out->path = real;
    } else {
      out->path = candidate;
    }
    return true;
  };
  bool ok = false;
  if (const char* p = getenv("GTRACE_LIBUNWIND_PATH"); p != nullptr && *p != '\0') {
    ok = try_one(p);
  } else {
    std::string dir = SelfDir();
    ok = (!dir.empty() && try_one(dir + "/libunwind.so.8")) || try_one("libunwind.so.8");
  }
  if (!ok) {
    *error = "cannot load libunwind (" + tried + ")";
    return false;
  }
  if (kSetCachingPolicy[0] != '\0') {
    using SetPolicyFn = int (*)(void*, int);
    auto set_policy = reinterpret_cast<SetPolicyFn>(dlsym(out->handle, kSetCachingPolicy));
    auto* as = static_cast<void**>(dlsym(out->handle, kLocalAddrSpace));
    if (set_policy != nullptr && as != nullptr && *as != nullptr)
      set_policy(*as, kUnwCachePerThread);
  }
  // Warm this thread (libunwind's one-time initialization happens here, not in a CUDA call).
  void* frames[8];
  if (out->backtrace(frames, 8) <= 0) {
    *error = "libunwind (" + out->path + ") returned no frame for a test backtrace";
    return false;
  }
  return true;
}

}  // namespace gt::callstack
