// How the GPU metrics module hooks into the process: its thread, its fork-child hook, and where its
// exit hook stands among the process's exit handlers, with the load of CUPTI's host library
// (libnvperf_host) that decides it. Exit handlers run last-registered-first; the hook must run
// before the CUDA tracer's teardown and before the static destructors of libcupti and
// libnvperf_host, which those libraries register when they are loaded (lazily: libnvperf_host at
// the first host-API call, and in replayed captures libcupti too). So the hook is registered three
// times (it runs once: Module::OnExit returns early the second time): at set-up, and on the metrics
// thread before and after the devices' set-up. `git log inject/metrics/gpu_metrics.cc` has the
// crashes each registration fixed (H200, 2026-11-26: commits d5ac91c and 824a440).
//
// Threads: RegisterProcessHooks and StartMetricsThread run on the thread in InitializeInjection
// (OnCudaInjection, once); SetUpAfterHostLibrary runs on the metrics thread, which makes every
// CUPTI host call. Nothing here is on a hot path.
#pragma once

#include <functional>

#include "inject/metrics/profiler_api.h"

namespace gt::metrics {

using ExitHookFn = void (*)();

// InitializeInjection's thread: the exit hook's first registration, after the CUDA tracer's (so it
// runs before it), and the fork-child hook (pthread_atfork: the child switches the module off).
void RegisterProcessHooks(ExitHookFn exit_hook, void (*fork_child_hook)());

// InitializeInjection's thread: starts the metrics thread, detached, with every signal blocked (the
// application's handlers never run on it). False if it could not be started.
bool StartMetricsThread(void* (*entry)(void*), void* arg);

// Metrics thread: makes CUPTI load libnvperf_host now (one harmless host call, when `needs_host`:
// sampling or the range profiler is on and the host API resolved), registers `hook` again, runs
// `set_up` (the devices and the metric selection: tens of host calls) and registers `hook` once
// more. A process that exits during `set_up` then runs the hook first, which stops the selection
// instead of letting it call into destroyed objects.
void SetUpAfterHostLibrary(const ProfilerApi& api,
                           bool needs_host,
                           ExitHookFn hook,
                           const std::function<void()>& set_up);

}  // namespace gt::metrics
