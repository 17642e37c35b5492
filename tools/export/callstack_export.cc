#include "tools/export/callstack_export.h"

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "tools/export/module_table.h"
#include "tools/export/symbolizer.h"

namespace gt::exporter {
namespace {

constexpr char kInsertChain[] =
    "INSERT INTO CUDA_CALLCHAINS (id, symbol, module, unresolved, originalIP, stackDepth) VALUES (?,?,?,?,?,?)";
constexpr char kInsertOsrtChain[] =
    "INSERT INTO OSRT_CALLCHAINS (id, symbol, module, kernelMode, thumbCode, unresolved, specialEntry, originalIP, "
    "unwindMethod, stackDepth) VALUES (?,?,?,0,0,?,NULL,?,NULL,?)";
constexpr char kInsertRuntime[] =
    "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId, nameId, returnValue, "
    "callchainId) VALUES (?,?,?,?,?,?,?,?)";

using Module = LoadedModuleInfo;

struct Backtrace {
  uint32_t tid = 0;
  uint64_t start_ns = 0;  // stream clock
  uint64_t duration_ns = 0;
  bool driver = false;
  uint32_t cbid = 0;
  uint32_t correlation_id = 0;
  uint64_t stack_id = 0;
  std::string name;
  uint32_t return_value = 0;
};

struct FrameRow {
  int64_t symbol = 0;
  int64_t module = 0;
  bool unresolved = false;
  int64_t original_ip = 0;
  bool python = false;     // a Python frame: originalIP NULL
  bool eval_loop = false;  // a native frame of CPython's eval loop (Python frames go before the first)
  bool operator<(const FrameRow& o) const {
    return std::tie(symbol, module, unresolved, original_ip, python) <
           std::tie(o.symbol, o.module, o.unresolved, o.original_ip, o.python);
  }
};

struct PythonFrameText {
  std::string file, function;
  uint32_t line = 0;
};

// CPython's bytecode loop: _PyEval_EvalFrameDefault (3.9-3.13), also _PyEval_EvalFrame (inline
// wrapper in some builds). The first such frame from the top is where the Python frames ran.
bool IsEvalLoop(const std::string& function) {
  return function.rfind("_PyEval_EvalFrame", 0) == 0;
}

std::string HexOffset(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
  return buf;
}

std::string FileName(const std::string& p) {
  size_t slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

class CallStackExport : public ExportModule, public OsrtChains {
 public:
  const char* name() const override { return "callstack"; }

  Status BeginStream(ExportContext&, StreamContext&) override {
    modules_.Clear();
    stacks_.clear();
    chain_of_stack_.clear();
    osrt_chain_of_stack_.clear();
    frames_.clear();
    return Status::Ok();
  }

  Status OnChunk(ExportContext& ctx, StreamContext& s, const schema::Chunk& chunk) override {
    Status st;
    if (chunk.has_callstack_config() && !(st = Config(ctx, s, chunk.callstack_config())).ok())
      return st;
    modules_.Read(chunk);
    for (const schema::CallStackDef& d : chunk.callstack_defs()) {
      Stack& stack = stacks_[d.stack_id()];
      stack.addresses.assign(d.addresses().begin(), d.addresses().end());
      stack.truncated = d.truncated();
      stack.python.clear();
      for (const schema::PythonFrame& p : d.python_frames())
        stack.python.push_back({std::string(s.Text(p.file_id())), std::string(s.Text(p.function_id())), p.line()});
    }
    uint64_t ts = chunk.base_ns();
    for (const schema::CudaApiBacktrace& b : chunk.cuda_api_backtraces()) {
      ts += static_cast<uint64_t>(b.start_delta_ns());
      Backtrace c;
      c.tid = chunk.tid();
      c.start_ns = ts;
      c.duration_ns = b.duration_ns();
      c.driver = b.kind() == schema::CUDA_API_KIND_DRIVER;
      c.cbid = b.cbid();
      c.correlation_id = b.correlation_id();
      c.stack_id = b.stack_id();
      c.name = std::string(s.Text(b.name_id()));
      c.return_value = b.return_value();
      if (stacks_.count(c.stack_id) == 0) {
        ++missing_stacks_;
        continue;
      }
      c.name = StripCallbackVersion(c.name);
      if (c.name.empty())
        c.name = (c.driver ? "driver API " : "runtime API ") + std::to_string(c.cbid);
      // Written now: the modules a stack points into were announced before it (the drain thread
      // scans modules before it decodes the rings), so memory stays bounded by the distinct stacks.
      if (!(st = Row(ctx, s, c)).ok())
        return st;
    }
    for (const schema::CallStackLoss& l : chunk.callstack_losses()) {
      nesting_overflow_ += l.nesting_overflow();
      unwind_failures_ += l.unwind_failures();
    }
    return Status::Ok();
  }

  Status OsrtChainId(ExportContext& ctx, uint64_t stack_id, uint64_t ts_ns, int64_t* id) override {
    *id = 0;
    auto known = osrt_chain_of_stack_.find(stack_id);
    if (known != osrt_chain_of_stack_.end()) {
      *id = known->second;
      return Status::Ok();
    }
    auto stack = stacks_.find(stack_id);
    if (stack == stacks_.end()) {
      ++missing_stacks_;
      return Status::Ok();
    }
    Status st;
    std::vector<FrameRow> rows;
    for (uint64_t a : stack->second.addresses) {
      FrameRow r;
      if (!(st = Frame(ctx, a, ts_ns, &r)).ok())
        return st;
      rows.push_back(r);
    }
    auto it = osrt_chains_.find(rows);
    if (it == osrt_chains_.end()) {
      if (!(st = ctx.EnsureTable("OSRT_CALLCHAINS")).ok())
        return st;
      Statement* ins = ctx.Insert("OSRT_CALLCHAINS", kInsertOsrtChain, &st);
      if (ins == nullptr)
        return st;
      int64_t chain = next_osrt_chain_++;
      for (size_t depth = 0; depth < rows.size(); ++depth) {
        const FrameRow& r = rows[depth];
        ins->Int(1, chain).Int(2, r.symbol).Int(3, r.module).Int(4, r.unresolved ? 1 : 0);
        ins->Int(5, r.original_ip).Int(6, static_cast<int64_t>(depth));
        if (!(st = ins->Run()).ok())
          return st;
      }
      it = osrt_chains_.emplace(std::move(rows), chain).first;
    }
    osrt_chain_of_stack_.emplace(stack_id, it->second);
    *id = it->second;
    return Status::Ok();
  }

  // One eventClass-67 row (and the call's chain, when its stack is new).
  Status Row(ExportContext& ctx, StreamContext& s, const Backtrace& c) {
    Status st;
    if (!(st = ctx.EnsureTable("CUDA_CALLCHAINS")).ok())
      return st;
    Statement* ins = ctx.Insert("CUPTI_ACTIVITY_KIND_RUNTIME", kInsertRuntime, &st);
    if (ins == nullptr)
      return st;
    auto it = chain_of_stack_.find(c.stack_id);
    int64_t chain = 0;
    if (it != chain_of_stack_.end()) {
      chain = it->second;
    } else {
      if (!(st = ChainId(ctx, stacks_[c.stack_id], c.start_ns, &chain)).ok())
        return st;
      chain_of_stack_.emplace(c.stack_id, chain);
    }
    int64_t name_id = 0;
    if (!(st = ctx.StringId(c.name, &name_id)).ok())
      return st;
    int64_t start = s.ToSessionNs(c.start_ns);
    int64_t end = start + static_cast<int64_t>(c.duration_ns);
    ctx.NoteTime(end);
    ins->Int(1, start).Int(2, end).Int(3, kEventClassCudaBacktrace).Int(4, s.GlobalTid(c.tid));
    ins->Int(5, c.correlation_id).Int(6, name_id).Int(7, c.return_value).Int(8, chain);
    return ins->Run();
  }

  Status Finish(ExportContext& ctx) override {
    for (const std::string& p : symbolizer_.problems())
      ctx.Warn("call stacks: " + p + "; its frames keep module+offset");
    if (missing_stacks_ > 0) {
      ctx.Warn("call stacks: " + std::to_string(missing_stacks_) +
               " backtraces name a stack the stream does not define");
    }
    if (nesting_overflow_ + unwind_failures_ > 0) {
      ctx.Warn("call stacks: " + std::to_string(nesting_overflow_) + " calls nested too deep and " +
               std::to_string(unwind_failures_) + " unwinder failures kept no stack");
    }
    return Status::Ok();
  }

 private:
  struct Stack {
    std::vector<uint64_t> addresses;
    bool truncated = false;
    std::vector<PythonFrameText> python;  // innermost first
  };

  Status Config(ExportContext& ctx, StreamContext& s, const schema::CallStackConfig& c) {
    Status st;
    Statement* ins = ctx.Insert("META_DATA_CAPTURE", "INSERT INTO META_DATA_CAPTURE (name, value) VALUES (?,?)", &st);
    if (ins == nullptr)
      return st;
    std::string p = "PROCESS_" + std::to_string(s.index) + ":";
    std::string classes;
    static const char* kNames[] = {"", "kernel", "memory", "sync", "other"};
    for (const schema::CallStackClassThreshold& t : c.classes()) {
      int k = static_cast<int>(t.api_class());
      classes += (classes.empty() ? "" : ",") + std::string(k > 0 && k < 5 ? kNames[k] : "?") + ":" +
                 std::to_string(t.threshold_ns());
    }
    const std::pair<std::string, std::string> rows[] = {
        {"CUDA_BACKTRACE", c.spec()},
        {"CUDA_BACKTRACE_CLASSES", classes},
        {"CUDA_BACKTRACE_MAX_FRAMES", std::to_string(c.max_frames())},
        {"CUDA_BACKTRACE_UNWINDER", c.unwinder_path()},
        {"CUDA_BACKTRACE_APIS", std::to_string(c.runtime_apis_selected()) + " runtime, " +
                                    std::to_string(c.driver_apis_selected()) + " driver"},
        {"PYTHON_BACKTRACE", c.python_backtrace().empty() ? "none"
                             : c.python_version().empty()
                                 ? c.python_backtrace() + " (no Python frames read)"
                                 : c.python_backtrace() + " (Python " + c.python_version() + ")"},
    };
    for (const auto& [k, v] : rows) {
      if (!(st = ins->Text(1, p + k).Text(2, v).Run()).ok())
        return st;
    }
    return Status::Ok();
  }

  Status Frame(ExportContext& ctx, uint64_t address, uint64_t ts_ns, FrameRow* row) {
    size_t index = modules_.At(address, ts_ns);
    const Module* m = modules_.Get(index);
    auto key = std::make_pair(address, index);
    auto it = frames_.find(key);
    if (it != frames_.end()) {
      *row = it->second;
      return Status::Ok();
    }
    std::string symbol, module = m != nullptr ? m->path : "[unknown]";
    bool unresolved = true;
    bool eval_loop = false;
    if (m != nullptr) {
      SymbolizedFrame f = symbolizer_.Lookup(m->path, m->build_id, address - m->load_bias, true);
      if (!f.function.empty()) {
        symbol = f.function;
        eval_loop = IsEvalLoop(f.function);
        if (!f.file.empty())
          symbol += " at " + f.file + ":" + std::to_string(f.line);
        unresolved = false;
      } else {
        symbol = FileName(m->path) + "+" + HexOffset(address - m->load_bias);
      }
    } else {
      symbol = HexOffset(address);
    }
    Status st;
    FrameRow r;
    if (!(st = ctx.StringId(symbol, &r.symbol)).ok())
      return st;
    if (!(st = ctx.StringId(module, &r.module)).ok())
      return st;
    r.unresolved = unresolved;
    r.original_ip = static_cast<int64_t>(address);
    r.eval_loop = eval_loop;
    frames_.emplace(key, r);
    *row = r;
    return Status::Ok();
  }

  // A Python frame's row: symbol "FUNCTION at FILE:LINE", module FILE, originalIP NULL.
  Status PythonRow(ExportContext& ctx, const PythonFrameText& p, FrameRow* row) {
    Status st;
    std::string symbol = (p.function.empty() ? "<unknown>" : p.function) + " at " + p.file;
    if (p.line > 0)
      symbol += ":" + std::to_string(p.line);
    if (!(st = ctx.StringId(symbol, &row->symbol)).ok())
      return st;
    if (!(st = ctx.StringId(p.file.empty() ? "[python]" : p.file, &row->module)).ok())
      return st;
    row->python = true;
    return Status::Ok();
  }

  Status ChainId(ExportContext& ctx, const Stack& stack, uint64_t ts_ns, int64_t* id) {
    std::vector<FrameRow> rows;
    Status st;
    for (uint64_t a : stack.addresses) {
      FrameRow r;
      if (!(st = Frame(ctx, a, ts_ns, &r)).ok())
        return st;
      rows.push_back(r);
    }
    if (!stack.python.empty()) {
      // Merged as the stack ran: the native frames above the interpreter's first eval-loop frame,
      // then the Python frames (innermost first), then the eval loop and everything below it. No
      // eval-loop frame found (a stripped interpreter): the Python frames go below the native ones.
      size_t at = rows.size();
      for (size_t i = 0; i < rows.size(); ++i) {
        if (rows[i].eval_loop) {
          at = i;
          break;
        }
      }
      std::vector<FrameRow> python;
      for (const PythonFrameText& p : stack.python) {
        FrameRow r;
        if (!(st = PythonRow(ctx, p, &r)).ok())
          return st;
        python.push_back(r);
      }
      rows.insert(rows.begin() + static_cast<std::ptrdiff_t>(at), python.begin(), python.end());
    }
    auto it = chains_.find(rows);
    if (it != chains_.end()) {
      *id = it->second;
      return Status::Ok();
    }
    int64_t chain = next_chain_++;
    Statement* ins = ctx.Insert("CUDA_CALLCHAINS", kInsertChain, &st);
    if (ins == nullptr)
      return st;
    for (size_t depth = 0; depth < rows.size(); ++depth) {
      const FrameRow& r = rows[depth];
      ins->Int(1, chain)
          .Int(2, r.symbol)
          .Int(3, r.module)
          .OptInt(4, r.unresolved ? std::optional<int64_t>(1) : std::nullopt);
      ins->OptInt(5, r.python ? std::nullopt : std::optional<int64_t>(r.original_ip))
          .Int(6, static_cast<int64_t>(depth));
      if (!(st = ins->Run()).ok())
        return st;
    }
    chains_.emplace(std::move(rows), chain);
    *id = chain;
    return Status::Ok();
  }

  // Per stream.
  ModuleTable modules_;  // this stream's module announcements
  std::unordered_map<uint64_t, Stack> stacks_;
  std::map<uint64_t, int64_t> chain_of_stack_;              // stream stack id -> database chain id
  std::map<uint64_t, int64_t> osrt_chain_of_stack_;         // stream stack id -> OSRT_CALLCHAINS id
  std::map<std::pair<uint64_t, size_t>, FrameRow> frames_;  // (address, module index) -> row
  // Whole database.
  Symbolizer symbolizer_;
  std::map<std::vector<FrameRow>, int64_t> chains_;
  int64_t next_chain_ = 0;
  std::map<std::vector<FrameRow>, int64_t> osrt_chains_;
  int64_t next_osrt_chain_ = 1;  // 0 is "no stack" in OSRT_API.callchainId
  uint64_t missing_stacks_ = 0;
  uint64_t nesting_overflow_ = 0, unwind_failures_ = 0;
};

}  // namespace

std::string StripCallbackVersion(const std::string& name) {
  // CUPTI's runtime suffix is a CUDA version of 4 or 5 digits ("_v3020", "_v12000"); a driver API's
  // own "_v2" is part of its name.
  size_t v = name.rfind("_v");
  if (v == std::string::npos || v + 6 > name.size())
    return name;
  for (size_t i = v + 2; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9')
      return name;
  }
  return name.substr(0, v);
}

std::unique_ptr<ExportModule> MakeCallStackExport(OsrtChains** osrt_chains) {
  auto m = std::make_unique<CallStackExport>();
  if (osrt_chains != nullptr)
    *osrt_chains = m.get();
  return m;
}

}  // namespace gt::exporter
