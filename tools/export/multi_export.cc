#include "tools/export/multi_export.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include "tools/export/align_session.h"
#include "tools/export/anchor_scan.h"
#include "tools/export/db_merge.h"
#include "tools/export/exporter.h"
#include "tools/stream/stream_reader.h"

namespace gt::exporter {
namespace {

double Since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Runs fn(i) for i in [0, n) on `jobs` threads; the error of the lowest failing index wins, and no
// new task starts after a failure.
template <typename Fn>
Status ParallelFor(size_t n, unsigned jobs, Fn fn) {
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::vector<Status> errors(n, Status::Ok());
  auto worker = [&]() {
    while (!failed.load(std::memory_order_relaxed)) {
      size_t i = next.fetch_add(1);
      if (i >= n)
        return;
      Status st = fn(i);
      if (!st.ok()) {
        errors[i] = st;
        failed.store(true);
      }
    }
  };
  std::vector<std::thread> threads;
  unsigned count = static_cast<unsigned>(std::min<size_t>(jobs, n));
  for (unsigned t = 1; t < count; ++t)
    threads.emplace_back(worker);
  worker();
  for (std::thread& t : threads)
    t.join();
  for (const Status& st : errors) {
    if (!st.ok())
      return st;
  }
  return Status::Ok();
}

std::string Stem(const std::string& path) {
  std::string name = std::filesystem::path(path).filename().string();
  for (const char* ext : {".gtrace", ".sqlite"}) {
    size_t n = std::char_traits<char>::length(ext);
    if (name.size() > n && name.compare(name.size() - n, n, ext) == 0)
      name.resize(name.size() - n);
  }
  return name;
}

}  // namespace

std::vector<std::string> PerRankOutputs(const std::vector<std::string>& inputs, const std::string& dir) {
  std::vector<std::string> out;
  std::map<std::string, int> used;
  for (const std::string& in : inputs) {
    std::string stem = Stem(in);
    int n = used[stem]++;
    if (n > 0)
      stem += "-" + std::to_string(n);
    out.push_back(dir + "/" + stem + ".sqlite");
  }
  return out;
}

Status ExportMany(const MultiExportOptions& o, MultiExportResult* result) {
  if (o.inputs.empty())
    return Status::Error("no input streams given");
  if (o.output.empty())
    return Status::Error(o.per_rank ? "no output directory given (-o)" : "no output file given (-o)");
  if (o.align_domain != "host" && o.align_domain != "rank") {
    return Status::Error("--align-domain: '" + o.align_domain + "' is not host or rank");
  }
  for (size_t i = 0; i < o.inputs.size(); ++i) {
    for (size_t j = i + 1; j < o.inputs.size(); ++j) {
      if (o.inputs[i] == o.inputs[j])
        return Status::Error(o.inputs[i] + " is given twice");
    }
  }
  unsigned jobs = o.jobs != 0 ? o.jobs : std::max(1u, std::thread::hardware_concurrency());
  result->jobs = jobs;

  // 1. Headers (a bad input fails before anything is written).
  std::vector<schema::StreamHeader> headers(o.inputs.size());
  Status st = ParallelFor(o.inputs.size(), jobs, [&](size_t i) {
    stream::StreamReader r;
    Status s = r.Open(o.inputs[i]);
    if (s.ok())
      headers[i] = r.header();
    return s;
  });
  if (!st.ok() && !o.strict) {
    // A stream whose header is damaged, empty or cut cannot be placed: leave it out and convert the
    // rest (issue 28), saying which and why; --strict fails instead.
    std::vector<std::string> skipped;
    MultiExportOptions kept = o;
    kept.inputs.clear();
    for (size_t i = 0; i < o.inputs.size(); ++i) {
      stream::StreamReader r;
      Status s = r.Open(o.inputs[i]);
      if (s.ok())
        kept.inputs.push_back(o.inputs[i]);
      else
        skipped.push_back(s.message() + ": this stream is left out (--strict: fail instead)");
    }
    if (kept.inputs.empty() || kept.inputs.size() == o.inputs.size())
      return st;
    Status k = ExportMany(kept, result);
    result->skipped_streams += skipped.size();
    result->warnings.insert(result->warnings.begin(), skipped.begin(), skipped.end());
    return k;
  }
  if (!st.ok())
    return st;
  std::vector<const schema::StreamHeader*> ptrs;
  for (const schema::StreamHeader& h : headers)
    ptrs.push_back(&h);
  SessionPlan plan = PlanSession(ptrs);
  for (size_t i = 0; i < headers.size(); ++i)
    plan.traced_processes.emplace_back(plan.streams[i].host_index, headers[i].pid());
  if (o.align_domain == "rank") {
    std::vector<std::string> hosts, boots;
    std::vector<int64_t> gpids;
    for (size_t i = 0; i < headers.size(); ++i) {
      hosts.push_back(headers[i].host_name());
      boots.push_back(headers[i].boot_id());
      gpids.push_back(PackGlobalTid(plan.streams[i].host_index, headers[i].pid(), 0));
    }
    UsePerRankDomains(&plan, hosts, boots, gpids);
  }

  // Outputs, checked before any work.
  std::vector<std::string> outputs;
  std::string parts_dir;
  if (o.per_rank) {
    if (::mkdir(o.output.c_str(), 0777) != 0 && errno != EEXIST) {
      return Status::Error("cannot create the output directory " + o.output);
    }
    outputs = PerRankOutputs(o.inputs, o.output);
    for (const std::string& out : outputs) {
      struct stat sb;
      if (!o.force && ::stat(out.c_str(), &sb) == 0)
        return Status::Error(out + " exists; use --force to overwrite it");
    }
  } else {
    struct stat sb;
    if (!o.force && ::stat(o.output.c_str(), &sb) == 0) {
      return Status::Error(o.output + " exists; use --force to overwrite it");
    }
    parts_dir = o.output + ".parts-" + std::to_string(::getpid());
    std::error_code ec;
    std::filesystem::remove_all(parts_dir, ec);
    if (!std::filesystem::create_directories(parts_dir, ec)) {
      return Status::Error("cannot create " + parts_dir + ": " + ec.message());
    }
    for (size_t i = 0; i < o.inputs.size(); ++i)
      outputs.push_back(parts_dir + "/part-" + std::to_string(i) + ".sqlite");
  }
  auto cleanup = [&]() {
    std::error_code ec;
    if (!parts_dir.empty())
      std::filesystem::remove_all(parts_dir, ec);
  };

  // 2. Alignment pass.
  auto t0 = std::chrono::steady_clock::now();
  if (o.align && plan.domains.size() > 1) {
    std::vector<ProcessAnchors> procs(o.inputs.size());
    std::vector<std::string> thinned(o.inputs.size());  // per stream: a note when the cap thinned it
    AnchorScanOptions scan_options;
    scan_options.max_ops = o.align_max_ops;
    st = ParallelFor(o.inputs.size(), jobs, [&](size_t i) {
      StreamAnchors a;
      Status s = ScanAnchors(o.inputs[i], &a, scan_options);
      if (!s.ok())
        return s;
      if (a.seq_shift != 0) {
        thinned[i] = o.inputs[i] + ": " + std::to_string(a.operations) +
                     " NCCL operations, more than the alignment pass holds (" + std::to_string(o.align_max_ops) +
                     ", GTRACE_ALIGN_MAX_OPS): aligned by the collectives whose sequence number is a multiple of " +
                     std::to_string(uint64_t{1} << a.seq_shift) + " (" + std::to_string(a.ends.size()) + " ends)";
      }
      int64_t off = plan.streams[i].offset_ns;
      ProcessAnchors& p = procs[i];
      p.ends.reserve(a.ends.size());
      for (CollectiveEnd& e : a.ends)
        p.ends.push_back({e.comm_hash, std::move(e.func), e.seq, e.gpu_end_ns + off});
      p.start_ns = static_cast<int64_t>(headers[i].start_clock().stream_clock_ns()) + off;
      return Status::Ok();
    });
    if (!st.ok()) {
      cleanup();
      return st;
    }
    AlignSession(procs, &plan);
    for (const std::string& note : thinned) {
      if (!note.empty())
        result->warnings.push_back(note);
    }
  }
  result->scan_seconds = Since(t0);

  // 3. Conversion, one stream per task.
  t0 = std::chrono::steady_clock::now();
  SharedStrings strings;
  std::vector<ExportResult> parts(o.inputs.size());
  std::mutex progress_mu;
  std::atomic<size_t> done{0};
  st = ParallelFor(o.inputs.size(), jobs, [&](size_t i) {
    SessionPlan sub;
    sub.session_utc_ns = plan.session_utc_ns;
    sub.system_clock_ns = plan.system_clock_ns;
    sub.session_id = plan.session_id;
    sub.domain_kind = plan.domain_kind;
    sub.aligned = plan.aligned;
    sub.domains = plan.domains;
    sub.streams = {plan.streams[i]};
    sub.traced_processes = plan.traced_processes;
    ExportOptions eo;
    eo.output = outputs[i];
    eo.inputs = {o.inputs[i]};
    eo.force = true;
    eo.strict = o.strict;
    eo.plan = &sub;
    eo.shared_strings = o.per_rank ? nullptr : &strings;
    Status s = ExportSqlite(eo, &parts[i]);
    size_t n = done.fetch_add(1) + 1;
    if (o.progress) {
      std::lock_guard<std::mutex> lock(progress_mu);
      o.progress("converted " + std::to_string(n) + "/" + std::to_string(o.inputs.size()));
    }
    return s;
  });
  if (!st.ok()) {
    cleanup();
    return st;
  }
  result->convert_seconds = Since(t0);
  for (const ExportResult& r : parts) {
    ++result->streams;
    result->chunks += r.chunks;
    result->dropped_records += r.dropped_records;
    result->damaged_spans += r.damaged_spans;
    result->warnings.insert(result->warnings.end(), r.warnings.begin(), r.warnings.end());
  }

  // 4. Merge the parts.
  if (!o.per_rank) {
    t0 = std::chrono::steady_clock::now();
    MergeOptions mo;
    mo.inputs = outputs;
    mo.output = o.output;
    mo.force = true;  // checked above
    mo.input_names = o.inputs;
    MergeResult mr;
    st = MergeDatabases(mo, &mr);
    cleanup();
    if (!st.ok())
      return st;
    result->warnings.insert(result->warnings.end(), mr.warnings.begin(), mr.warnings.end());
    result->merge_seconds = Since(t0);
    outputs = {o.output};
  }
  result->outputs = outputs;
  result->plan = std::move(plan);
  return Status::Ok();
}

}  // namespace gt::exporter
