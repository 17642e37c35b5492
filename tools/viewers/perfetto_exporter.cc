#include "tools/viewers/perfetto_exporter.h"

#include <map>

#include "tools/viewers/activity_names.h"
#include "tools/viewers/end_queue.h"
#include "tools/viewers/lane_allocator.h"
#include "tools/viewers/perfetto_trace_writer.h"

namespace gt::viewers {
namespace {

using Arg = PerfettoTraceWriter::Arg;

std::string BaseName(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string Triple(const int64_t v[3]) {
  return std::to_string(v[0]) + "," + std::to_string(v[1]) + "," + std::to_string(v[2]);
}

class PerfettoExporter : public ViewerWriter {
 public:
  PerfettoExporter(const Catalog* catalog, std::unique_ptr<OutputFile> file)
      : catalog_(*catalog), file_(std::move(file)), trace_(file_.get()) {}

  Status Begin();
  Status OnEvent(const Event& e) override;
  Status Commit(std::vector<std::string>* outputs) override;
  std::vector<std::string> warnings() const override;

 private:
  // A logical track whose slices are spread over lanes (lane 0 = the track itself).
  struct LaneTrack {
    uint64_t parent_uuid = 0;  // of lane tracks > 0 (and of lane 0 when declared lazily)
    std::string name;
    std::vector<uint64_t> lane_uuids;  // [0] set when the track is declared
    LaneAllocator lanes;
  };

  uint64_t NewUuid() { return next_uuid_++; }
  uint64_t Lane(LaneTrack* t, int64_t start_ns, int64_t end_ns);
  LaneTrack* ProcessTrack(std::map<size_t, LaneTrack>* tracks, size_t process, const char* name);
  void Slice(const Event& e,
             uint64_t track,
             std::string_view category,
             std::string_view name,
             const std::vector<Arg>& args,
             PerfettoTraceWriter::Flows flows = {});

  const Catalog& catalog_;
  std::unique_ptr<OutputFile> file_;
  PerfettoTraceWriter trace_;
  EndQueue<uint64_t> ends_;  // track uuid of each open slice
  uint64_t next_uuid_ = 1;
  std::vector<uint64_t> process_uuids_;
  std::vector<LaneTrack> thread_tracks_;                                         // by Catalog thread index
  std::vector<LaneTrack> stream_tracks_;                                         // by Catalog stream index
  std::map<size_t, LaneTrack> nccl_tracks_, nccl_op_tracks_, start_end_tracks_;  // by process
  std::vector<uint64_t> metric_uuids_;
  uint64_t unplaced_ = 0;
};

Status PerfettoExporter::Begin() {
  trace_.ClockSnapshot(catalog_.utc_epoch_ns());
  const auto& processes = catalog_.processes();
  for (const ProcessInfo& p : processes) {
    uint64_t uuid = NewUuid();
    process_uuids_.push_back(uuid);
    std::vector<std::string> labels = {"rank " + std::to_string(p.rank), "host " + p.host};
    trace_.ProcessTrack(uuid, p.view_pid, BaseName(p.name) + " [rank " + std::to_string(p.rank) + "]", labels);
  }
  for (const ThreadInfo& t : catalog_.threads()) {
    LaneTrack track;
    track.lane_uuids.push_back(NewUuid());
    track.parent_uuid = track.lane_uuids[0];
    track.name = t.name;
    trace_.ThreadTrack(track.lane_uuids[0], processes[t.process].view_pid, t.view_tid, t.name);
    thread_tracks_.push_back(std::move(track));
  }
  for (const StreamInfo& s : catalog_.streams()) {
    LaneTrack track;
    track.lane_uuids.push_back(NewUuid());
    track.parent_uuid = process_uuids_[s.process];
    track.name = "GPU " + std::to_string(s.device_id) +
                 (s.stream_id < 0 ? " synchronization" : " stream " + std::to_string(s.stream_id));
    const GpuInfo* gpu = catalog_.GpuOf(s.process, s.device_id);
    trace_.Track(track.lane_uuids[0], track.parent_uuid, track.name, gpu != nullptr ? gpu->name : "");
    stream_tracks_.push_back(std::move(track));
  }
  std::map<int64_t, uint64_t> metric_groups;
  for (const MetricInfo& m : catalog_.metrics()) {
    auto [it, added] = metric_groups.emplace(m.gpu, 0);
    if (added) {
      it->second = NewUuid();
      trace_.Track(it->second, 0, "GPU " + std::to_string(m.gpu) + " metrics");
    }
    metric_uuids_.push_back(NewUuid());
    trace_.CounterTrack(metric_uuids_.back(), it->second, m.name, "");
  }
  return Status::Ok();
}

uint64_t PerfettoExporter::Lane(LaneTrack* t, int64_t start_ns, int64_t end_ns) {
  size_t lane = t->lanes.Place(start_ns, end_ns);
  while (t->lane_uuids.size() <= lane) {
    uint64_t uuid = NewUuid();
    if (t->lane_uuids.empty()) {
      trace_.Track(uuid, t->parent_uuid, t->name);
    } else {
      trace_.Track(uuid, t->parent_uuid, t->name + " (overlapping " + std::to_string(t->lane_uuids.size()) + ")",
                   "slices that overlap others on " + t->name + " without nesting");
    }
    t->lane_uuids.push_back(uuid);
  }
  return t->lane_uuids[lane];
}

PerfettoExporter::LaneTrack* PerfettoExporter::ProcessTrack(std::map<size_t, LaneTrack>* tracks,
                                                            size_t process,
                                                            const char* name) {
  auto [it, added] = tracks->try_emplace(process);
  if (added) {
    it->second.parent_uuid = process_uuids_[process];
    it->second.name = name;
  }
  return &it->second;
}

void PerfettoExporter::Slice(const Event& e,
                             uint64_t track,
                             std::string_view category,
                             std::string_view name,
                             const std::vector<Arg>& args,
                             PerfettoTraceWriter::Flows flows) {
  trace_.SliceBegin(e.start_ns, track, category, name, args, flows);
  ends_.Push(e.end_ns, track);
}

Status PerfettoExporter::OnEvent(const Event& e) {
  ends_.PopThrough(e.start_ns, [this](int64_t t, uint64_t track) { trace_.SliceEnd(t, track); });
  auto process = catalog_.FindProcess(e.global_pid);
  switch (e.kind) {
    case EventKind::kNvtxRange:
    case EventKind::kNvtxStartEnd:
    case EventKind::kNvtxMark: {
      auto thread = catalog_.FindThread(e.global_tid);
      if (!process || !thread)
        break;
      std::string domain = catalog_.DomainName(e.global_pid, e.domain_id);
      std::vector<Arg> args;
      if (!domain.empty())
        args.push_back(Arg{"domain", 0, domain, true});
      if (e.kind == EventKind::kNvtxMark) {
        trace_.Instant(e.start_ns, thread_tracks_[*thread].lane_uuids[0], "nvtx", e.name, args);
        return Status::Ok();
      }
      LaneTrack* track = &thread_tracks_[*thread];
      if (domain == "NCCL") {
        track = ProcessTrack(&nccl_tracks_, *process, "NCCL");
      } else if (e.kind == EventKind::kNvtxStartEnd) {
        track = ProcessTrack(&start_end_tracks_, *process, "NVTX start/end ranges");
      }
      Slice(e, Lane(track, e.start_ns, e.end_ns), domain == "NCCL" ? "nccl" : "nvtx", e.name, args);
      return Status::Ok();
    }
    case EventKind::kApi: {
      auto thread = catalog_.FindThread(e.global_tid);
      if (!thread)
        break;
      PerfettoTraceWriter::Flows flows;
      if (e.gpu_ops > 0)
        flows.out = FlowId(e.global_pid, e.correlation_id);
      std::vector<Arg> args = {PerfettoTraceWriter::Int("correlation_id", e.correlation_id)};
      if (e.return_value != 0)
        args.push_back(PerfettoTraceWriter::Int("return_value", e.return_value));
      Slice(e, Lane(&thread_tracks_[*thread], e.start_ns, e.end_ns),
            e.event_class == 1 ? "cuda_driver" : "cuda_runtime", ApiDisplayName(e.name), args, flows);
      return Status::Ok();
    }
    case EventKind::kKernel:
    case EventKind::kMemcpy:
    case EventKind::kMemset:
    case EventKind::kSync: {
      auto stream = catalog_.FindStream(e.global_pid, e.device_id, e.stream_id);
      if (!stream)
        break;
      PerfettoTraceWriter::Flows flows;
      if (e.has_launch && e.kind != EventKind::kSync) {
        // One activity ends its launch's flow; a graph launch's activities continue one chain.
        uint64_t id = FlowId(e.global_pid, e.correlation_id);
        (e.launch_gpu_ops == 1 ? flows.terminating : flows.out) = id;
      }
      std::vector<Arg> args = {PerfettoTraceWriter::Int("correlation_id", e.correlation_id)};
      std::string name, grid, block;
      const char* category = "kernel";
      if (e.kind == EventKind::kKernel) {
        name = e.name;
        grid = Triple(e.grid);
        block = Triple(e.block);
        args.push_back(PerfettoTraceWriter::Str("short_name", e.short_name));
        args.push_back(PerfettoTraceWriter::Str("grid", grid));
        args.push_back(PerfettoTraceWriter::Str("block", block));
        args.push_back(PerfettoTraceWriter::Int("registers_per_thread", e.registers_per_thread));
        args.push_back(PerfettoTraceWriter::Int("static_shared_bytes", e.static_shared_bytes));
        args.push_back(PerfettoTraceWriter::Int("dynamic_shared_bytes", e.dynamic_shared_bytes));
      } else if (e.kind == EventKind::kMemcpy) {
        name = MemcpyName(e.copy_kind, e.src_kind, e.dst_kind);
        category = "gpu_memcpy";
        args.push_back(PerfettoTraceWriter::Int("bytes", e.bytes));
      } else if (e.kind == EventKind::kMemset) {
        name = MemsetName(e.mem_kind);
        category = "gpu_memset";
        args.push_back(PerfettoTraceWriter::Int("bytes", e.bytes));
      } else {
        name = SyncName(e.sync_type);
        category = "cuda_sync";
      }
      Slice(e, Lane(&stream_tracks_[*stream], e.start_ns, e.end_ns), category, name, args, flows);
      return Status::Ok();
    }
    case EventKind::kMetric:
      trace_.Counter(e.start_ns, metric_uuids_[e.metric], e.value);
      return Status::Ok();
    case EventKind::kNcclOp: {
      if (!process)
        break;
      std::vector<Arg> args;
      if (e.bytes >= 0)
        args.push_back(PerfettoTraceWriter::Int("message_bytes", e.bytes));
      if (e.nccl_ranks >= 0)
        args.push_back(PerfettoTraceWriter::Int("ranks", e.nccl_ranks));
      if (e.nccl_seq >= 0)
        args.push_back(PerfettoTraceWriter::Int("seq", e.nccl_seq));
      if (!e.nccl_algo.empty())
        args.push_back(PerfettoTraceWriter::Str("algo", e.nccl_algo));
      if (!e.nccl_proto.empty())
        args.push_back(PerfettoTraceWriter::Str("proto", e.nccl_proto));
      args.push_back(PerfettoTraceWriter::Str("time", e.nccl_gpu_time ? "gpu" : "enqueue"));
      LaneTrack* track = ProcessTrack(&nccl_op_tracks_, *process, "NCCL operations");
      Slice(e, Lane(track, e.start_ns, e.end_ns), "nccl", e.name, args);
      return Status::Ok();
    }
  }
  ++unplaced_;
  return Status::Ok();
}

Status PerfettoExporter::Commit(std::vector<std::string>* outputs) {
  ends_.PopAll([this](int64_t t, uint64_t track) { trace_.SliceEnd(t, track); });
  trace_.Flush();
  Status st = file_->Commit();
  if (!st.ok())
    return st;
  outputs->push_back(file_->path());
  return Status::Ok();
}

std::vector<std::string> PerfettoExporter::warnings() const {
  if (unplaced_ == 0)
    return {};
  return {std::to_string(unplaced_) + " events had no process, thread or stream in the catalog and were left out"};
}

}  // namespace

Status CreatePerfettoExporter(const Catalog* catalog,
                              const std::string& output,
                              bool force,
                              std::unique_ptr<ViewerWriter>* out) {
  std::unique_ptr<OutputFile> file;
  Status st = OutputFile::Create(output, force, &file);
  if (!st.ok())
    return st;
  auto exporter = std::make_unique<PerfettoExporter>(catalog, std::move(file));
  if (!(st = exporter->Begin()).ok())
    return st;
  *out = std::move(exporter);
  return Status::Ok();
}

}  // namespace gt::viewers
