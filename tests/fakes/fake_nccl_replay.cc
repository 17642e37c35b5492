// Test double: the fake NCCL host replays a raw capture of NCCL profiler-plugin input
// (inject/rawcap/nccl_capture.h, docs/capture.md) into the real plugin. It proves that the plugin,
// fed what NCCL fed it once, records the same thing again; it does not emulate NCCL.
//
// Order and threads: every recorded call has its place (the frame seq: the order the capture's log
// slots were claimed). One replay thread per recorded NCCL thread makes that thread's calls; a
// turn counter lets exactly one call run at a time, in recorded order. So the plugin sees the
// calls in the recorded order, from as many threads as NCCL used (thread ids differ, of course).
//
// What is changed, because it is an address in the recording process: handles (a start's
// returned handle is mapped to the live one; parentObj and a Coll/P2p's parentGroup go through the
// map), contexts (mapped; an unknown one, e.g. a PXN proxy op's, is passed as recorded: the plugin
// never dereferences a context), string members (re-pointed at the saved text, one stable pointer
// per text, kept for the life of the process because the plugin's records hold pointers), and a
// proxy op's pid when it was the recording process's own (replaced by ours, so it stays "own").
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "tests/fakes/capture_reader.h"
#include "tests/fakes/fake_nccl_host.h"

namespace fake_nccl {
namespace {

using gt::rawcap::NcclCallRecord;
using gt::rawcap::NcclInitRecord;

constexpr size_t kUnion = 24;            // offset of the descriptor union (every version)
constexpr size_t kCollParentGroup = 80;  // CollV5::parentGroup (v5, v6)
constexpr size_t kP2pParentGroup = 40;   // P2pV5::parentGroup
constexpr uint64_t kColl = 1u << 1, kP2p = 1u << 2, kProxyOp = 1u << 3;

// One stable pointer per text, never freed: the plugin keeps string pointers until its drain thread
// copies them (possibly at process exit).
const char* Intern(const std::string& text) {
  static std::mutex* mu = new std::mutex;
  static auto* texts = new std::map<std::string, std::unique_ptr<char[]>>;
  std::lock_guard<std::mutex> lock(*mu);
  auto& slot = (*texts)[text];
  if (!slot) {
    slot.reset(new char[text.size() + 1]);
    std::memcpy(slot.get(), text.c_str(), text.size() + 1);
  }
  return slot.get();
}

template <typename T>
T Read(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
template <typename T>
void Write(uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

}  // namespace

bool Host::ReplayCapture(const std::string& path, PinClockFn pin, ReplayStats* stats, std::string* error) {
  fake::CaptureFile file;
  if (!fake::ReadCaptureFile(path, &file, error))
    return false;
  std::vector<const fake::CaptureFrame*> calls;
  for (const fake::CaptureFrame& f : file.frames) {
    if (f.type >= gt::rawcap::kFrameNcclInit && f.type <= gt::rawcap::kFrameNcclFinalize) {
      size_t want = f.type == gt::rawcap::kFrameNcclInit ? sizeof(NcclInitRecord) : sizeof(NcclCallRecord);
      if (f.payload.size() < want) {
        *error = path + ": an NCCL frame of " + std::to_string(f.payload.size()) + " bytes";
        return false;
      }
      calls.push_back(&f);
    } else if (f.type == gt::rawcap::kFrameNcclDropped && f.payload.size() >= 8) {
      stats->dropped_in_capture = Read<uint64_t>(f.payload.data());
    }
  }
  std::stable_sort(calls.begin(), calls.end(), [](auto* a, auto* b) { return a->seq < b->seq; });
  const fake::CaptureFrame* first_init = nullptr;
  for (auto* f : calls) {
    if (f->type == gt::rawcap::kFrameNcclInit) {
      first_init = f;
      break;
    }
  }
  if (first_init == nullptr) {
    *error = path + ": no NCCL init in the capture";
    return false;
  }
  uint32_t version = Read<NcclInitRecord>(first_init->payload.data()).abi_version;
  int code = version == 6 ? 22907 : version == 5 ? 22809 : 22709;
  if (!Load(code, error))
    return false;
  if (static_cast<uint32_t>(abi_) != version) {
    *error = "the plugin was recorded as ncclProfiler_v" + std::to_string(version) + " but loads as v" +
             std::to_string(abi_);
    return false;
  }
  pid_t recorded_pid = 0;
  if (auto it = file.info.find("pid"); it != file.info.end())
    recorded_pid = static_cast<pid_t>(std::stol(it->second));

  // Shared by the replay threads; only the thread holding the turn touches them.
  std::map<uint64_t, void*> handles;   // recorded handle -> live
  std::map<uint64_t, void*> contexts;  // recorded context -> live
  auto map_handle = [&](uint64_t recorded, bool* known) -> void* {
    *known = true;
    if (recorded == 0)
      return nullptr;
    auto it = handles.find(recorded);
    if (it == handles.end()) {
      *known = false;
      return nullptr;
    }
    return it->second;
  };
  // A parent NCCL names that this process never got back from the plugin (a PXN proxy op's
  // parentObj is another process's pointer) is passed on as recorded: the plugin must not touch it.
  auto map_parent = [&](uint64_t recorded) -> void* {
    bool known = true;
    void* live = map_handle(recorded, &known);
    if (known)
      return live;
    ++stats->parents_not_ours;
    return reinterpret_cast<void*>(static_cast<uintptr_t>(recorded));
  };

  auto run_one = [&](const fake::CaptureFrame& f) {
    if (f.type == gt::rawcap::kFrameNcclInit) {
      NcclInitRecord r = Read<NcclInitRecord>(f.payload.data());
      std::string name(r.comm_name, strnlen(r.comm_name, sizeof(r.comm_name)));
      const char* name_arg = (r.flags & gt::rawcap::kNcclNameNull) ? nullptr : name.c_str();
      void* context = nullptr;
      pin(r.ts_ns);
      if (abi_ == 6)
        v6_->init(&context, r.comm_hash, &event_mask_, name_arg, r.n_nodes, r.n_ranks, r.rank, nullptr);
      if (abi_ == 5)
        v5_->init(&context, r.comm_hash, &event_mask_, name_arg, r.n_nodes, r.n_ranks, r.rank, nullptr);
      if (abi_ == 4)
        v4_->init(&context, &event_mask_, name_arg, r.comm_hash, r.n_nodes, r.n_ranks, r.rank, nullptr);
      pin(0);
      contexts[r.context] = context;
      ++stats->inits;
      return;
    }
    NcclCallRecord r = Read<NcclCallRecord>(f.payload.data());
    void* context = reinterpret_cast<void*>(static_cast<uintptr_t>(r.context));
    if (auto it = contexts.find(r.context); it != contexts.end())
      context = it->second;
    bool known = true;
    switch (f.type) {
      case gt::rawcap::kFrameNcclStart: {
        alignas(8) uint8_t d[gt::rawcap::kNcclRawBytes] = {};
        std::memcpy(d, r.raw, std::min<size_t>(r.raw_bytes, sizeof(d)));
        uint64_t type = abi_ == 4 ? d[0] : Read<uint64_t>(d);
        Write<void*>(d + 8, map_parent(Read<uint64_t>(d + 8)));  // parentObj
        if (abi_ != 4 && (type == kColl || type == kP2p)) {
          uint8_t* group = d + kUnion + (type == kColl ? kCollParentGroup : kP2pParentGroup);
          Write<void*>(group, map_parent(Read<uint64_t>(group)));
        }
        if (type == kProxyOp && Read<pid_t>(d + kUnion) == recorded_pid)
          Write<pid_t>(d + kUnion, pid_);
        for (uint32_t i = 0; i < r.n_strings && i < gt::rawcap::kNcclMaxStrings; ++i) {
          const auto& ref = r.strings[i];
          if (ref.offset + sizeof(void*) > sizeof(d))
            continue;
          Write<const char*>(d + ref.offset, Intern(std::string(ref.text, strnlen(ref.text, sizeof(ref.text)))));
        }
        if (r.flags & gt::rawcap::kNcclStringCut)
          ++stats->strings_cut;
        void* handle = nullptr;
        pin(r.ts_ns);
        if (abi_ == 6)
          v6_->startEvent(context, &handle, reinterpret_cast<ncclProfilerEventDescr_v6_t*>(d));
        if (abi_ == 5)
          v5_->startEvent(context, &handle, reinterpret_cast<ncclProfilerEventDescr_v5_t*>(d));
        if (abi_ == 4)
          v4_->startEvent(context, &handle, reinterpret_cast<ncclProfilerEventDescr_v4_t*>(d));
        pin(0);
        if ((handle == nullptr) != (r.handle == 0))
          ++stats->handle_mismatches;
        if (r.handle != 0)
          handles[r.handle] = handle;
        ++stats->starts;
        break;
      }
      case gt::rawcap::kFrameNcclState: {
        void* handle = map_handle(r.handle, &known);
        if (!known)
          ++stats->handles_unknown;
        if (handle == nullptr)
          break;  // NCCL calls the plugin only with a handle it got
        alignas(8) uint8_t args[8] = {};
        std::memcpy(args, r.raw, std::min<size_t>(r.raw_bytes, sizeof(args)));
        auto* a =
            (r.flags & gt::rawcap::kNcclHasArgs) ? reinterpret_cast<ncclProfilerEventStateArgs_v5_t*>(args) : nullptr;
        auto state = static_cast<ncclProfilerEventState_t>(r.state);
        pin(r.ts_ns);
        if (abi_ == 6)
          v6_->recordEventState(handle, state, a);
        if (abi_ == 5)
          v5_->recordEventState(handle, state, a);
        if (abi_ == 4)
          v4_->recordEventState(handle, state, a);
        pin(0);
        ++stats->states;
        break;
      }
      case gt::rawcap::kFrameNcclStop: {
        void* handle = map_handle(r.handle, &known);
        if (!known)
          ++stats->handles_unknown;
        // The mapping stays: NCCL names a stopped Coll/P2p as a kernel channel's parentObj (the
        // plugin reads the released slot's id), and a new start of the same handle replaces it.
        if (handle == nullptr)
          break;
        pin(r.ts_ns);
        if (abi_ == 6)
          v6_->stopEvent(handle);
        if (abi_ == 5)
          v5_->stopEvent(handle);
        if (abi_ == 4)
          v4_->stopEvent(handle);
        pin(0);
        ++stats->stops;
        break;
      }
      case gt::rawcap::kFrameNcclFinalize: {
        pin(r.ts_ns);
        if (abi_ == 6)
          v6_->finalize(context);
        if (abi_ == 5)
          v5_->finalize(context);
        if (abi_ == 4)
          v4_->finalize(context);
        pin(0);
        ++stats->finalizes;
        break;
      }
      default:
        break;
    }
  };

  // One replay thread per recorded thread, each making its calls when the turn counter says so.
  std::map<uint32_t, std::vector<size_t>> by_tid;
  for (size_t i = 0; i < calls.size(); ++i) {
    const auto& p = calls[i]->payload;
    uint32_t tid = calls[i]->type == gt::rawcap::kFrameNcclInit ? Read<NcclInitRecord>(p.data()).tid
                                                                : Read<NcclCallRecord>(p.data()).tid;
    by_tid[tid].push_back(i);
  }
  std::atomic<size_t> turn{0};
  std::vector<std::thread> threads;
  for (const auto& [tid, indices] : by_tid) {
    threads.emplace_back([&, list = &indices] {
      for (size_t i : *list) {
        while (turn.load(std::memory_order_acquire) != i)
          std::this_thread::yield();
        run_one(*calls[i]);
        turn.store(i + 1, std::memory_order_release);
      }
    });
  }
  for (auto& t : threads)
    t.join();
  stats->threads = threads.size();
  return true;
}

}  // namespace fake_nccl
