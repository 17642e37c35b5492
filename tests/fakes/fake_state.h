// Shared state of the fake CUPTI (fake_cupti.cc: the CUPTI functions gtrace resolves;
// fake_driver.cc: the fake_* "driver" API of fake_cuda.h). A TEST DOUBLE built on the real CUDA
// 13.0 headers: it models CUPTI closely enough to drive gtrace's logic, and nothing more.
// One mutex guards everything; callbacks into gtrace are made with it released.
#pragma once

#include <cupti.h>
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace fake {

struct ThreadBuffer {
  uint8_t* data = nullptr;
  size_t size = 0;
  size_t used = 0;
};

struct PendingApi {
  bool driver = false;
  uint32_t cbid = 0;
  uint64_t start = 0;
  uint32_t tid = 0;
  const void* params = nullptr;
};

struct State {
  std::mutex mu;
  pid_t pid = 0;  // the process that subscribed (0: nobody)
  bool subscribed = false;
  CUpti_CallbackFunc callback = nullptr;
  void* userdata = nullptr;
  std::set<std::pair<int, uint32_t>> callbacks;  // (domain, cbid) enabled
  std::set<int> domains;                         // whole domains enabled (cuptiEnableDomain)
  std::set<int> kinds;
  CUpti_BuffersCallbackRequestFunc request = nullptr;
  CUpti_BuffersCallbackCompleteFunc complete = nullptr;
  CUpti_TimestampCallbackFunc timestamp = nullptr;
  int thread_id_type = 0;
  uint32_t next_correlation = 1;
  uint32_t next_context = 1;
  uint32_t next_stream = 13;
  size_t dropped = 0;
  uint64_t declined_records = 0;
  std::map<uint32_t, ThreadBuffer> buffers;  // per OS thread (CUDA 13 default: per-thread buffers)
  std::map<uint32_t, PendingApi> pending;    // correlation id -> API call in progress
  std::vector<std::vector<uint8_t>> running;  // records only a forced flush delivers (end = 0)
  std::set<uint32_t> devices_announced;
  std::set<std::string> names;  // stable storage for name pointers in records
  std::map<std::string, uint64_t> calls;
  uint32_t graph_execs = 0;  // instantiated so far (GRAPH_TRACE enabled after one: see cuptiActivityEnable)
  // cuptiActivitySetAttribute (fake_cupti.cc, PrepareRequestedBuffer): CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER
  // (default 0: CUPTI zeroes each requested buffer on the requesting thread) and
  // CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER (default 1).
  uint8_t zeroed_out_buffers = 0;
  uint8_t per_thread_buffers = 1;
};

State& S();
uint32_t Tid();
// CUPTI timestamp: gtrace's callback when registered, else CLOCK_REALTIME (real CUPTI's default).
uint64_t Now();
// A GPU-side span of `ns` nanoseconds in units of Now(): real CUPTI measures GPU work in ns and maps
// it onto the client's timestamp callback by linear interpolation, so a callback returning TSC
// ticks gets GPU spans in ticks. The fake measures the callback's rate once at registration
// (5 ms against CLOCK_MONOTONIC); a callback within 5% of 1 tick/ns is taken as ns exactly.
uint64_t Span(uint64_t ns);
// Appends one record of `size` bytes to the calling thread's buffer (requesting/completing buffers
// through gtrace's callbacks as needed). Caller does NOT hold S().mu.
void Append(const void* record, size_t size);
bool KindOn(int kind);
// Calls gtrace's subscriber callback if (domain, cbid) is enabled. Caller does NOT hold S().mu.
void Fire(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data);
const char* StableName(const std::string& name);
// "fake-cupti: VIOLATION" when a CUPTI function runs in a forked child of the subscriber.
bool CheckProcess(const char* function);
void Log(const std::string& line);
// The UUID of fake device `device`: fixed bytes, except bytes 12-14 = FAKE_CUDA_UUID_TAG (hex, up to
// 6 digits; default 816986) so concurrently running tests get distinct GPUs (per-GPU lock files).
void FakeUuid(uint32_t device, unsigned char out[16]);

}  // namespace fake
