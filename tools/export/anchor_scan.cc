#include "tools/export/anchor_scan.h"

#include <algorithm>
#include <functional>
#include <map>
#include <unordered_map>
#include <utility>

#include "tools/export/nccl_clock.h"
#include "tools/stream/stream_reader.h"

namespace gt::exporter {
namespace {

bool IsOperation(uint32_t type) {
  return type == schema::NCCL_EVENT_TYPE_COLL || type == schema::NCCL_EVENT_TYPE_P2P ||
         type == schema::NCCL_EVENT_TYPE_CE_COLL;
}
bool IsApi(uint32_t type) {
  return type == schema::NCCL_EVENT_TYPE_COLL_API || type == schema::NCCL_EVENT_TYPE_P2P_API;
}

// One NCCL operation (Coll, P2p, CeColl) of the stream: what its START says and what the later
// passes find for it: the only thing held per operation (and, for a stream whose ids do not grow
// with time, two 16-byte index entries).
struct Op {
  uint64_t id = 0;
  uint64_t parent_id = 0;  // its API event (CollApi / P2pApi), when it has one
  uint64_t seq = 0;        // START's seq_number
  int64_t api_start_ns = 0;
  int64_t gpu_stop_ns = 0;  // last kernel-channel end, stream clock
  uint32_t type = 0;
  uint32_t comm_index = 0;
  uint32_t func = 0;  // index into AnchorScan::funcs_
  bool has_api_start = false;
  bool has_gpu_stop = false;
  bool dead = false;  // a repeated START of an id: merged into the id's first entry
};
static_assert(sizeof(Op) == 56, "one Op per NCCL operation: keep it small");

// The clock-alignment scan of one stream in bounded memory: NcclStreamModel's collective ends
// without holding the events. Four reads of the stream (StreamReader keeps O(1) of it resident):
//   1. the operations (one Op each, in first-START order), clock pairs, communicators;
//   2. the API parents' start times (onto their operations), and the GPU times of the kernel
//      channels' observations (GpuClockMap::FitStreamed's first pass);
//   3. the observations themselves (its second pass: upper bounds from the channels' START and
//      STOP, lower bounds from their operation's API start);
//   4. each channel's end on the fitted clock, kept as its operation's latest.
// Held: the operations (at most max_ops: below), the communicators' hashes, the stream's interned
// strings (as before: one per distinct string, not per event), the channels open at a time
// (started, not yet stopped), one entry per GPU-clock window (one per second of host time with
// kernel channels: a 104-byte Window, and while fitting a map node of ~150 bytes: under 1 MB per
// hour of stream) and one 16-byte clock pair per second (58 kB per hour).
// The cap. Read 1 holds an operation only when seq % 2^k == 0 (k = seq_shift_, 0 at first). When
// max_ops are held and another qualifying one comes, k is raised (and the entries that no longer
// qualify are dropped) until it fits or no longer qualifies; so the held set is exactly the
// operations whose seq is a multiple of 2^k for the smallest k that leaves at most max_ops of them
// in the whole stream (a repeated START is judged by its own seq), in first-START order. Sequence
// numbers count per communicator and function on every rank alike, so every rank keeps the same
// collectives and AlignSession still matches them across hosts; nested powers of two keep a stream
// thinned less (or not at all) matching a stream thinned more. Later reads skip what belongs to an
// operation not held: the lower bounds of the GPU-clock fit come only from held operations'
// channels (their API starts), the upper bounds still from every channel (they need nothing held).
// Below the cap nothing differs from a scan without one.
//
// Same ends as NcclStreamModel::Finish (an operation started twice included: its last START counts,
// at its first one's place) for streams where event ids are unique across types, each kernel channel
// is started once and stopped at most once, and its parent is an operation: what the NCCL plugin
// writes. Otherwise a channel stopped twice counts its first stop here (the held model its last), a
// channel started twice gives the fit both starts (the held model its last), and a channel whose
// parent is not an operation gives no lower bound. Single-threaded (one task of multi_export's
// ParallelFor per stream).
class AnchorScan {
 public:
  AnchorScan(std::string path, uint64_t max_ops) : path_(std::move(path)), max_ops_(max_ops) {}

  Status Run(StreamAnchors* out) {
    Status st = CollectOperations();
    out->operations = operations_;
    out->held_operations = ops_.size();
    out->seq_shift = seq_shift_;
    if (!st.ok())
      return st;
    if (ops_.empty())
      return Status::Ok();
    Index();
    Status read_st;
    clock_.FitStreamed([&](bool origin_pass, const GpuClockMap::SampleFn& fn) {
      if (read_st.ok())
        read_st = origin_pass ? ApiStartsAndGpuTimes(fn) : Observations(fn);
    });
    if (!read_st.ok())
      return read_st;
    if (!(st = ChannelEnds()).ok())
      return st;
    std::vector<std::pair<uint64_t, uint32_t>>().swap(by_id_);
    std::vector<std::pair<uint64_t, uint32_t>>().swap(by_parent_);
    auto is_end = [this](const Op& o) {
      return !o.dead && o.type == schema::NCCL_EVENT_TYPE_COLL && o.has_gpu_stop &&
             comm_hashes_.count(o.comm_index) != 0;
    };
    out->ends.reserve(out->ends.size() + static_cast<size_t>(std::count_if(ops_.begin(), ops_.end(), is_end)));
    for (const Op& o : ops_) {
      if (is_end(o))
        out->ends.push_back({comm_hashes_.at(o.comm_index), funcs_[o.func], o.seq, o.gpu_stop_ns});
    }
    return Status::Ok();
  }

 private:
  // Calls fn(record, host ts) for every NCCL record of the stream, in read order.
  Status ForEachRecord(const std::function<void(const schema::Chunk&)>& on_chunk,
                       const std::function<void(const schema::NcclEvent&, uint64_t)>& fn) {
    stream::StreamReader reader;
    Status st = reader.Open(path_);
    if (!st.ok())
      return st;
    schema::Chunk chunk;
    while (true) {
      bool has = false;
      if (!(st = reader.Next(&chunk, &has)).ok())
        return st;
      if (!has)
        break;
      if (on_chunk)
        on_chunk(chunk);
      uint64_t ts = chunk.base_ns();
      for (const schema::NcclEvent& e : chunk.nccl()) {
        ts += static_cast<uint64_t>(e.ts_delta_ns());
        fn(e, ts);
      }
    }
    return Status::Ok();
  }

  // Read 1.
  Status CollectOperations() {
    std::unordered_map<uint64_t, std::string> strings;
    std::unordered_map<std::string, uint32_t> func_index;
    stream::StreamReader header_reader;
    Status st = header_reader.Open(path_);
    if (!st.ok())
      return st;
    const schema::ClockSnapshot& start = header_reader.header().start_clock();
    clock_.AddSnapshot(start.stream_clock_ns(), start.realtime_ns());
    auto on_chunk = [&](const schema::Chunk& chunk) {
      for (const schema::InternedString& s : chunk.strings())
        strings[s.id()] = s.text();
      if (chunk.has_clock())
        clock_.AddSnapshot(chunk.clock().stream_clock_ns(), chunk.clock().realtime_ns());
      for (const schema::NcclComm& c : chunk.nccl_comms())
        comm_hashes_[c.comm_index()] = c.comm_hash();
    };
    return ForEachRecord(on_chunk, [&](const schema::NcclEvent& e, uint64_t) {
      if (e.kind() != schema::NCCL_EVENT_KIND_START || !IsOperation(static_cast<uint32_t>(e.type())))
        return;
      Op o;
      o.id = e.event_id();
      o.parent_id = e.parent_id();
      o.seq = e.seq_number();
      o.type = static_cast<uint32_t>(e.type());
      o.comm_index = e.comm_index();
      auto text = strings.find(e.func_string_id());
      const std::string func = text != strings.end() ? text->second : std::string();
      auto [it, fresh] = func_index.try_emplace(func, static_cast<uint32_t>(funcs_.size()));
      if (fresh)
        funcs_.push_back(func);
      o.func = it->second;
      ++operations_;
      Hold(o);
    });
  }

  bool Qualifies(uint64_t seq) const { return (seq & ((uint64_t{1} << seq_shift_) - 1)) == 0; }

  // Appends `o` to ops_ under the cap (the class comment): raises k while the cap is reached.
  void Hold(const Op& o) {
    if (!Qualifies(o.seq))
      return;
    while (max_ops_ != 0 && ops_.size() >= max_ops_) {
      if (seq_shift_ == kAnchorScanMaxSeqShift)
        return;
      ++seq_shift_;
      ops_.erase(std::remove_if(ops_.begin(), ops_.end(), [this](const Op& x) { return !Qualifies(x.seq); }),
                 ops_.end());
      if (!Qualifies(o.seq))
        return;
    }
    // Never more room than the cap: the vector's doubling would otherwise overshoot it.
    if (max_ops_ != 0 && ops_.size() == ops_.capacity())
      ops_.reserve(static_cast<size_t>(std::min<uint64_t>(max_ops_, std::max<uint64_t>(16, 2 * ops_.capacity()))));
    ops_.push_back(o);
  }

  // Lookups by id and by parent id. The plugin's ids grow with time and an operation starts after
  // its API event, so ops_ is usually sorted by both and is searched as it is; otherwise sorted
  // copies (16 bytes per operation each). A repeated START of an id keeps the first one's place
  // with the last one's fields, as NcclStreamModel merges them.
  void Index() {
    auto by_parent = [](const Op& a, const Op& b) { return a.parent_id < b.parent_id; };
    if (std::adjacent_find(ops_.begin(), ops_.end(), [](const Op& a, const Op& b) { return a.id >= b.id; }) ==
        ops_.end()) {
      ids_sorted_ = true;  // strictly increasing: no repeated START either
      parents_sorted_ = std::is_sorted(ops_.begin(), ops_.end(), by_parent);
      if (parents_sorted_)
        return;
    } else {
      IndexIds();
    }
    by_parent_.reserve(ops_.size());
    for (uint32_t i = 0; i < ops_.size(); ++i) {
      if (!ops_[i].dead)
        by_parent_.push_back({ops_[i].parent_id, i});
    }
    std::sort(by_parent_.begin(), by_parent_.end());
  }

  void IndexIds() {
    by_id_.reserve(ops_.size());
    for (uint32_t i = 0; i < ops_.size(); ++i)
      by_id_.push_back({ops_[i].id, i});
    std::sort(by_id_.begin(), by_id_.end());
    std::vector<std::pair<uint64_t, uint32_t>> unique;
    unique.reserve(by_id_.size());
    for (size_t i = 0; i < by_id_.size();) {
      size_t j = i;
      while (j + 1 < by_id_.size() && by_id_[j + 1].first == by_id_[i].first)
        ++j;
      const uint32_t first = by_id_[i].second, last = by_id_[j].second;
      if (last != first) {
        ops_[first] = ops_[last];
        for (size_t k = i + 1; k <= j; ++k)
          ops_[by_id_[k].second].dead = true;
      }
      unique.push_back({by_id_[i].first, first});
      i = j + 1;
    }
    by_id_.swap(unique);
  }

  Op* FindOp(uint64_t id) {
    if (ids_sorted_) {
      auto it = std::lower_bound(ops_.begin(), ops_.end(), id, [](const Op& o, uint64_t v) { return o.id < v; });
      return it != ops_.end() && it->id == id ? &*it : nullptr;
    }
    auto it = std::lower_bound(by_id_.begin(), by_id_.end(), std::make_pair(id, uint32_t{0}));
    return it != by_id_.end() && it->first == id ? &ops_[it->second] : nullptr;
  }

  // fn(op) for every operation whose parent is `parent_id`.
  template <typename Fn>
  void ForEachChild(uint64_t parent_id, Fn fn) {
    if (parents_sorted_) {
      auto it = std::lower_bound(ops_.begin(), ops_.end(), parent_id,
                                 [](const Op& o, uint64_t v) { return o.parent_id < v; });
      for (; it != ops_.end() && it->parent_id == parent_id; ++it)
        fn(*it);
      return;
    }
    auto it = std::lower_bound(by_parent_.begin(), by_parent_.end(), std::make_pair(parent_id, uint32_t{0}));
    for (; it != by_parent_.end() && it->first == parent_id; ++it)
      fn(ops_[it->second]);
  }

  // Kernel-channel records: START (and each STOP of a channel started before it and not yet
  // stopped) go to fn(start, parent, gpu ns, host ns). Channels open at a time are held.
  template <typename Fn>
  Status ForEachChannelRecord(Fn fn, const std::function<void(const schema::NcclEvent&, uint64_t)>& other = nullptr) {
    std::unordered_map<uint64_t, uint64_t> open;  // channel id -> parent id
    return ForEachRecord(nullptr, [&](const schema::NcclEvent& e, uint64_t ts) {
      if (e.kind() == schema::NCCL_EVENT_KIND_START && e.type() == schema::NCCL_EVENT_TYPE_KERNEL_CH) {
        open[e.event_id()] = e.parent_id();
        fn(true, e.parent_id(), e.gpu_timer_ns(), ts);
      } else if (e.kind() == schema::NCCL_EVENT_KIND_STOP) {
        auto it = open.find(e.event_id());
        if (it != open.end()) {
          const uint64_t parent = it->second;
          open.erase(it);
          fn(false, parent, e.gpu_timer_ns(), ts);
        }
      }
      if (other)
        other(e, ts);
    });
  }

  // Read 2: every START of an operation's parent sets the operation's API start (the last one
  // wins, as the held model keeps an event's last START); the channels' GPU times for the fit.
  Status ApiStartsAndGpuTimes(const GpuClockMap::SampleFn& fn) {
    auto parent_start = [&](const schema::NcclEvent& e, uint64_t ts) {
      if (e.kind() != schema::NCCL_EVENT_KIND_START)
        return;
      ForEachChild(e.event_id(), [&](Op& o) {
        o.has_api_start = IsApi(static_cast<uint32_t>(e.type()));
        o.api_start_ns = static_cast<int64_t>(ts);
      });
    };
    return ForEachChannelRecord(
        [&](bool, uint64_t, uint64_t gpu_ns, uint64_t host_ns) {
          if (gpu_ns != 0)
            fn(gpu_ns, host_ns, true);
        },
        parent_start);
  }

  // Read 3: the observations, as NcclStreamModel::Finish gives them to the fit.
  Status Observations(const GpuClockMap::SampleFn& fn) {
    return ForEachChannelRecord([&](bool start, uint64_t parent, uint64_t gpu_ns, uint64_t host_ns) {
      if (gpu_ns == 0)
        return;
      fn(gpu_ns, host_ns, true);
      if (!start)
        return;
      const Op* op = FindOp(parent);
      if (op != nullptr && op->has_api_start)
        fn(gpu_ns, static_cast<uint64_t>(op->api_start_ns), false);
    });
  }

  // Read 4: each channel's end on the fitted clock; its operation keeps the latest.
  Status ChannelEnds() {
    return ForEachChannelRecord([&](bool start, uint64_t parent, uint64_t gpu_ns, uint64_t) {
      if (start || gpu_ns == 0)
        return;
      Op* op = FindOp(parent);
      if (op == nullptr)
        return;
      const int64_t end = clock_.ToStreamNs(gpu_ns);
      op->gpu_stop_ns = op->has_gpu_stop ? std::max(op->gpu_stop_ns, end) : end;
      op->has_gpu_stop = true;
    });
  }

  std::string path_;
  uint64_t max_ops_ = 0;     // 0: no cap
  uint32_t seq_shift_ = 0;   // k: ops_ holds the operations with seq % 2^k == 0
  uint64_t operations_ = 0;  // operation STARTs read
  GpuClockMap clock_;
  std::map<uint32_t, uint64_t> comm_hashes_;  // comm_index -> comm_hash (the last description)
  std::vector<std::string> funcs_;            // distinct function names
  std::vector<Op> ops_;                       // first-START order
  bool ids_sorted_ = false;                   // ops_ by id, strictly: FindOp searches ops_ itself
  bool parents_sorted_ = false;               // ops_ by parent id: ForEachChild searches ops_ itself
  std::vector<std::pair<uint64_t, uint32_t>> by_id_, by_parent_;  // otherwise: (key, index into ops_)
};

}  // namespace

Status ScanAnchors(const std::string& path, StreamAnchors* out, const AnchorScanOptions& options) {
  return AnchorScan(path, options.max_ops).Run(out);
}

}  // namespace gt::exporter
