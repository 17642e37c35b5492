#include "tools/export/exporter.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <random>

#include "tools/export/callstack_export.h"
#include "tools/export/osrt_export.h"
#include "tools/export/nccl_export.h"
#include "tools/export/cuda_export.h"
#include "tools/export/gpu_metrics_export.h"
#include "tools/export/gpu_sharing.h"
#include "tools/export/lazy_tables.h"
#include "tools/export/nvtx_export.h"
#include "tools/export/rank_tables.h"
#include "tools/export/sampling_export.h"
#include "tools/export/system_tables.h"
#include "tools/nsys/nsys_schema.h"
#include "tools/stream/stream_reader.h"

namespace gt::exporter {
namespace {

// Every module of the conversion, in the order they see each chunk.
std::vector<std::unique_ptr<ExportModule>> MakeModules() {
  std::vector<std::unique_ptr<ExportModule>> modules;
  modules.push_back(MakeNvtxExport());
  // CUDA modules:
  modules.push_back(MakeCudaExport());

  // NCCL modules:
  modules.push_back(MakeNcclExport());

  // GPU metrics modules (after CUDA: they read TARGET_INFO_GPU and the kernels in Finish):
  modules.push_back(MakeGpuMetricsExport());

  // Call stack modules:
  OsrtChains* osrt_chains = nullptr;
  modules.push_back(MakeCallStackExport(&osrt_chains));

  // OS runtime calls (-t osrt); after the call stacks, whose OSRT_CALLCHAINS it uses:
  modules.push_back(MakeOsrtExport(osrt_chains));

  // CPU samples (--sample):
  modules.push_back(MakeSamplingExport());

  return modules;
}

bool FileExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

const char* DropSourceName(schema::DropSource s) {
  switch (s) {
    case schema::DROP_SOURCE_THREAD_BUFFER:
      return "thread buffer full";
    case schema::DROP_SOURCE_NO_BUFFER:
      return "no free thread buffer (raise GTRACE_BUFFER_MB)";
    case schema::DROP_SOURCE_CUPTI:
      return "dropped by CUPTI";
    case schema::DROP_SOURCE_CUPTI_BUFFER:
      return "CUPTI buffer pool exhausted";
    case schema::DROP_SOURCE_NCCL_POOL:
      return "NCCL event pool exhausted";
    case schema::DROP_SOURCE_WRITER:
      return "stream file could not be written";
    case schema::DROP_SOURCE_PROCESS_END:
      return "not written: the process ended before the writer got to them";
    default:
      return "unknown cause";
  }
}

Status Diagnostic(ExportContext& ctx, StreamContext& s, int64_t ts, int64_t severity, const std::string& text) {
  Status st;
  Statement* ins = ctx.Insert("DIAGNOSTIC_EVENT",
                              "INSERT INTO DIAGNOSTIC_EVENT (timestamp, timestampType, source, severity, text, "
                              "globalPid) VALUES (?,?,?,?,?,?)",
                              &st);
  if (ins == nullptr) return st;
  // timestampType 1 = target timestamp, source 1 = injection (ENUM_DIAGNOSTIC_*).
  return ins->Int(1, ts).Int(2, 1).Int(3, 1).Int(4, severity).Text(5, text).Int(6, s.GlobalPid()).Run();
}

// gtrace's own work (ProfilerOverhead) -> nsys's PROFILER_OVERHEAD(start, end, globalTid, nameId,
// overheadType): nsys names its own work there ("CUPTI Buffer flush", "TLS allocation", "CUDA
// profiling data flush on process exit"...) with the thread that did it; its non-CUPTI work has
// overheadType 0 (OVERHEAD_UNDEFINED), as gtrace's writes and drain passes do here. globalTid is
// gtrace's drain thread, which (unlike nsys's "[NSys]" threads) gets no ThreadNames row: it recorded
// nothing of the application's. The table exists only when there are rows (lazy tables).
Status ProfilerOverheadRow(ExportContext& ctx, StreamContext& s, const schema::ProfilerOverhead& o) {
  const char* name = o.kind() == schema::PROFILER_OVERHEAD_KIND_STREAM_WRITE ? "gtrace stream write"
                     : o.kind() == schema::PROFILER_OVERHEAD_KIND_DRAIN      ? "gtrace buffer drain"
                                                                             : "gtrace";
  Status st = ctx.EnsureTable("PROFILER_OVERHEAD");
  if (!st.ok()) return st;
  Statement* ins = ctx.Insert("PROFILER_OVERHEAD",
                              "INSERT INTO PROFILER_OVERHEAD (start, \"end\", globalTid, nameId, overheadType) "
                              "VALUES (?,?,?,?,?)",
                              &st);
  if (ins == nullptr) return st;
  int64_t name_id = 0;
  if (!(st = ctx.StringId(name, &name_id)).ok()) return st;
  int64_t start = s.ToSessionNs(o.start_ns());
  int64_t end = std::max(start, s.ToSessionNs(o.end_ns()));
  ctx.NoteTime(end);
  const int64_t global_tid = PackGlobalTid(s.hw_id, s.pid, o.tid());  // not GlobalTid: no ThreadNames row
  return ins->Int(1, start).Int(2, end).Int(3, global_tid).Int(4, name_id).Int(5, 0).Run();
}

// Stream-level content every module relies on: strings, threads, drops, diagnostics, stats.
Status CoreChunk(ExportContext& ctx, StreamContext& s, const schema::Chunk& chunk) {
  for (const schema::InternedString& str : chunk.strings()) s.strings[str.id()] = str.text();
  if (chunk.has_thread()) {
    ThreadState& t = s.threads[chunk.thread().tid()];
    t.os_name = chunk.thread().name();
    t.nice = chunk.thread().nice();
    t.has_os_info = true;
  }
  for (const schema::DropReport& d : chunk.drops()) {
    s.dropped_records += d.dropped_records();
    std::string text = "gtrace dropped " + std::to_string(d.dropped_records()) + " records (" +
                       DropSourceName(d.source()) + ")";
    if (d.tid() != 0) text += " on thread " + std::to_string(d.tid());
    Status st = Diagnostic(ctx, s, s.ToSessionNs(d.ts_ns()), 2, text);
    if (!st.ok()) return st;
  }
  for (const schema::Diagnostic& d : chunk.diagnostics()) {
    int64_t severity = d.severity() == schema::DIAGNOSTIC_SEVERITY_ERROR     ? 3
                       : d.severity() == schema::DIAGNOSTIC_SEVERITY_WARNING ? 2
                                                                             : 1;
    Status st = Diagnostic(ctx, s, s.ToSessionNs(d.ts_ns()), severity, d.source() + ": " + d.text());
    if (!st.ok()) return st;
  }
  for (const schema::ProfilerOverhead& o : chunk.profiler_overheads()) {
    Status st = ProfilerOverheadRow(ctx, s, o);
    if (!st.ok()) return st;
  }
  if (chunk.has_clock()) s.clock_pairs.Add(chunk.clock().stream_clock_ns(), chunk.clock().realtime_ns());
  if (chunk.has_stats()) s.stats = chunk.stats();
  s.end_of_stream = chunk.end_of_stream();  // a process that went on after an end mark closes again later
  uint64_t t = chunk.base_ns();
  if (chunk.has_clock()) t = std::max<uint64_t>(t, chunk.clock().stream_clock_ns());
  if (chunk.has_stats()) t = std::max<uint64_t>(t, chunk.stats().end_ns());
  s.last_chunk_ns = std::max(s.last_chunk_ns, t);
  return Status::Ok();
}

std::string TempPathFor(const std::string& output) {
  return output + ".tmp-" + std::to_string(::getpid());
}

}  // namespace

TimeBase ComputeTimeBase(const std::vector<const schema::StreamHeader*>& headers) {
  TimeBase tb;
  tb.offsets_ns.resize(headers.size());
  tb.host_index.resize(headers.size());
  if (headers.empty()) return tb;
  // Time zero: the earliest stream start, in UTC.
  int64_t zero = INT64_MAX;
  for (const schema::StreamHeader* h : headers) zero = std::min<int64_t>(zero, h->start_clock().realtime_ns());
  tb.session_utc_ns = zero;
  // Streams of one host and boot share CLOCK_MONOTONIC: map them all through the clock pair of
  // that host's earliest stream, so their relative timing is exact (no per-process pair jitter).
  std::vector<std::pair<std::string, std::string>> hosts;
  std::map<size_t, size_t> reference;  // host index -> header index of its earliest stream
  for (size_t i = 0; i < headers.size(); ++i) {
    std::pair<std::string, std::string> key{headers[i]->host_name(), headers[i]->boot_id()};
    auto it = std::find(hosts.begin(), hosts.end(), key);
    size_t host = static_cast<size_t>(it - hosts.begin());
    if (it == hosts.end()) hosts.push_back(key);
    tb.host_index[i] = static_cast<uint32_t>(host);
    auto ref = reference.find(host);
    if (ref == reference.end() ||
        headers[i]->start_clock().realtime_ns() < headers[ref->second]->start_clock().realtime_ns()) {
      reference[host] = i;
    }
  }
  for (size_t i = 0; i < headers.size(); ++i) {
    const schema::ClockSnapshot& r = headers[reference[tb.host_index[i]]]->start_clock();
    tb.offsets_ns[i] = static_cast<int64_t>(r.realtime_ns()) - zero - static_cast<int64_t>(r.stream_clock_ns());
  }
  const schema::ClockSnapshot& r0 = headers[reference[0]]->start_clock();
  tb.system_clock_ns = static_cast<int64_t>(r0.stream_clock_ns()) - (static_cast<int64_t>(r0.realtime_ns()) - zero);
  return tb;
}

std::string NewSessionId() {
  std::random_device rd;
  uint64_t v = (static_cast<uint64_t>(rd()) << 32) ^ rd() ^
               static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count()) ^
               (static_cast<uint64_t>(::getpid()) << 16);
  char buf[24];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

SessionPlan PlanSession(const std::vector<const schema::StreamHeader*>& headers) {
  TimeBase tb = ComputeTimeBase(headers);
  SessionPlan plan;
  plan.session_utc_ns = tb.session_utc_ns;
  plan.system_clock_ns = tb.system_clock_ns;
  plan.session_id = NewSessionId();
  for (size_t i = 0; i < headers.size(); ++i) {
    StreamPlacement p;
    p.index = static_cast<uint32_t>(i);
    p.host_index = tb.host_index[i];
    p.clock_domain = tb.host_index[i];
    p.offset_ns = tb.offsets_ns[i];
    plan.streams.push_back(p);
    if (p.host_index >= plan.domains.size()) {
      plan.domains.resize(p.host_index + 1);
      ClockDomain& d = plan.domains[p.host_index];
      d.host_name = headers[i]->host_name();
      d.boot_id = headers[i]->boot_id();
      d.host_index = p.host_index;
      d.alignment.aligned_to = p.host_index;
    }
  }
  // One clock domain: nothing to align; its clock is the reference and is left alone.
  if (plan.domains.size() == 1) {
    plan.aligned = true;
    plan.domains[0].alignment.method = "reference";
  }
  return plan;
}

Status ExportSqlite(const ExportOptions& options, ExportResult* result) {
  auto started = std::chrono::steady_clock::now();
  if (options.inputs.empty()) return Status::Error("no input streams given");
  if (options.output.empty()) return Status::Error("no output file given (-o)");
  if (FileExists(options.output) && !options.force) {
    return Status::Error(options.output + " exists; use --force to overwrite it");
  }
  for (size_t i = 0; i < options.inputs.size(); ++i) {
    for (size_t j = i + 1; j < options.inputs.size(); ++j) {
      if (options.inputs[i] == options.inputs[j]) return Status::Error(options.inputs[i] + " is given twice");
    }
  }
  // Open every input first: a bad input fails before anything is written.
  std::vector<std::unique_ptr<stream::StreamReader>> readers;
  std::vector<const schema::StreamHeader*> headers;
  for (const std::string& path : options.inputs) {
    auto reader = std::make_unique<stream::StreamReader>();
    Status st = reader->Open(path);
    if (!st.ok()) return st;
    headers.push_back(&reader->header());
    readers.push_back(std::move(reader));
  }
  SessionPlan own_plan;
  if (options.plan == nullptr) {
    own_plan = PlanSession(headers);
  } else if (options.plan->streams.size() != readers.size()) {
    return Status::Error("internal: the session plan has " + std::to_string(options.plan->streams.size()) +
                         " placements for " + std::to_string(readers.size()) + " inputs");
  }
  const SessionPlan& plan = options.plan != nullptr ? *options.plan : own_plan;

  ExportContext ctx(options);
  ctx.session_utc_ns = plan.session_utc_ns;
  ctx.system_clock_ns = plan.system_clock_ns;
  std::string temp = TempPathFor(options.output);
  ::unlink(temp.c_str());
  // The spill database (schema gt_spill): rows a module must hold until a stream's end go there,
  // not into memory (export_context.h). A file beside the output's, removed when the export ends:
  // the connection's temp_store is MEMORY, so SQLite's own temporary tables would stay resident.
  const std::string spill = temp + ".spill";
  ::unlink(spill.c_str());
  Status st = ctx.db().Open(temp);
  auto fail = [&](Status s) {
    ctx.db().Close();
    ::unlink(temp.c_str());
    ::unlink(spill.c_str());
    return s;
  };
  if (!st.ok()) return fail(st);
  if (!(st = ctx.AttachSpill(spill)).ok()) return fail(st);
  if (!(st = ctx.db().Exec("BEGIN")).ok()) return fail(st);
  if (!(st = nsys::WriteEnumTables(ctx.db().handle())).ok()) return fail(st);
  for (const char* table : {"StringIds", "ThreadNames", "PROCESSES", "ANALYSIS_DETAILS", "META_DATA_CAPTURE",
                            "META_DATA_EXPORT", "TARGET_INFO_SYSTEM_ENV", "TARGET_INFO_SESSION_START_TIME"}) {
    if (!(st = ctx.EnsureTable(table)).ok()) return fail(st);
  }
  std::vector<std::unique_ptr<ExportModule>> modules = MakeModules();
  for (auto& m : modules) {
    if (!(st = m->Begin(ctx)).ok()) return fail(st);
  }
  schema::Chunk chunk;
  for (size_t i = 0; i < readers.size(); ++i) {
    auto s = std::make_unique<StreamContext>();
    const StreamPlacement& place = plan.streams[i];
    s->index = place.index;
    s->path = readers[i]->path();
    s->header = readers[i]->header();
    s->pid = s->header.pid();
    s->hw_id = place.host_index;
    s->offset_ns = place.offset_ns;
    s->correction = place.correction;
    s->clock_pairs.Add(s->header.start_clock().stream_clock_ns(), s->header.start_clock().realtime_ns());
    for (const auto& other : ctx.streams()) {
      if (other->pid == s->pid && other->hw_id == s->hw_id) {
        ctx.Warn(s->path + " and " + other->path + " are both pid " + std::to_string(s->pid) + " on host " +
                 s->header.host_name() + " (streams of different runs?); their threads share ids");
      }
    }
    StreamContext& sref = *s;
    ctx.streams().push_back(std::move(s));
    for (auto& m : modules) {
      if (!(st = m->BeginStream(ctx, sref)).ok()) return fail(st);
    }
    while (true) {
      bool has = false;
      if (!(st = readers[i]->Next(&chunk, &has)).ok()) return fail(st);
      if (!has) break;
      ++result->chunks;
      if (!(st = CoreChunk(ctx, sref, chunk)).ok()) return fail(st);
      for (auto& m : modules) {
        if (!(st = m->OnChunk(ctx, sref, chunk)).ok()) {
          return fail(Status::Error(sref.path + ": offset " + std::to_string(readers[i]->chunk_offset()) + ": " +
                                    st.message()));
        }
      }
    }
    for (auto& m : modules) {
      if (!(st = m->EndStream(ctx, sref)).ok()) return fail(st);
    }
    // Damage: the reader kept every intact chunk around it; say what was skipped, where.
    const std::vector<std::string> damage = readers[i]->DamageWarnings();
    if (!damage.empty() && options.strict) {
      return fail(Status::Error(damage.front() + (damage.size() > 1 ? " (and " + std::to_string(damage.size() - 1) +
                                                                           " more damaged spans)"
                                                                     : std::string()) +
                                "; --strict: the export fails"));
    }
    for (const std::string& d : damage) {
      ctx.Warn(d);
      if (!(st = Diagnostic(ctx, sref, sref.ToSessionNs(sref.last_chunk_ns), 3, d)).ok()) return fail(st);
    }
    result->damaged_spans += damage.size();
    std::string cut = readers[i]->TruncationWarning();
    if (!cut.empty()) {
      // At the time of the last complete chunk: what came after it (if anything) is what was lost.
      ctx.Warn(cut);
      if (!(st = Diagnostic(ctx, sref, sref.ToSessionNs(sref.last_chunk_ns), 2, cut)).ok()) return fail(st);
    } else if (sref.stats.end_reason() != schema::END_REASON_EXIT &&
               sref.stats.end_reason() != schema::END_REASON_UNSPECIFIED) {
      // Ended without exit() (issue 14): say how, so "worker exited early" and "worker crashed"
      // read differently from a normal end. Normal exits add no row.
      std::string text = "process " + std::to_string(sref.pid) + " ended by " + sref.stats.close_reason() +
                         "; its stream is complete";
      int64_t severity = sref.stats.end_reason() == schema::END_REASON_UNDERSCORE_EXIT ||
                                 sref.stats.end_reason() == schema::END_REASON_EXEC
                             ? 1
                             : 2;
      if (!(st = Diagnostic(ctx, sref, sref.ToSessionNs(sref.stats.end_ns()), severity, text)).ok()) return fail(st);
    }
    if (sref.dropped_records > 0) {
      ctx.Warn(sref.path + ": gtrace dropped " + std::to_string(sref.dropped_records) +
               " records while recording (see DIAGNOSTIC_EVENT)");
    }
    if (sref.clamped_timestamps > 0) {
      ctx.Warn(sref.path + ": " + std::to_string(sref.clamped_timestamps) +
               " timestamps fell before the session start and were set to 0");
    }
    result->dropped_records += sref.dropped_records;
    ++result->streams;
  }
  for (auto& m : modules) {
    if (!(st = m->Finish(ctx)).ok()) return fail(st);
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (!(st = WriteSystemTables(ctx, seconds)).ok()) return fail(st);
  if (!(st = WriteRankTables(ctx, plan)).ok()) return fail(st);
  // Modules create their tables when they see the stream's kind of data (a traced CUDA process, a
  // communicator), not only with rows; drop what stayed empty, as nsys's lazy export never has it.
  if (!(st = MakeContextsUniquePerGpu(ctx.db())).ok()) return fail(st);
  if (!(st = DropEmptyTables(ctx.db())).ok()) return fail(st);
  if (!(st = ctx.db().Exec("COMMIT")).ok()) return fail(st);
  if (!(st = ctx.db().Close()).ok()) return fail(st);
  ::unlink(spill.c_str());
  if (::rename(temp.c_str(), options.output.c_str()) != 0) {
    int err = errno;
    ::unlink(temp.c_str());
    return Status::Error("cannot move the finished database to " + options.output + ": " + strerror(err));
  }
  result->output = options.output;
  result->warnings = ctx.warnings();
  return Status::Ok();
}

}  // namespace gt::exporter
