// libgtrace.so's entry points: the symbols CUDA, NVTX and NCCL look up, and the load/unload
// hooks. Everything else in the library is hidden (gtrace.map + -fvisibility=hidden).
//
// Load (ELF constructor, the loading thread): when LD_PRELOADed, point NVTX's loader, the CUDA
// driver's injection (CUDA_INJECTION64_PATH, read at the first cuInit) and NCCL's profiler-plugin
// loader at this file unless the user chose another tool (a user's own NCCL profiler plugin wins,
// with one `gtrace:` note), and note the load time (time zero of --delay). Nothing else: no
// thread, no file, no CUPTI (except with -t osrt: then the session starts here, docs/osrt.md) — the session starts when an injection entry point is first called,
// and CUPTI is loaded only inside InitializeInjection, i.e. only by processes that initialize
// CUDA. The NCCL plugin objects (ncclProfiler_v4/_v5/_v6) are defined in nccl/nccl_plugin.cc.
// Unload (ELF destructor, at exit): final flush of this process's stream.
//
// One recorder per process: when another copy of libgtrace.so (a different file) is already loaded
// and recording — LD_PRELOAD names one path while CUDA_INJECTION64_PATH or NVTX_INJECTION64_PATH
// names another — this copy declines every session and forwards its injection entry points to that
// copy, so the process gets one stream and one CUPTI subscriber. The same file reached twice is one
// object for the loader (dlopen returns it), and InitializeInjection runs its set-up once.
#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <string>

#include "collector/clock.h"
#include "collector/session.h"
#include "inject/api_entry.h"
#include "inject/cupti/capture_window.h"
#include "inject/cupti/cupti_tracer.h"
#include "inject/metrics/gpu_metrics.h"
#include "inject/nvtx/nvtx_hooks.h"
#include "inject/osrt/osrt_tracer.h"
#include "inject/sampling/cpu_sampler.h"

namespace {

// dlopen handle of the copy of libgtrace.so that records in this process, when this copy only
// forwards to it (set by the constructor; nullptr otherwise).
void* g_primary = nullptr;

bool Disabled() {
  const char* d = getenv("GTRACE_DISABLE");
  return d != nullptr && *d != '\0' && strcmp(d, "0") != 0 && strcmp(d, "false") != 0;
}

// True when LD_PRELOAD names this library (by path or file name).
bool Preloaded(const char* self_path) {
  const char* preload = getenv("LD_PRELOAD");
  if (preload == nullptr) return false;
  const char* base = strrchr(self_path, '/');
  base = base != nullptr ? base + 1 : self_path;
  return strstr(preload, base) != nullptr;
}

// Whether the user asked for NCCL tracing (GTRACE_TRACE unset means the default, which has it).
bool NcclWanted() {
  const char* t = getenv("GTRACE_TRACE");
  const char* n = getenv("GTRACE_NCCL_TRACE");
  if (n != nullptr && strcmp(n, "none") == 0) return false;
  return t == nullptr || strstr(t, "nccl") != nullptr;
}

// NCCL_PROFILER_PLUGIN: ours when unset; a user's value wins. NCCL's loader (2.26+) treats any
// case-insensitive prefix of "STATIC_PLUGIN" as dlopen(NULL), which finds our preloaded symbols.
void ArmNcclPlugin(const char* self) {
  const char* current = getenv("NCCL_PROFILER_PLUGIN");
  if (current == nullptr) {
    setenv("NCCL_PROFILER_PLUGIN", self, 0);
    return;
  }
  const char* base = strrchr(self, '/');
  base = base != nullptr ? base + 1 : self;
  size_t n = strlen(current);
  char resolved[4096];
  bool ours = strcmp(current, self) == 0 || strcmp(current, base) == 0 ||
              (strchr(current, '/') != nullptr && realpath(current, resolved) != nullptr && strcmp(resolved, self) == 0) ||
              (n > 0 && n <= strlen("STATIC_PLUGIN") && strncasecmp(current, "STATIC_PLUGIN", n) == 0);
  if (ours || !NcclWanted()) return;
  if (strcasecmp(current, "none") == 0) {
    gt::PrintLine("NCCL_PROFILER_PLUGIN=none turns NCCL's profiler plugins off; NCCL collectives are not traced");
  } else {
    gt::PrintLine(std::string("NCCL_PROFILER_PLUGIN=") + current +
                  " is set: NCCL loads that plugin, not gtrace's; NCCL collectives are not traced");
  }
}

// The copy named by GTRACE_LIBRARY_PATH (set by the preloaded copy's constructor) when it is another
// file that is loaded in this process; nullptr when this copy is the one that records. Objects are
// compared by link map: an exported symbol cannot tell them apart (the preloaded copy interposes it).
void* FindPrimary(const char* self) {
  const char* first = getenv("GTRACE_LIBRARY_PATH");
  if (first == nullptr || *first == '\0' || strcmp(first, self) == 0) return nullptr;
  void* h = dlopen(first, RTLD_NOW | RTLD_NOLOAD);
  if (h == nullptr) return nullptr;  // not loaded here (an exec'd child that preloads nothing)
  Dl_info info{};
  struct link_map* own = nullptr;
  struct link_map* other = nullptr;
  bool same = dladdr1(reinterpret_cast<void*>(&FindPrimary), &info, reinterpret_cast<void**>(&own), RTLD_DL_LINKMAP) == 0 ||
              dlinfo(h, RTLD_DI_LINKMAP, &other) != 0 || own == other;  // another name of this very file
  if (same) {
    dlclose(h);
    return nullptr;
  }
  return h;
}

template <typename Fn>
Fn PrimaryEntry(const char* name) {
  return g_primary != nullptr ? reinterpret_cast<Fn>(dlsym(g_primary, name)) : nullptr;
}

__attribute__((constructor)) void GtraceOnLoad() {
  if (Disabled()) return;
  gt::sampling::Register();  // its drain-thread emitter, whichever source starts the session
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&GtraceOnLoad), &info) == 0 || info.dli_fname == nullptr) return;
  char self[4096];
  if (realpath(info.dli_fname, self) == nullptr) return;
  if (void* primary = FindPrimary(self)) {
    g_primary = primary;
    gt::api::g_primary_api = primary;
    gt::DeclineSessions();
    return;
  }
  // Only arm when preloaded: then we run before the application's threads exist, so setenv is
  // safe; when NVTX or CUDA dlopen us, their variables are set already.
  if (!Preloaded(self)) return;
  setenv("NVTX_INJECTION64_PATH", self, /*overwrite=*/0);
  setenv("CUDA_INJECTION64_PATH", self, /*overwrite=*/0);
  ArmNcclPlugin(self);
  setenv("GTRACE_LIBRARY_PATH", self, 1);
  gt::capture::NoteLoadTime(gt::NowNs());
  // -t osrt: libc calls have no injection entry point that would start the session later.
  gt::osrt::StartIfWanted();
  // --sample=process-tree: likewise, a process that only computes on the CPU is sampled too.
  gt::sampling::StartIfWanted();
}

__attribute__((destructor)) void GtraceOnUnload() {
  gt::osrt::InsideGtrace inside;  // the final flush's own libc calls are not the application's
  gt::EndSession("exit");
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table) noexcept {
  if (Disabled()) return 0;
  if (g_primary != nullptr) {
    auto f = PrimaryEntry<int (*)(NvtxGetExportTableFunc_t)>("InitializeInjectionNvtx2");
    return f != nullptr ? f(get_export_table) : 0;
  }
  gt::capture::RegisterWithCollector();
  return gt::nvtx::InitializeCore(get_export_table);
}

__attribute__((visibility("default"))) int InitializeInjectionNvtxExtension(nvtxExtModuleInfo_t* module_info) noexcept {
  if (Disabled()) return 0;
  if (g_primary != nullptr) {
    auto f = PrimaryEntry<int (*)(nvtxExtModuleInfo_t*)>("InitializeInjectionNvtxExtension");
    return f != nullptr ? f(module_info) : 0;
  }
  return gt::nvtx::InitializeExtension(module_info);
}

// CUDA driver injection (CUDA_INJECTION64_PATH): called inside the first cuInit, on that thread.
// Always returns 1: a CUPTI problem switches CUDA tracing off (one `gtrace:` line), never cuInit.
__attribute__((visibility("default"))) int InitializeInjection(void) noexcept {
  if (Disabled()) return 1;
  if (g_primary != nullptr) {
    auto f = PrimaryEntry<int (*)(void)>("InitializeInjection");
    return f != nullptr ? f() : 1;
  }
  int result = gt::cupti::CuptiTracer::InitializeInjection();
  gt::metrics::OnCudaInjection();  // GPU metrics (--gpu-metrics-*): its own thread, after the tracer
  return result;
}

}  // extern "C"
