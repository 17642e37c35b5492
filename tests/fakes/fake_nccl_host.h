// Test double: a fake NCCL that drives a profiler plugin exactly the way NCCL 2.27 (ABI v4), 2.28
// (v5) and 2.29 (v6) do, without GPUs. It proves gtrace's plugin logic, not NVIDIA's behaviour.
//
// What it reproduces (from NVIDIA/nccl v2.28.9-1 src/plugin/profiler.cc, enqueue.cc, group.cc,
// transport/profiler.cc, proxy.cc and v2.29.7-1 for v6):
//   - loading: NCCL_PROFILER_PLUGIN (unset: libnccl-profiler.so; "none": off; a prefix of
//     STATIC_PLUGIN: dlopen(NULL)), dlopen(RTLD_NOW|RTLD_LOCAL), dlsym of ncclProfiler_v6 (2.29
//     only), _v5 (2.28+), _v4, newest first; init per communicator with a pointer to one global int
//     event mask that NCCL reads atomically at every event site;
//   - NCCL's gating: an event is started when the mask has its bit or a descendant's bit (so the
//     plugin sees ancestors it did not ask for and must filter); child descriptors carry the
//     parent's handle (NULL when the plugin returned NULL);
//   - a blocking collective (implicit group), v5/v6: GroupApi start (groupDepth 1), state 23,
//     CollApi start/stop, state 24, KernelLaunch start/stop, Group start, Coll start (parentObj
//     CollApi, parentGroup Group; AllGather/Broadcast as count*typesize "ncclInt8"), Coll stop
//     ("enqueued"), Group stop, GroupApi stop; v4: Group start, Coll start (parentObj Group), stops;
//   - explicit groups (groupDepth 2) of collectives / sends / receives: every Coll/P2p of the plan
//     starts before any of them stops (this is what exhausts a small pool);
//   - a per-communicator proxy thread that observes the simulated GPU after the fact: KernelCh start
//     (parentObj = the already stopped Coll/P2p, pTimer = %globaltimer start), recordEventState(
//     KernelChStop, pTimer end), stopEvent; optional ProxyOp / ProxyStep (states, transSize) events;
//     ProxyCtrl events; a PXN proxy op of another process (foreign pid, context and parentObj);
//   - v6 copy-engine collectives (CeColl, CeSync, CeBatch); finalize per communicator.
// The simulated %globaltimer is CLOCK_REALTIME + gpu_skew_ns. Channel c of an operation with GPU
// time D runs [base + 100c, base + D - 100c] ns, so the operation's GPU span is exactly D; base is
// 20 us after the (simulated) kernel launch, or when the communicator's previous kernel ends.
// Optionally emits NCCL's own NVTX ranges too (domain "NCCL", registered names, payload schemas
// registered as NCCL 2.28's nvtx_payload_schemas.h describes them).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tests/fakes/fake_nccl_abi.h"

namespace fake_nccl {

// One NCCL operation as the application calls it.
struct Op {
  const char* func = "AllReduce";  // ncclFuncToString spelling
  size_t count = 1024;             // the API's count (AllGather: sendcount; ReduceScatter: recvcount)
  const char* datatype = "ncclFloat32";
  size_t type_size = 4;
  int root = 0;
  int peer = -1;  // Send/Recv
  int red_op = 0;  // ncclRedOp_t: only NCCL's NVTX payload carries it, the plugin ABI does not
  uint8_t n_channels = 2;
  uint8_t n_warps = 16;
  const char* algo = "RING";
  const char* proto = "SIMPLE";
  uint64_t gpu_ns = 100000;  // simulated GPU time of the operation
  int proxy_steps = 0;       // > 0: one proxy op per channel with this many steps
};

// Everything any descriptor version may carry; the loaded version copies what it has.
struct Fields {
  uint64_t type = 0;
  void* parent = nullptr;
  int rank = 0;
  bool graph_captured = false;
  int group_depth = 0;
  const char* func = nullptr;
  size_t count = 0;
  const char* datatype = nullptr;
  int root = 0;
  void* stream = nullptr;
  uint64_t seq = 0;
  const void* send_buff = nullptr;
  void* recv_buff = nullptr;
  uint8_t n_channels = 0;
  uint8_t n_warps = 0;
  const char* algo = nullptr;
  const char* proto = nullptr;
  void* parent_group = nullptr;
  int peer = 0;
  pid_t pid = 0;
  uint8_t channel = 0;
  int n_steps = 0;
  int chunk_size = 0;
  int is_send = 0;
  int step = 0;
  uint64_t ptimer = 0;
  const char* sync_strategy = nullptr;
  uint32_t ce_seq = 0;
  bool is_complete = false;
  int n_ranks = 0;
  int num_ops = 0;
  size_t total_bytes = 0;
};

struct Comm {
  struct Item {
    void* handle = nullptr;  // the Coll/P2p handle (NULL when the plugin did not track it)
    Op op;
    uint64_t gpu_base_ns = 0;
  };
  void* context = nullptr;
  uint64_t hash = 0;
  int rank = 0;
  int n_ranks = 0;
  void* stream = nullptr;
  std::map<std::string, uint64_t> seq;  // per function, like comm->seqNumber
  uint64_t gpu_busy_until_ns = 0;       // the simulated stream runs one kernel at a time
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Item> queue;  // guarded by mu
  int in_flight = 0;       // guarded by mu
  bool stop = false;       // guarded by mu
  std::thread proxy;
};

// What a replay of a raw NCCL capture did (Host::ReplayCapture, fake_nccl_replay.cc).
struct ReplayStats {
  uint64_t inits = 0, starts = 0, states = 0, stops = 0, finalizes = 0;
  uint64_t threads = 0;            // replay threads (one per recorded NCCL thread)
  uint64_t handle_mismatches = 0;  // start: the live plugin tracked where the recording did not, or not where it did
  uint64_t handles_unknown = 0;    // stop/state of a recorded handle the replay never got back
  uint64_t parents_not_ours = 0;   // parentObj/parentGroup never returned here (PXN: another process's), passed as recorded
  uint64_t strings_cut = 0;        // descriptors whose strings the capture truncated
  uint64_t dropped_in_capture = 0; // calls the capture itself could not keep (its log was full)
};
// Called by each replay thread with the recorded time just before a plugin call, and with 0 right
// after (the replay program pins its CLOCK_MONOTONIC for that thread, so the plugin records the
// very times of the recording).
using PinClockFn = void (*)(uint64_t ts_ns);

class Host {
 public:
  Host() = default;
  ~Host();
  Host(const Host&) = delete;
  Host& operator=(const Host&) = delete;

  // nccl_code: 22709 (2.27, v4), 22809 (2.28, v5) or 22907 (2.29, v6). False (and *error) when no
  // plugin is found; NCCL then runs without a profiler.
  bool Load(int nccl_code, std::string* error);
  int abi() const { return abi_; }
  int mask() const { return __atomic_load_n(&event_mask_, __ATOMIC_RELAXED); }

  Comm* InitComm(const char* name, uint64_t hash, int n_nodes, int n_ranks, int rank);
  void FinalizeComm(Comm* comm);  // drains the comm's proxy thread first

  void Call(Comm* comm, const Op& op);                 // a blocking call (implicit group)
  void Group(Comm* comm, const std::vector<Op>& ops);  // ncclGroupStart(); ops; ncclGroupEnd()
  void CeCollective(Comm* comm, const Op& op);         // v6 copy-engine collective
  void ForeignProxyOp(Comm* comm);                     // PXN: another process's proxy op
  void ProxyCtrl(Comm* comm);                          // a proxy-thread append cycle
  void Drain(Comm* comm);                              // waits until the proxy saw every kernel

  void set_gpu_skew_ns(int64_t ns) { gpu_skew_ns_ = ns; }
  void set_nvtx(bool on) { nvtx_ = on; }
  int null_handles() const { return null_handles_.load(); }
  uint64_t plugin_calls() const { return plugin_calls_.load(); }  // init/start/state/stop/finalize made

  // Replays a raw capture (docs/capture.md, frames 9-14) into the plugin NCCL_PROFILER_PLUGIN names,
  // loaded at the recorded ABI version: every init, startEvent (the recorded descriptor bytes, with
  // handles, strings and the own-process pid re-pointed), recordEventState, stopEvent and finalize,
  // in recorded order, each on a replay thread standing for the recorded NCCL thread. Call it on a
  // fresh Host instead of Load. False with *error when the file cannot be read or loaded.
  bool ReplayCapture(const std::string& path, PinClockFn pin, ReplayStats* stats, std::string* error);

  // Raw plugin calls (as NCCL makes them), for tests that need a particular sequence.
  void* Start(void* context, const Fields& f);
  void Stop(void* handle);
  void State(void* handle, ncclProfilerEventState_t state, ncclProfilerEventStateArgs_v5_t* args);

 private:
  void Enqueue(Comm* comm, void* group_api, const std::vector<Op>& ops, const std::vector<void*>& api_handles);
  void ProxyMain(Comm* comm);
  void Observe(Comm* comm, const Comm::Item& item);
  uint64_t GpuNow() const;
  bool On(int bits) const { return (mask() & bits) != 0; }

  void* lib_ = nullptr;
  int abi_ = 0;
  int nccl_code_ = 0;
  ncclProfiler_v4_t* v4_ = nullptr;
  ncclProfiler_v5_t* v5_ = nullptr;
  ncclProfiler_v6_t* v6_ = nullptr;
  int event_mask_ = 0;  // NCCL's global ncclProfilerEventMask
  int64_t gpu_skew_ns_ = 0;
  bool nvtx_ = false;
  pid_t pid_ = 0;
  std::atomic<int> null_handles_{0};
  std::atomic<uint64_t> plugin_calls_{0};
  std::vector<std::unique_ptr<Comm>> comms_;
};

}  // namespace fake_nccl
