#include "inject/metrics/process_hooks.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>

namespace gt::metrics {
namespace {

// Metrics thread: makes CUPTI load its host library (libnvperf_host), which registers its static
// destructors as it loads.
void LoadHostLibrary(const ProfilerApi& api) {
  if (!api.host_ok || api.HostGetSupportedChips == nullptr)
    return;
  CUpti_Profiler_Host_GetSupportedChips_Params p{};
  p.structSize = CUpti_Profiler_Host_GetSupportedChips_Params_STRUCT_SIZE;
  api.HostGetSupportedChips(&p);  // the answer is not needed; a failure shows up in the selection
}

}  // namespace

void RegisterProcessHooks(ExitHookFn exit_hook, void (*fork_child_hook)()) {
  atexit(exit_hook);  // registered after the CUDA tracer's: runs before it (LIFO)
  pthread_atfork(nullptr, nullptr, fork_child_hook);
}

bool StartMetricsThread(void* (*entry)(void*), void* arg) {
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  pthread_t thread;
  const bool started = pthread_create(&thread, nullptr, entry, arg) == 0;
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (started)
    pthread_detach(thread);
  return started;
}

void SetUpAfterHostLibrary(const ProfilerApi& api,
                           bool needs_host,
                           ExitHookFn hook,
                           const std::function<void()>& set_up) {
  // The exit hook must run before the static destructors of libcupti and libnvperf_host, which
  // register themselves when they are loaded -- lazily, by the first host-API call on this
  // thread, and (replayed captures) libcupti itself only then. Exit handlers run last-registered-
  // first, so load them with one harmless host call and register again before the metric
  // selection: a process that exits while the selection's tens of host calls run then stops the
  // selection (Module::exiting_) instead of crashing in CUPTI's destroyed objects (SIGSEGV in
  // libnvperf_host, found replaying the H200's range-profiler capture, 2026-11-26). The set-up
  // still runs when the exit has begun: its one-line reasons (no permission, no driver) matter
  // most for a short run, and the exit hook waits for it (3 s at most).
  if (needs_host)
    LoadHostLibrary(api);
  atexit(hook);
  set_up();
  // Once more, now that CUPTI has loaded libnvperf_host (it does so lazily, on this thread): exit
  // handlers run last-registered-first, and the first registration (RegisterProcessHooks) predates
  // nvperf's own static destructors, so at exit they ran before our teardown and
  // cuptiPmSamplingDisable freed nvperf's destroyed objects ("double free or corruption",
  // SIGABRT at every exit with PM sampling on an H200, 2026-11-26). The hook runs once either way.
  atexit(hook);
}

}  // namespace gt::metrics
