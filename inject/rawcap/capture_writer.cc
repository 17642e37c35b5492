// CaptureWriter: the raw-capture file of one process. See capture_writer.h for the threads.
//
// Lock order: none. The callback log is lock-free (claimed index + per-record ready flag); the file
// is written by the drain thread alone. No gtrace lock is held across the CUPTI calls made here
// (cuptiActivityGetNextRecord, cuptiDeviceGetAttribute, cuptiGetGraph*Id).
#include "inject/rawcap/capture_writer.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "collector/clock.h"
#include "collector/high_fd.h"

namespace gt::rawcap {

std::atomic<uint32_t> g_capture_on{0};

namespace {

std::atomic<CaptureWriter*> g_writer{nullptr};

// Copies a C string into a fixed field, truncated and NUL-terminated (bounded: no strlen on
// CUPTI's memory beyond the field).
void CopyName(char* dst, size_t cap, const char* src) {
  size_t i = 0;
  if (src != nullptr) {
    for (; i + 1 < cap && src[i] != '\0'; ++i)
      dst[i] = src[i];
  }
  dst[i] = '\0';
}

// The integer device attributes a capture records (cupti_events.h; event-id limits left out).
constexpr CUpti_DeviceAttribute kDeviceAttributes[] = {
    CUPTI_DEVICE_ATTR_GLOBAL_MEMORY_BANDWIDTH,
    CUPTI_DEVICE_ATTR_INSTRUCTION_PER_CYCLE,
    CUPTI_DEVICE_ATTR_INSTRUCTION_THROUGHPUT_SINGLE_PRECISION,
    CUPTI_DEVICE_ATTR_MAX_FRAME_BUFFERS,
    CUPTI_DEVICE_ATTR_PCIE_LINK_RATE,
    CUPTI_DEVICE_ATTR_PCIE_LINK_WIDTH,
    CUPTI_DEVICE_ATTR_PCIE_GEN,
    CUPTI_DEVICE_ATTR_DEVICE_CLASS,
    CUPTI_DEVICE_ATTR_FLOP_SP_PER_CYCLE,
    CUPTI_DEVICE_ATTR_FLOP_DP_PER_CYCLE,
    CUPTI_DEVICE_ATTR_MAX_L2_UNITS,
    CUPTI_DEVICE_ATTR_MAX_SHARED_MEMORY_CACHE_CONFIG_PREFER_SHARED,
    CUPTI_DEVICE_ATTR_MAX_SHARED_MEMORY_CACHE_CONFIG_PREFER_L1,
    CUPTI_DEVICE_ATTR_MAX_SHARED_MEMORY_CACHE_CONFIG_PREFER_EQUAL,
    CUPTI_DEVICE_ATTR_FLOP_HP_PER_CYCLE,
    CUPTI_DEVICE_ATTR_NVLINK_PRESENT,
    CUPTI_DEVICE_ATTR_GPU_CPU_NVLINK_BW,
    CUPTI_DEVICE_ATTR_NVSWITCH_PRESENT,
};

}  // namespace

CaptureWriter* CaptureWriter::Instance() {
  return g_writer.load(std::memory_order_acquire);
}

bool CaptureWriter::StartFromEnv(const cupti::CuptiApi* api,
                                 const std::string& info,
                                 bool* requested,
                                 std::string* error) {
  const char* dir = getenv("GTRACE_RAW_CAPTURE_DIR");
  *requested = dir != nullptr && *dir != '\0';
  if (!*requested || Instance() != nullptr)
    return true;
  auto* w = new CaptureWriter();
  w->api_ = api;
  if (!w->Open(dir, error)) {
    delete w;
    return false;
  }
  size_t log_bytes = sizeof(CallbackRecord) * kMaxCallbacks;
  size_t ready_bytes = sizeof(std::atomic<uint32_t>) * kMaxCallbacks;
  void* mem = mmap(nullptr, log_bytes + ready_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) {
    *error = "cannot reserve memory for the callback log";
    ::close(w->fd_);
    ::unlink(w->path_.c_str());
    delete w;
    return false;
  }
  w->log_ = static_cast<CallbackRecord*>(mem);
  w->ready_ = reinterpret_cast<std::atomic<uint32_t>*>(static_cast<uint8_t*>(mem) + log_bytes);  // zero pages
  if (api->handle != nullptr) {
    w->device_get_attribute_ = reinterpret_cast<DeviceGetAttributeFn>(dlsym(api->handle, "cuptiDeviceGetAttribute"));
  }
  if (!w->Frame(kFrameInfo, 0, info.data(), info.size())) {
    *error = "cannot write " + w->path_;
    return false;  // the writer is leaked on purpose: nothing else refers to it
  }
  g_writer.store(w, std::memory_order_release);
  g_capture_on.store(1, std::memory_order_release);
  return true;
}

bool CaptureWriter::Open(const std::string& dir, std::string* error) {
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    *error = "cannot create GTRACE_RAW_CAPTURE_DIR '" + dir + "': " + strerror(errno);
    return false;
  }
  path_ = dir + "/capture-" + std::to_string(::getpid()) + ".gtcap";
  // Exclusive: an existing capture is never overwritten.
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    *error = "cannot create " + path_ + ": " + strerror(errno);
    return false;
  }
  fd_ = MoveFdHigh(fd_);  // out of the range applications dup2 over (collector/high_fd.h)
  uint8_t header[kCaptureHeaderBytes];
  std::memcpy(header, kCaptureMagic, 8);
  std::memcpy(header + 8, &kCaptureVersion, 4);
  std::memcpy(header + 12, &kCaptureHeaderBytes, 4);
  if (::write(fd_, header, sizeof(header)) != static_cast<ssize_t>(sizeof(header))) {
    *error = "cannot write " + path_;
    ::close(fd_);
    fd_ = -1;
    return false;
  }
  file_bytes_ = sizeof(header);
  return true;
}

bool CaptureWriter::Frame(uint32_t type, uint64_t seq, const void* a, size_t a_bytes, const void* b, size_t b_bytes) {
  if (fd_ < 0 || failed_)
    return false;
  uint8_t head[kFrameHeaderBytes];
  uint32_t payload = static_cast<uint32_t>(a_bytes + b_bytes);
  std::memcpy(head, &type, 4);
  std::memcpy(head + 4, &payload, 4);
  std::memcpy(head + 8, &seq, 8);
  const void* parts[3] = {head, a, b};
  size_t sizes[3] = {sizeof(head), a_bytes, b_bytes};
  for (int i = 0; i < 3; ++i) {
    const uint8_t* p = static_cast<const uint8_t*>(parts[i]);
    size_t left = sizes[i];
    while (left > 0) {
      ssize_t n = ::write(fd_, p, left);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0) {
        failed_ = true;  // a cut frame at the end: readers stop there
        return false;
      }
      p += n;
      left -= static_cast<size_t>(n);
    }
  }
  file_bytes_ += sizeof(head) + payload;
  return true;
}

void CaptureWriter::RecordCallback(uint32_t domain, uint32_t cbid, const void* data) {
  uint32_t i = claimed_.fetch_add(1, std::memory_order_relaxed);
  if (i >= kMaxCallbacks) {
    claimed_.store(kMaxCallbacks, std::memory_order_relaxed);  // no wrap-around, however long the run
    callbacks_dropped_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  CallbackRecord& r = log_[i];
  std::memset(&r, 0, sizeof(r));
  r.ts_ns = NowNs();
  r.tid = static_cast<uint32_t>(::syscall(SYS_gettid));
  r.domain = domain;
  r.cbid = cbid;
  if (data != nullptr && (domain == CUPTI_CB_DOMAIN_RUNTIME_API || domain == CUPTI_CB_DOMAIN_DRIVER_API)) {
    const auto* cb = static_cast<const CUpti_CallbackData*>(data);
    r.site = cb->callbackSite;
    r.correlation_id = cb->correlationId;
    r.context_uid = cb->contextUid;
    CopyName(r.function_name, sizeof(r.function_name), cb->functionName);
    // symbolName is defined only for kernel launches (CUPTI leaves it unspecified otherwise): read
    // it only for those, recognised by name ("Launch", not host functions or graphs).
    if (cb->callbackSite == CUPTI_API_ENTER && std::strstr(r.function_name, "Launch") != nullptr &&
        std::strstr(r.function_name, "LaunchHostFunc") == nullptr &&
        std::strstr(r.function_name, "GraphLaunch") == nullptr) {
      CopyName(r.symbol_name, sizeof(r.symbol_name), cb->symbolName);
    }
    if (cb->callbackSite == CUPTI_API_EXIT && cb->functionReturnValue != nullptr) {
      int32_t rv = 0;
      std::memcpy(&rv, cb->functionReturnValue, sizeof(rv));  // cudaError_t and CUresult are ints
      r.return_value = static_cast<uint32_t>(rv);
      r.flags |= kCallbackHasReturnValue;
    }
    // Graph launches: the executable graph's id (its first parameter in all four variants).
    bool launch = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000 ||
                                                           cbid == CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000)
                                                        : (cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch ||
                                                           cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz);
    if (launch && cb->functionParams != nullptr && api_->GetGraphExecId != nullptr) {
      CUgraphExec exec = *static_cast<const CUgraphExec*>(cb->functionParams);
      if (exec != nullptr && api_->GetGraphExecId(exec, &r.graph_exec_id) == CUPTI_SUCCESS) {
        r.flags |= kCallbackHasGraphExecId;
      }
    }
  } else if (data != nullptr && domain == CUPTI_CB_DOMAIN_RESOURCE &&
             (cbid == CUPTI_CBID_RESOURCE_GRAPH_CREATED || cbid == CUPTI_CBID_RESOURCE_GRAPH_CLONED ||
              cbid == CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED)) {
    const auto* rd = static_cast<const CUpti_ResourceData*>(data);
    const auto* gd = static_cast<const CUpti_GraphData*>(rd->resourceDescriptor);
    if (gd != nullptr && api_->GetGraphId != nullptr) {
      if (gd->graph != nullptr && api_->GetGraphId(gd->graph, &r.graph_id) == CUPTI_SUCCESS) {
        r.flags |= kCallbackHasGraphId;
      }
      if (cbid == CUPTI_CBID_RESOURCE_GRAPH_CLONED && gd->originalGraph != nullptr &&
          api_->GetGraphId(gd->originalGraph, &r.other_graph_id) == CUPTI_SUCCESS) {
        r.flags |= kCallbackHasOtherGraphId;
      }
      if (cbid == CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED && gd->graphExec != nullptr &&
          api_->GetGraphExecId != nullptr && api_->GetGraphExecId(gd->graphExec, &r.graph_exec_id) == CUPTI_SUCCESS) {
        r.flags |= kCallbackHasGraphExecId;
      }
    }
  }
  r.reserved = NextSeq();  // the record's place among callbacks and buffers (written as the frame seq)
  ready_[i].store(1, std::memory_order_release);
}

void CaptureWriter::DrainCallbacks() {
  while (drained_ < kMaxCallbacks && ready_[drained_].load(std::memory_order_acquire) != 0) {
    CallbackRecord r = log_[drained_];
    uint64_t seq = r.reserved;
    r.reserved = 0;
    Frame(kFrameCallback, seq, &r, sizeof(r));
    ++drained_;
  }
}

void CaptureWriter::WriteDroppedRecords(uint64_t dropped) {
  if (finished_)
    return;
  Frame(kFrameDroppedRecords, NextSeq(), &dropped, sizeof(dropped));
}

void CaptureWriter::WriteDeviceAttributes(uint32_t device, uint64_t seq) {
  if (device_get_attribute_ == nullptr || !devices_queried_.insert(device).second)
    return;
  std::vector<DeviceAttribute> values;
  for (CUpti_DeviceAttribute a : kDeviceAttributes) {
    DeviceAttribute v{};
    v.attribute = static_cast<uint32_t>(a);
    uint64_t value = 0;
    size_t size = sizeof(value);
    v.result = static_cast<uint32_t>(device_get_attribute_(static_cast<CUdevice>(device), a, &size, &value));
    v.value = v.result == CUPTI_SUCCESS ? value : 0;
    values.push_back(v);
  }
  uint32_t head[2] = {device, static_cast<uint32_t>(values.size())};
  Frame(kFrameDeviceAttributes, seq, head, sizeof(head), values.data(), values.size() * sizeof(DeviceAttribute));
}

void CaptureWriter::WriteBuffer(const uint8_t* buffer, size_t valid_bytes, const BufferCompletion& done) {
  if (done.seq == 0 || finished_)
    return;
  if (failed_ || file_bytes_ + valid_bytes > kMaxFileBytes) {
    ++buffers_dropped_;
    return;
  }
  ActivityBufferHeader h{};
  h.context = done.context;
  h.stream_id = done.stream_id;
  h.size_bytes = done.size_bytes;
  h.valid_bytes = valid_bytes;
  if (!Frame(kFrameActivityBuffer, done.seq, &h, sizeof(h), buffer, valid_bytes)) {
    ++buffers_dropped_;
    return;
  }
  ++buffers_;
  buffer_bytes_ += valid_bytes;
  // CUPTI's own walk of the buffer, and the strings its records point at (a replay re-points them).
  std::vector<RecordIndexEntry> index;
  std::vector<const char*> strings;
  std::vector<uint32_t> devices;
  CUpti_Activity* record = nullptr;
  uint8_t* buf = const_cast<uint8_t*>(buffer);  // cuptiActivityGetNextRecord only reads it
  while (valid_bytes > 0 && api_->ActivityGetNextRecord(buf, valid_bytes, &record) == CUPTI_SUCCESS &&
         record != nullptr) {
    auto offset = static_cast<uint32_t>(reinterpret_cast<uint8_t*>(record) - buf);
    index.push_back({offset, static_cast<uint32_t>(record->kind)});
    switch (record->kind) {
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        strings.push_back(reinterpret_cast<const CUpti_ActivityKernel10*>(record)->name);
        break;
      case CUPTI_ACTIVITY_KIND_DEVICE: {
        const auto* d = reinterpret_cast<const CUpti_ActivityDevice5*>(record);
        strings.push_back(d->name);
        devices.push_back(d->id);
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMORY2:
        strings.push_back(reinterpret_cast<const CUpti_ActivityMemory4*>(record)->name);
        break;
      default:
        break;
    }
  }
  uint32_t count = static_cast<uint32_t>(index.size());
  Frame(kFrameRecordIndex, done.seq, &count, sizeof(count), index.data(), index.size() * sizeof(RecordIndexEntry));
  std::unordered_set<const char*> seen;
  for (const char* s : strings) {
    if (s == nullptr || !seen.insert(s).second)
      continue;
    uint64_t address = reinterpret_cast<uintptr_t>(s);
    Frame(kFrameString, done.seq, &address, sizeof(address), s, strnlen(s, 4096));
  }
  for (uint32_t d : devices)
    WriteDeviceAttributes(d, done.seq);
}

void CaptureWriter::Finish() {
  if (finished_)
    return;
  DrainCallbacks();
  CaptureEnd end{};
  end.buffers = buffers_;
  end.buffer_bytes = buffer_bytes_;
  end.callbacks = drained_;
  end.callbacks_dropped = callbacks_dropped_.load(std::memory_order_relaxed);
  end.buffers_dropped = buffers_dropped_;
  Frame(kFrameEnd, NextSeq(), &end, sizeof(end));
  finished_ = true;
  g_capture_on.store(0, std::memory_order_release);
  if (fd_ >= 0)
    ::close(fd_);
  fd_ = -1;
}

void CaptureWriter::StopInChild() {
  g_capture_on.store(0, std::memory_order_relaxed);
  if (CaptureWriter* w = Instance()) {
    if (w->fd_ >= 0)
      ::close(w->fd_);  // the parent keeps its own descriptor
    w->fd_ = -1;
    w->finished_ = true;
  }
}

}  // namespace gt::rawcap
