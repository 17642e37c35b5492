// fake_ReplayCapture: the fake CUPTI delivers a raw capture (inject/rawcap/, docs/capture.md) to
// gtrace as CUPTI did when it was recorded: callbacks and completed activity buffers in their
// recorded order. A TEST DOUBLE: it lets CPU tests run gtrace's real decoding path on real CUPTI
// output, and checks the fake's own record walk against the one real CUPTI made.
//
// What the replay changes, and why: pointers inside records (kernel, device and memory names) are
// addresses in the recording process; each is re-pointed at a copy of the string the capture saved
// for that buffer (no copy saved: set to NULL, counted). Graph handles in callbacks are rebuilt as
// the fake's handles carrying the recorded ids. Nothing else in a buffer is touched.
// Single-threaded: call it from one thread after fake_cuInit.
#include <cupti.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "tests/fakes/capture_reader.h"
#include "tests/fakes/fake_cuda.h"
#include "tests/fakes/fake_state.h"

namespace {

using gt::rawcap::ActivityBufferHeader;
using gt::rawcap::CallbackRecord;
using gt::rawcap::RecordIndexEntry;

struct Buffer {
  const fake::CaptureFrame* frame = nullptr;
  std::vector<RecordIndexEntry> index;
  bool has_index = false;
  std::map<uint64_t, std::string> strings;
};

// Re-points one pointer field: the saved string for that address, or NULL.
void Repoint(const char** field, const Buffer& b, fake_replay_stats* st) {
  if (*field == nullptr)
    return;
  auto it = b.strings.find(reinterpret_cast<uintptr_t>(*field));
  if (it == b.strings.end()) {
    *field = nullptr;
    ++st->strings_missing;
    return;
  }
  *field = fake::StableName(it->second);
}

void DeliverBuffer(const Buffer& b, fake_replay_stats* st) {
  fake::State& s = fake::S();
  const auto& p = b.frame->payload;
  if (p.size() < sizeof(ActivityBufferHeader))
    return;
  ActivityBufferHeader h;
  std::memcpy(&h, p.data(), sizeof(h));
  size_t valid = p.size() - sizeof(h);
  uint8_t* data = nullptr;
  size_t size = 0, max_records = 0;
  if (s.request != nullptr)
    s.request(&data, &size, &max_records);
  if (data == nullptr || size < valid) {
    ++st->buffers_declined;  // gtrace gave no buffer (or a smaller one than CUPTI used): dropped
    if (data != nullptr && s.complete != nullptr)
      s.complete(nullptr, 0, data, size, 0);
    return;
  }
  std::memcpy(data, p.data() + sizeof(h), valid);
  // Walk with the fake's cuptiActivityGetNextRecord (the one gtrace's decoder calls in the replay)
  // and compare with real CUPTI's walk of the same bytes.
  std::vector<RecordIndexEntry> walk;
  CUpti_Activity* r = nullptr;
  while (cuptiActivityGetNextRecord(data, valid, &r) == CUPTI_SUCCESS && r != nullptr) {
    walk.push_back({static_cast<uint32_t>(reinterpret_cast<uint8_t*>(r) - data), static_cast<uint32_t>(r->kind)});
    switch (r->kind) {
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        Repoint(&reinterpret_cast<CUpti_ActivityKernel10*>(r)->name, b, st);
        break;
      case CUPTI_ACTIVITY_KIND_DEVICE:
        Repoint(&reinterpret_cast<CUpti_ActivityDevice5*>(r)->name, b, st);
        break;
      case CUPTI_ACTIVITY_KIND_MEMORY2:
        Repoint(&reinterpret_cast<CUpti_ActivityMemory4*>(r)->name, b, st);
        break;
      default:
        break;
    }
  }
  st->records += walk.size();
  if (b.has_index) {
    bool same = walk.size() == b.index.size();
    for (size_t i = 0; same && i < walk.size(); ++i) {
      same = walk[i].offset == b.index[i].offset && walk[i].kind == b.index[i].kind;
    }
    if (!same) {
      ++st->walk_mismatches;
      std::fprintf(stderr,
                   "fake-replay: record walk differs from CUPTI's (buffer seq %llu: fake %zu records, CUPTI %zu)\n",
                   static_cast<unsigned long long>(b.frame->seq), walk.size(), b.index.size());
    }
  }
  if (s.complete != nullptr) {
    s.complete(reinterpret_cast<CUcontext>(static_cast<uintptr_t>(h.context)), h.stream_id, data, size, valid);
  }
  ++st->buffers_delivered;
}

// Handles the fake's cuptiGetGraphId / cuptiGetGraphExecId understand (they read a uint32 id).
void* Handle(std::deque<uint32_t>* store, uint32_t id) {
  store->push_back(id);
  return &store->back();
}

void FireCallback(const CallbackRecord& c, fake_replay_stats* st) {
  static std::deque<uint32_t> handles;  // stable addresses for the life of the process
  if (!fake_CallbackEnabled(static_cast<int>(c.domain), c.cbid)) {
    ++st->callbacks_skipped;  // gtrace did not ask for it in this run
    return;
  }
  auto domain = static_cast<CUpti_CallbackDomain>(c.domain);
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API || domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    CUpti_CallbackData d;
    std::memset(&d, 0, sizeof(d));
    d.callbackSite = static_cast<CUpti_ApiCallbackSite>(c.site);
    d.correlationId = c.correlation_id;
    d.contextUid = c.context_uid;
    std::string fn(c.function_name, strnlen(c.function_name, sizeof(c.function_name)));
    std::string sym(c.symbol_name, strnlen(c.symbol_name, sizeof(c.symbol_name)));
    d.functionName = fn.empty() ? nullptr : fake::StableName(fn);
    d.symbolName = sym.empty() ? nullptr : fake::StableName(sym);
    void* params[4] = {};  // graph launches: the executable graph first, as in every variant
    if (c.flags & gt::rawcap::kCallbackHasGraphExecId) {
      params[0] = Handle(&handles, c.graph_exec_id);
      d.functionParams = params;
    }
    int32_t rv = static_cast<int32_t>(c.return_value);
    if (c.flags & gt::rawcap::kCallbackHasReturnValue)
      d.functionReturnValue = &rv;
    fake::Fire(domain, c.cbid, &d);
  } else if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
    CUpti_GraphData g;
    std::memset(&g, 0, sizeof(g));
    if (c.flags & gt::rawcap::kCallbackHasGraphId)
      g.graph = static_cast<CUgraph>(Handle(&handles, c.graph_id));
    if (c.flags & gt::rawcap::kCallbackHasOtherGraphId) {
      g.originalGraph = static_cast<CUgraph>(Handle(&handles, c.other_graph_id));
    }
    if (c.flags & gt::rawcap::kCallbackHasGraphExecId) {
      g.graphExec = static_cast<CUgraphExec>(Handle(&handles, c.graph_exec_id));
    }
    CUpti_ResourceData rd;
    std::memset(&rd, 0, sizeof(rd));
    rd.resourceDescriptor = &g;
    fake::Fire(domain, c.cbid, &rd);
  } else {
    fake::Fire(domain, c.cbid, nullptr);
  }
  ++st->callbacks_fired;
}

}  // namespace

extern "C" int fake_ReplayCapture(const char* path, fake_replay_stats* stats) {
  fake_replay_stats local{};
  fake_replay_stats* st = stats != nullptr ? stats : &local;
  std::memset(st, 0, sizeof(*st));
  fake::CaptureFile file;
  std::string error;
  if (path == nullptr || !fake::ReadCaptureFile(path, &file, &error)) {
    std::fprintf(stderr, "fake-replay: %s\n", error.c_str());
    return -1;
  }
  // Index the buffers and what describes them; then one timeline of callbacks and buffers by seq.
  std::map<uint64_t, Buffer> buffers;
  struct Item {
    uint64_t seq;
    const fake::CaptureFrame* frame;
  };
  std::vector<Item> timeline;
  for (const fake::CaptureFrame& f : file.frames) {
    if (f.type == gt::rawcap::kFrameActivityBuffer) {
      buffers[f.seq].frame = &f;
      timeline.push_back({f.seq, &f});
    } else if ((f.type == gt::rawcap::kFrameCallback && f.payload.size() == sizeof(CallbackRecord)) ||
               (f.type == gt::rawcap::kFrameDroppedRecords && f.payload.size() == sizeof(uint64_t))) {
      timeline.push_back({f.seq, &f});
    } else if (f.type == gt::rawcap::kFrameRecordIndex && f.payload.size() >= 4) {
      uint32_t n = 0;
      std::memcpy(&n, f.payload.data(), 4);
      Buffer& b = buffers[f.seq];
      b.has_index = f.payload.size() == 4 + n * sizeof(RecordIndexEntry);
      if (b.has_index) {
        b.index.resize(n);
        std::memcpy(b.index.data(), f.payload.data() + 4, n * sizeof(RecordIndexEntry));
      }
    } else if (f.type == gt::rawcap::kFrameString && f.payload.size() >= 8) {
      uint64_t address = 0;
      std::memcpy(&address, f.payload.data(), 8);
      buffers[f.seq].strings[address] = std::string(f.payload.begin() + 8, f.payload.end());
    }
  }
  std::stable_sort(timeline.begin(), timeline.end(), [](const Item& a, const Item& b) { return a.seq < b.seq; });
  for (const Item& it : timeline) {
    if (it.frame->type == gt::rawcap::kFrameCallback) {
      CallbackRecord c;
      std::memcpy(&c, it.frame->payload.data(), sizeof(c));
      FireCallback(c, st);
    } else if (it.frame->type == gt::rawcap::kFrameDroppedRecords) {
      uint64_t n = 0;
      std::memcpy(&n, it.frame->payload.data(), sizeof(n));
      fake_DropRecords(n);  // gtrace's next cuptiActivityGetNumDroppedRecords sees them
      st->drops_replayed += n;
    } else {
      DeliverBuffer(buffers[it.seq], st);
    }
  }
  return 0;
}
