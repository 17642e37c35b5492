#include "tools/export/sampling_export.h"

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <unordered_map>
#include <vector>

#include "tools/export/module_table.h"
#include "tools/export/symbolizer.h"
#include "tools/nsys/nsys_schema.h"

namespace gt::exporter {
namespace {

constexpr char kInsertEvent[] =
    "INSERT INTO COMPOSITE_EVENTS (id, start, cpu, threadState, globalTid, cpuCycles) VALUES (?,?,?,?,?,?)";
constexpr char kInsertFrame[] =
    "INSERT INTO SAMPLING_CALLCHAINS (id, symbol, module, kernelMode, thumbCode, unresolved, specialEntry, "
    "originalIP, unwindMethod, stackDepth) VALUES (?,?,?,0,0,?,NULL,?,NULL,?)";  // unresolved, originalIP NULL: a Python frame

using Module = LoadedModuleInfo;

struct FrameRow {
  int64_t symbol = 0;
  int64_t module = 0;
  bool unresolved = false;
  bool eval_loop = false;  // CPython's eval loop (_PyEval_EvalFrame*): Python frames go before the first
  bool python = false;     // a Python frame (--python-sampling): unresolved and originalIP NULL
  uint64_t address = 0;
};

std::string Hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
  return buf;
}

std::string FileName(const std::string& p) {
  size_t slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

class SamplingExport : public ExportModule {
 public:
  const char* name() const override { return "sampling"; }

  Status BeginStream(ExportContext&, StreamContext&) override {
    modules_.Clear();
    frames_.clear();
    python_requested_ = python_state_seen_ = false;
    return Status::Ok();
  }

  Status EndStream(ExportContext& ctx, StreamContext& s) override {
    if (python_requested_ && !python_state_seen_)
      return PythonMeta(ctx, s, "requested; no Python interpreter was found in the process");
    return Status::Ok();
  }

  Status OnChunk(ExportContext& ctx, StreamContext& s, const schema::Chunk& chunk) override {
    Status st;
    // The module announcements are shared with the CUDA call stacks (callstack_export.cc reads
    // them too); each module reads them for itself.
    modules_.Read(chunk);
    if (chunk.has_cpu_sampling_config() && !(st = Config(ctx, s, chunk.cpu_sampling_config())).ok())
      return st;
    if (chunk.has_cpu_python_sampling()) {
      const schema::CpuPythonSampling& p = chunk.cpu_python_sampling();
      python_state_seen_ = true;
      std::string value = !p.python_version().empty() ? "on (Python " + p.python_version() + ")" : "off: " + p.off_reason();
      if (!(st = PythonMeta(ctx, s, value)).ok())
        return st;
    }
    uint64_t ts = chunk.base_ns();
    for (const schema::CpuSample& sample : chunk.cpu_samples()) {
      ts += static_cast<uint64_t>(sample.ts_delta_ns());
      if (!(st = Sample(ctx, s, sample, ts)).ok())
        return st;
    }
    for (const schema::CpuSamplingLoss& l : chunk.cpu_sampling_losses()) {
      lost_ += l.lost_samples();
      refused_ += l.threads_refused();
      truncated_ += l.truncated_samples();
      python_dropped_ += l.python_frames_dropped();
      dwarf_fallbacks_ += l.dwarf_fallbacks();
    }
    return Status::Ok();
  }

  Status Finish(ExportContext& ctx) override {
    for (const std::string& p : symbolizer_.problems())
      ctx.Warn("CPU samples: " + p + "; its frames keep module+offset");
    if (lost_ + refused_ + truncated_ > 0) {
      ctx.Warn("CPU samples: " + std::to_string(lost_) + " samples lost (a thread's kernel ring was full), " +
               std::to_string(refused_) + " threads could not be sampled, " + std::to_string(truncated_) +
               " samples unreadable");
    }
    if (dwarf_fallbacks_ > 0) {
      ctx.Warn("CPU samples: " + std::to_string(dwarf_fallbacks_) +
               " samples of --backtrace=dwarf kept the kernel's frame-pointer stack (no libunwind stack of their "
               "thread matched them)");
    }
    if (python_dropped_ > 0) {
      ctx.Warn("CPU samples: " + std::to_string(python_dropped_) +
               " samples kept native frames only (their thread's Python slot was full)");
    }
    return Status::Ok();
  }

 private:
  Status PythonMeta(ExportContext& ctx, StreamContext& s, const std::string& value) {
    Status st;
    Statement* ins = ctx.Insert("META_DATA_CAPTURE", "INSERT INTO META_DATA_CAPTURE (name, value) VALUES (?,?)", &st);
    if (ins == nullptr)
      return st;
    return ins->Text(1, "PROCESS_" + std::to_string(s.index) + ":PYTHON_SAMPLING").Text(2, value).Run();
  }

  Status Config(ExportContext& ctx, StreamContext& s, const schema::CpuSamplingConfig& c) {
    Status st;
    Statement* ins = ctx.Insert("META_DATA_CAPTURE", "INSERT INTO META_DATA_CAPTURE (name, value) VALUES (?,?)", &st);
    if (ins == nullptr)
      return st;
    python_requested_ = c.python_sampling();
    std::string value = c.sample() + " " + c.event() + " " + std::to_string(c.frequency_hz()) + " Hz";
    if (!c.backtrace().empty() && c.backtrace() != "fp")
      value += " backtrace=" + c.backtrace();
    return ins->Text(1, "PROCESS_" + std::to_string(s.index) + ":CPU_SAMPLING").Text(2, value).Run();
  }

  Status Sample(ExportContext& ctx, StreamContext& s, const schema::CpuSample& sample, uint64_t ts_ns) {
    Status st;
    if (!enum_written_) {
      if (!(st = nsys::WriteEnumTable(ctx.db().handle(), nsys::SamplingThreadStateEnum())).ok())
        return st;
      enum_written_ = true;
    }
    if (!(st = ctx.EnsureTable("SAMPLING_CALLCHAINS")).ok())
      return st;
    Statement* ev = ctx.Insert("COMPOSITE_EVENTS", kInsertEvent, &st);
    if (ev == nullptr)
      return st;
    int64_t id = next_id_++;
    int64_t start = s.ToSessionNs(ts_ns);
    ctx.NoteTime(start);
    ev->Int(1, id).Int(2, start).Int(3, sample.cpu()).Int(4, sample.thread_state()).Int(5, s.GlobalTid(sample.tid()));
    ev->Int(6, static_cast<int64_t>(sample.period_ns()));
    if (!(st = ev->Run()).ok())
      return st;
    Statement* fr = ctx.Insert("SAMPLING_CALLCHAINS", kInsertFrame, &st);
    if (fr == nullptr)
      return st;
    rows_.clear();
    for (int depth = 0; depth < sample.ips_size(); ++depth) {
      uint64_t address = sample.ips(depth);
      FrameRow r;
      // Depth 0 is the sampled instruction itself; the others are return addresses (looked up at -1).
      if (!(st = Frame(ctx, address, ts_ns, depth != 0, &r)).ok())
        return st;
      r.address = address;
      rows_.push_back(r);
    }
    if (sample.python_frames_size() > 0 && !(st = MergePython(ctx, s, sample)).ok())
      return st;
    for (size_t depth = 0; depth < rows_.size(); ++depth) {
      const FrameRow& r = rows_[depth];
      fr->Int(1, id).Int(2, r.symbol).Int(3, r.module);
      fr->OptInt(4, r.python ? std::nullopt : std::optional<int64_t>(r.unresolved ? 1 : 0));
      fr->OptInt(5, r.python ? std::nullopt : std::optional<int64_t>(static_cast<int64_t>(r.address)));
      fr->Int(6, static_cast<int64_t>(depth));
      if (!(st = fr->Run()).ok())
        return st;
    }
    return Status::Ok();
  }

  // As CUDA_CALLCHAINS (callstack_export.cc): the native frames above the interpreter's first
  // eval-loop frame, then the Python frames innermost first, then the eval loop and everything below
  // it; without an eval-loop frame (a stripped interpreter, or the frame-pointer walk stopped
  // before it) the Python frames go below the native ones.
  Status MergePython(ExportContext& ctx, StreamContext& s, const schema::CpuSample& sample) {
    size_t at = rows_.size();
    for (size_t i = 0; i < rows_.size(); ++i) {
      if (rows_[i].eval_loop) {
        at = i;
        break;
      }
    }
    std::vector<FrameRow> python;
    Status st;
    for (const schema::PythonFrame& p : sample.python_frames()) {
      std::string file(s.Text(p.file_id())), function(s.Text(p.function_id()));
      std::string symbol = (function.empty() ? "<unknown>" : function) + " at " + file;
      if (p.line() > 0)
        symbol += ":" + std::to_string(p.line());
      FrameRow r;
      if (!(st = ctx.StringId(symbol, &r.symbol)).ok())
        return st;
      if (!(st = ctx.StringId(file.empty() ? "[python]" : file, &r.module)).ok())
        return st;
      r.python = true;
      python.push_back(r);
    }
    rows_.insert(rows_.begin() + static_cast<std::ptrdiff_t>(at), python.begin(), python.end());
    return Status::Ok();
  }

  Status Frame(ExportContext& ctx, uint64_t address, uint64_t ts_ns, bool return_address, FrameRow* row) {
    size_t index = modules_.At(address, ts_ns);
    auto key = std::make_tuple(address, index, return_address);
    auto it = frames_.find(key);
    if (it != frames_.end()) {
      *row = it->second;
      return Status::Ok();
    }
    const Module* m = modules_.Get(index);
    std::string symbol, module = m != nullptr ? m->path : "[unknown]";
    bool unresolved = true;
    bool eval_loop = false;
    if (m != nullptr) {
      SymbolizedFrame f = symbolizer_.Lookup(m->path, m->build_id, address - m->load_bias, return_address);
      if (!f.function.empty()) {
        eval_loop = f.function.rfind("_PyEval_EvalFrame", 0) == 0;
        symbol = f.function;
        if (!f.file.empty())
          symbol += " at " + f.file + ":" + std::to_string(f.line);
        unresolved = false;
      } else {
        symbol = FileName(m->path) + "+" + Hex(address - m->load_bias);
      }
    } else {
      symbol = Hex(address);
    }
    Status st;
    FrameRow r;
    if (!(st = ctx.StringId(symbol, &r.symbol)).ok())
      return st;
    if (!(st = ctx.StringId(module, &r.module)).ok())
      return st;
    r.unresolved = unresolved;
    r.eval_loop = eval_loop;
    frames_.emplace(key, r);
    *row = r;
    return Status::Ok();
  }

  // Per stream.
  ModuleTable modules_;  // this stream's module announcements
  std::map<std::tuple<uint64_t, size_t, bool>, FrameRow> frames_;
  std::vector<FrameRow> rows_;  // scratch: one sample's rows
  bool python_requested_ = false, python_state_seen_ = false;
  // Whole database.
  Symbolizer symbolizer_;
  int64_t next_id_ = 0;
  bool enum_written_ = false;
  uint64_t lost_ = 0, refused_ = 0, truncated_ = 0, python_dropped_ = 0, dwarf_fallbacks_ = 0;
};

}  // namespace

std::unique_ptr<ExportModule> MakeSamplingExport() {
  return std::make_unique<SamplingExport>();
}

}  // namespace gt::exporter
