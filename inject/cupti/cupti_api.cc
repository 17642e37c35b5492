// Finding, loading and resolving libcupti (slow path: the thread inside the first cuInit).
#include "inject/cupti/cupti_api.h"

#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cstdio>
#include <string>
#include <vector>

namespace gt::cupti {
namespace {

bool IsFile(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string DirName(const std::string& p) {
  size_t slash = p.rfind('/');
  return slash == std::string::npos ? std::string(".") : p.substr(0, slash);
}

struct LoadedLibs {
  std::string cupti;   // a libcupti already mapped into the process
  std::string cudart;  // the shared CUDA runtime already mapped
};

int CollectLoaded(struct dl_phdr_info* info, size_t, void* data) {
  auto* libs = static_cast<LoadedLibs*>(data);
  const char* name = info->dlpi_name;
  if (name == nullptr || name[0] == '\0') return 0;
  const char* base = strrchr(name, '/');
  base = base != nullptr ? base + 1 : name;
  if (libs->cupti.empty() && strncmp(base, "libcupti.so", 11) == 0) libs->cupti = name;
  if (libs->cudart.empty() && strncmp(base, "libcudart.so", 12) == 0) libs->cudart = name;
  return 0;
}

struct Candidate {
  std::string path;    // passed to dlopen (a bare name searches the loader path)
  const char* source;  // for CudaTraceInfo and messages
};

std::vector<Candidate> Candidates() {
  std::vector<Candidate> out;
  if (const char* p = getenv("GTRACE_CUPTI_PATH"); p != nullptr && *p != '\0') {
    // An explicit choice is the only candidate: a typo must not silently load another CUPTI.
    out.push_back({p, "GTRACE_CUPTI_PATH"});
    return out;
  }
  LoadedLibs libs;
  dl_iterate_phdr(&CollectLoaded, &libs);
  if (!libs.cupti.empty()) out.push_back({libs.cupti, "already loaded"});
  if (!libs.cudart.empty()) {
    std::string dir = DirName(libs.cudart);
    // pip/PyTorch wheels: nvidia/cu13/lib holds both; older wheels nvidia/cuda_runtime/lib beside
    // nvidia/cuda_cupti/lib; the toolkit keeps CUPTI in lib64 or extras/CUPTI/lib64.
    for (const char* rel : {"/libcupti.so.13", "/../../cuda_cupti/lib/libcupti.so.13", "/../extras/CUPTI/lib64/libcupti.so.13",
                            "/libcupti.so"}) {
      out.push_back({dir + rel, "beside libcudart"});
    }
  }
  std::vector<std::string> roots;
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
    if (const char* v = getenv(var); v != nullptr && *v != '\0') roots.push_back(v);
  }
  roots.push_back("/usr/local/cuda");
  for (const std::string& root : roots) {
    for (const char* rel : {"/extras/CUPTI/lib64/libcupti.so.13", "/lib64/libcupti.so.13",
                            "/targets/x86_64-linux/lib/libcupti.so.13", "/targets/sbsa-linux/lib/libcupti.so.13"}) {
      out.push_back({root + rel, "CUDA toolkit"});
    }
  }
  out.push_back({"libcupti.so.13", "loader path"});
  out.push_back({"libcupti.so", "loader path"});
  return out;
}

template <typename Fn>
bool Resolve(void* handle, const char* name, Fn* out) {
  *out = reinterpret_cast<Fn>(dlsym(handle, name));
  return *out != nullptr;
}

// Resolves every function; false (naming the first missing required one) on failure.
bool ResolveAll(CuptiApi* api, std::string* missing) {
  void* h = api->handle;
  bool ok = true;
  auto need = [&](const char* name, auto* fn) {
    if (!Resolve(h, name, fn) && ok) {
      ok = false;
      *missing = name;
    }
  };
  need("cuptiGetVersion", &api->GetVersion);
  need("cuptiGetResultString", &api->GetResultString);
  need("cuptiSubscribe", &api->Subscribe);
  need("cuptiUnsubscribe", &api->Unsubscribe);
  need("cuptiEnableCallback", &api->EnableCallback);
  need("cuptiGetCallbackName", &api->GetCallbackName);
  need("cuptiActivityRegisterCallbacks", &api->ActivityRegisterCallbacks);
  need("cuptiActivityEnable", &api->ActivityEnable);
  need("cuptiActivityDisable", &api->ActivityDisable);
  need("cuptiActivityFlushAll", &api->ActivityFlushAll);
  need("cuptiActivityGetNextRecord", &api->ActivityGetNextRecord);
  need("cuptiActivityGetNumDroppedRecords", &api->ActivityGetNumDroppedRecords);
  need("cuptiSetThreadIdType", &api->SetThreadIdType);
  need("cuptiGetTimestamp", &api->GetTimestamp);
  Resolve(h, "cuptiSubscribe_v2", &api->Subscribe_v2);
  Resolve(h, "cuptiActivityRegisterTimestampCallback", &api->ActivityRegisterTimestampCallback);
  Resolve(h, "cuptiActivitySetAttribute", &api->ActivitySetAttribute);
  Resolve(h, "cuptiGetGraphExecId", &api->GetGraphExecId);
  Resolve(h, "cuptiGetGraphId", &api->GetGraphId);
  Resolve(h, "cuptiEnableDomain", &api->EnableDomain);
  return ok;
}

void CopyText(char* dst, size_t cap, const std::string& text) {
  size_t n = text.size() < cap - 1 ? text.size() : cap - 1;
  memcpy(dst, text.data(), n);
  dst[n] = '\0';
}

}  // namespace

const char* CuptiApi::ResultName(CUptiResult result, char* scratch, size_t scratch_size) const {
  const char* text = nullptr;
  if (GetResultString != nullptr && GetResultString(result, &text) == CUPTI_SUCCESS && text != nullptr) return text;
  snprintf(scratch, scratch_size, "CUPTI error %d", static_cast<int>(result));
  return scratch;
}

bool LoadCupti(CuptiApi* api, std::string* error) {
  std::vector<Candidate> candidates = Candidates();
  std::string tried;
  for (const Candidate& c : candidates) {
    bool bare = c.path.find('/') == std::string::npos;
    if (!bare && !IsFile(c.path)) {
      if (c.source == std::string("GTRACE_CUPTI_PATH")) {
        *error = "GTRACE_CUPTI_PATH=" + c.path + " is not a file";
        return false;
      }
      continue;
    }
    void* h = dlopen(c.path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) {
      const char* why = dlerror();
      tried += (tried.empty() ? "" : "; ") + c.path + (why != nullptr && !bare ? std::string(" (") + why + ")" : "");
      if (c.source == std::string("GTRACE_CUPTI_PATH")) {
        *error = "cannot load GTRACE_CUPTI_PATH=" + c.path + (why != nullptr ? std::string(": ") + why : "");
        return false;
      }
      continue;
    }
    *api = CuptiApi();
    api->handle = h;
    std::string missing;
    if (!ResolveAll(api, &missing)) {
      *error = c.path + " lacks " + missing + " (not a CUPTI library, or too old)";
      *api = CuptiApi();
      dlclose(h);
      return false;
    }
    uint32_t version = 0;
    if (api->GetVersion(&version) != CUPTI_SUCCESS || version < kMinCuptiApiVersion || version >= kMaxCuptiApiVersion) {
      *error = c.path + " has CUPTI API version " + std::to_string(version) +
               "; gtrace decodes the records of CUDA 13 (API 130000-139999): use the libcupti of a CUDA 13 "
               "runtime (GTRACE_CUPTI_PATH)";
      *api = CuptiApi();
      dlclose(h);
      return false;
    }
    api->api_version = version;
    char real[4096];
    Dl_info info{};
    std::string shown = c.path;
    if (dladdr(reinterpret_cast<void*>(api->GetVersion), &info) != 0 && info.dli_fname != nullptr &&
        realpath(info.dli_fname, real) != nullptr) {
      shown = real;
    }
    CopyText(api->path, sizeof(api->path), shown);
    CopyText(api->path_source, sizeof(api->path_source), c.source);
    return true;
  }
  *error = "no libcupti found (tried " + (tried.empty() ? std::string("the CUDA runtime's directory, /usr/local/cuda, the loader path") : tried) +
           "); set GTRACE_CUPTI_PATH";
  return false;
}

}  // namespace gt::cupti
