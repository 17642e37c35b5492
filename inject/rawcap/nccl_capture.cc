// NcclCapture: the NCCL plugin's raw-capture file. See nccl_capture.h for the threads.
//
// Lock order: none of ours. The log is lock-free (claimed index + per-slot ready flag); the file
// is written by the drain thread alone (and by the init thread before the emitter exists).
#include "inject/rawcap/nccl_capture.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <string>

#include "collector/clock.h"
#include "collector/high_fd.h"
#include "collector/process_info.h"
#include "collector/schema_fields.h"
#include "collector/session.h"
#include "inject/nccl/nccl_abi.h"

namespace gt::rawcap {

std::atomic<uint32_t> g_nccl_capture_on{0};

namespace {

std::atomic<NcclCapture*> g_capture{nullptr};
constexpr size_t kUnion = 24;  // offset of the descriptor's union (v4, v5, v6; nccl_abi.h asserts it)

// Where a descriptor of `version` and `type` keeps its strings (byte offsets into the descriptor).
uint32_t StringOffsets(uint32_t version, uint64_t type, uint32_t* out) {
  namespace abi = gt::nccl::abi;
  uint32_t n = 0;
  auto add = [&](size_t member) { out[n++] = static_cast<uint32_t>(kUnion + member); };
  if (version == 4) {
    if (type == abi::kColl) {
      add(offsetof(abi::CollV4, func)), add(offsetof(abi::CollV4, datatype));
      add(offsetof(abi::CollV4, algo)), add(offsetof(abi::CollV4, proto));
    } else if (type == abi::kP2p) {
      add(offsetof(abi::P2pV4, func)), add(offsetof(abi::P2pV4, datatype));
    }
    return n;
  }
  switch (type) {
    case abi::kColl:
      add(offsetof(abi::CollV5, func)), add(offsetof(abi::CollV5, datatype));
      add(offsetof(abi::CollV5, algo)), add(offsetof(abi::CollV5, proto));
      break;
    case abi::kP2p:
      add(offsetof(abi::P2pV5, func)), add(offsetof(abi::P2pV5, datatype));
      break;
    case abi::kCollApi:
      add(offsetof(abi::CollApiV5, func)), add(offsetof(abi::CollApiV5, datatype));
      break;
    case abi::kP2pApi:
      add(offsetof(abi::P2pApiV5, func)), add(offsetof(abi::P2pApiV5, datatype));
      break;
    case abi::kCeColl:
      if (version >= 6) {
        add(offsetof(abi::CeCollV6, func)), add(offsetof(abi::CeCollV6, datatype));
        add(offsetof(abi::CeCollV6, sync_strategy));
      }
      break;
    default:
      break;
  }
  return n;
}

// Bounded copy (never reads past the field's size on NCCL's memory). True when it fitted.
bool CopyText(char* dst, size_t cap, const char* src) {
  size_t i = 0;
  for (; i + 1 < cap && src[i] != '\0'; ++i)
    dst[i] = src[i];
  dst[i] = '\0';
  return src[i] == '\0';
}

}  // namespace

NcclCapture* NcclCapture::Instance() {
  return g_capture.load(std::memory_order_acquire);
}

void NcclCapture::StartFromEnv() {
  const char* dir = getenv("GTRACE_RAW_CAPTURE_DIR");
  if (dir == nullptr || *dir == '\0' || Instance() != nullptr)
    return;
  std::string error;
  std::string path = std::string(dir) + "/nccl-" + std::to_string(::getpid()) + ".gtcap";
  auto* c = new NcclCapture();
  size_t log_bytes = sizeof(Slot) * kMaxCalls;
  size_t ready_bytes = sizeof(std::atomic<uint32_t>) * kMaxCalls;
  void* mem = MAP_FAILED;
  if (::mkdir(dir, 0755) != 0 && errno != EEXIST) {
    error = std::string("cannot create GTRACE_RAW_CAPTURE_DIR '") + dir + "': " + strerror(errno);
  } else if ((c->fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)) < 0) {
    error = "cannot create " + path + ": " + strerror(errno);  // exclusive: never overwrite a capture
  } else if ((mem = mmap(nullptr, log_bytes + ready_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
                         0)) == MAP_FAILED) {
    error = "cannot reserve memory for the NCCL call log";
  } else {
    c->fd_ = MoveFdHigh(c->fd_);  // out of the range applications dup2 over (collector/high_fd.h)
    c->log_ = static_cast<Slot*>(mem);
    c->ready_ = reinterpret_cast<std::atomic<uint32_t>*>(static_cast<uint8_t*>(mem) + log_bytes);  // zero pages
    uint8_t header[kCaptureHeaderBytes];
    std::memcpy(header, kCaptureMagic, 8);
    std::memcpy(header + 8, &kCaptureVersion, 4);
    std::memcpy(header + 12, &kCaptureHeaderBytes, 4);
    uint64_t mono = NowNs();
    timespec rt{};
    clock_gettime(CLOCK_REALTIME, &rt);
    int64_t real = static_cast<int64_t>(rt.tv_sec) * 1000000000 + rt.tv_nsec;
    std::string info = "kind=nccl\npid=" + std::to_string(::getpid()) + "\nstart_ns=" + std::to_string(mono) +
                       "\nrealtime_minus_monotonic_ns=" + std::to_string(real - static_cast<int64_t>(mono)) + "\n";
    if (const char* s = getenv("GTRACE_RAW_CAPTURE_SCENARIO"); s != nullptr) {
      std::string text(s);
      for (char& ch : text) {
        if (ch == '\n')
          ch = ' ';
      }
      info += "scenario=" + text + "\n";
    }
    if (::write(c->fd_, header, sizeof(header)) != static_cast<ssize_t>(sizeof(header)) ||
        !c->Frame(kFrameInfo, 0, info.data(), info.size())) {
      error = "cannot write " + path;
    }
  }
  if (!error.empty()) {
    if (c->fd_ >= 0) {
      ::close(c->fd_);
      ::unlink(path.c_str());
    }
    if (mem != MAP_FAILED)
      munmap(mem, log_bytes + ready_bytes);
    delete c;
    ReportDiagnostic(field::enums::kSeverityWarning, "nccl", "raw capture of NCCL off: " + error);
    return;
  }
  g_capture.store(c, std::memory_order_release);
  if (!RegisterEmitter(&NcclCapture::Emit)) {
    ReportDiagnostic(field::enums::kSeverityWarning, "nccl", "raw capture of NCCL off: no emitter slot");
    return;
  }
  pthread_atfork(nullptr, nullptr, &NcclCapture::StopInChild);
  g_nccl_capture_on.store(1, std::memory_order_release);
  PrintLine("raw capture of NCCL plugin input to " + path);
}

NcclCapture::Slot* NcclCapture::Claim() {
  uint32_t i = claimed_.fetch_add(1, std::memory_order_relaxed);
  if (i >= kMaxCalls) {
    claimed_.store(kMaxCalls, std::memory_order_relaxed);  // no wrap-around, however long the run
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  Slot* s = &log_[i];
  s->seq = i + 1;
  return s;
}

void NcclCapture::Publish(Slot* s) {
  ready_[s - log_].store(1, std::memory_order_release);
}

NcclCallRecord* NcclCapture::ClaimCall(uint32_t type, uint32_t version, uint64_t ts_ns, Slot** slot) {
  Slot* s = Claim();
  *slot = s;
  if (s == nullptr)
    return nullptr;
  s->type = type;
  NcclCallRecord& r = s->call;
  std::memset(&r, 0, sizeof(r));
  r.ts_ns = ts_ns;
  r.tid = CurrentTid();
  r.abi_version = version;
  return &r;
}

void NcclCapture::RecordInit(uint32_t version,
                             uint64_t ts_ns,
                             uint64_t comm_hash,
                             void* context,
                             int n_nodes,
                             int n_ranks,
                             int rank,
                             int activation_mask,
                             const char* comm_name) {
  Slot* s = Claim();
  if (s == nullptr)
    return;
  s->type = kFrameNcclInit;
  NcclInitRecord& r = s->init;
  std::memset(&r, 0, sizeof(r));
  r.ts_ns = ts_ns;
  r.tid = CurrentTid();
  r.abi_version = version;
  r.comm_hash = comm_hash;
  r.context = reinterpret_cast<uintptr_t>(context);
  r.n_nodes = n_nodes;
  r.n_ranks = n_ranks;
  r.rank = rank;
  r.activation_mask = activation_mask;
  if (comm_name == nullptr) {
    r.flags |= kNcclNameNull;
  } else {
    r.name_bytes = static_cast<uint32_t>(strnlen(comm_name, 1u << 20));
    CopyText(r.comm_name, sizeof(r.comm_name), comm_name);
  }
  Publish(s);
}

void NcclCapture::RecordStart(uint32_t version,
                              uint64_t ts_ns,
                              void* context,
                              void* handle,
                              const void* descr,
                              size_t bytes) {
  Slot* s = nullptr;
  NcclCallRecord* r = ClaimCall(kFrameNcclStart, version, ts_ns, &s);
  if (r == nullptr)
    return;
  r->context = reinterpret_cast<uintptr_t>(context);
  r->handle = reinterpret_cast<uintptr_t>(handle);
  if (descr != nullptr && bytes <= sizeof(r->raw)) {
    std::memcpy(r->raw, descr, bytes);
    r->raw_bytes = static_cast<uint32_t>(bytes);
    uint64_t type = 0;
    if (version == 4) {
      type = *static_cast<const uint8_t*>(descr);
    } else {
      std::memcpy(&type, descr, sizeof(type));
    }
    uint32_t offsets[kNcclMaxStrings];
    uint32_t n = StringOffsets(version, type, offsets);
    for (uint32_t i = 0; i < n; ++i) {
      const char* text = nullptr;
      std::memcpy(&text, r->raw + offsets[i], sizeof(text));
      if (text == nullptr)
        continue;
      NcclStringRef& ref = r->strings[r->n_strings++];
      ref.offset = offsets[i];
      if (!CopyText(ref.text, sizeof(ref.text), text))
        r->flags |= kNcclStringCut;
    }
  }
  Publish(s);
}

void NcclCapture::RecordState(uint32_t version, uint64_t ts_ns, void* handle, int state, const void* args) {
  Slot* s = nullptr;
  NcclCallRecord* r = ClaimCall(kFrameNcclState, version, ts_ns, &s);
  if (r == nullptr)
    return;
  r->handle = reinterpret_cast<uintptr_t>(handle);
  r->state = state;
  if (args != nullptr) {
    std::memcpy(r->raw, args, sizeof(gt::nccl::abi::EventStateArgsV4));
    r->raw_bytes = sizeof(gt::nccl::abi::EventStateArgsV4);
    r->flags |= kNcclHasArgs;
  }
  Publish(s);
}

void NcclCapture::RecordStop(uint32_t version, uint64_t ts_ns, void* handle) {
  Slot* s = nullptr;
  NcclCallRecord* r = ClaimCall(kFrameNcclStop, version, ts_ns, &s);
  if (r == nullptr)
    return;
  r->handle = reinterpret_cast<uintptr_t>(handle);
  Publish(s);
}

void NcclCapture::RecordFinalize(uint32_t version, uint64_t ts_ns, void* context) {
  Slot* s = nullptr;
  NcclCallRecord* r = ClaimCall(kFrameNcclFinalize, version, ts_ns, &s);
  if (r == nullptr)
    return;
  r->context = reinterpret_cast<uintptr_t>(context);
  Publish(s);
}

bool NcclCapture::Frame(uint32_t type, uint64_t seq, const void* payload, size_t bytes) {
  if (fd_ < 0 || failed_)
    return false;
  uint8_t head[kFrameHeaderBytes];
  uint32_t n = static_cast<uint32_t>(bytes);
  std::memcpy(head, &type, 4);
  std::memcpy(head + 4, &n, 4);
  std::memcpy(head + 8, &seq, 8);
  const void* parts[2] = {head, payload};
  size_t sizes[2] = {sizeof(head), bytes};
  for (int i = 0; i < 2; ++i) {
    const uint8_t* p = static_cast<const uint8_t*>(parts[i]);
    size_t left = sizes[i];
    while (left > 0) {
      ssize_t w = ::write(fd_, p, left);
      if (w < 0 && errno == EINTR)
        continue;
      if (w <= 0) {
        failed_ = true;  // a cut frame at the end: readers keep what came before
        return false;
      }
      p += w;
      left -= static_cast<size_t>(w);
    }
  }
  return true;
}

void NcclCapture::Emit(ChunkBuilder* /*chunk*/, uint64_t /*session_id*/) {
  NcclCapture* c = Instance();
  if (c == nullptr || c->fd_ < 0)
    return;
  while (c->drained_ < kMaxCalls && c->ready_[c->drained_].load(std::memory_order_acquire) != 0) {
    const Slot& s = c->log_[c->drained_];
    size_t bytes = s.type == kFrameNcclInit ? sizeof(NcclInitRecord) : sizeof(NcclCallRecord);
    c->Frame(s.type, s.seq, &s.call, bytes);
    ++c->drained_;
  }
  uint64_t dropped = c->dropped_.load(std::memory_order_relaxed);
  if (dropped > c->dropped_written_) {
    c->Frame(kFrameNcclDropped, c->drained_, &dropped, sizeof(dropped));
    c->dropped_written_ = dropped;
  }
}

void NcclCapture::StopInChild() {
  g_nccl_capture_on.store(0, std::memory_order_relaxed);
  if (NcclCapture* c = Instance()) {
    if (c->fd_ >= 0)
      ::close(c->fd_);  // the parent keeps its own descriptor
    c->fd_ = -1;
  }
}

}  // namespace gt::rawcap
