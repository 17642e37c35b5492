#include "tools/export/osrt_export.h"

#include <string>
#include <utility>
#include <vector>

namespace gt::exporter {
namespace {

constexpr char kInsertOsrt[] =
    "INSERT INTO OSRT_API (start, end, eventClass, globalTid, nameId, returnValue, nestingLevel, callchainId, "
    "argumentsId) VALUES (?,?,?,?,?,?,0,?,0)";

class OsrtExport : public ExportModule {
 public:
  explicit OsrtExport(OsrtChains* chains) : chains_(chains) {}

  const char* name() const override { return "osrt"; }

  Status OnChunk(ExportContext& ctx, StreamContext& s, const schema::Chunk& chunk) override {
    Status st;
    if (chunk.has_osrt_config() && !(st = Config(ctx, s, chunk.osrt_config())).ok())
      return st;
    if (chunk.osrt_calls_size() == 0)
      return Status::Ok();
    Statement* ins = ctx.Insert("OSRT_API", kInsertOsrt, &st);
    if (ins == nullptr)
      return st;
    int64_t global_tid = s.GlobalTid(chunk.tid());
    uint64_t ts = chunk.base_ns();
    for (const schema::OsrtCall& c : chunk.osrt_calls()) {
      ts += static_cast<uint64_t>(c.start_delta_ns());
      std::string_view name = s.Text(c.name_id());
      int64_t name_id = 0;
      if (!(st = ctx.StringId(name.empty() ? std::string_view("[Unknown]") : name, &name_id)).ok())
        return st;
      int64_t start = s.ToSessionNs(ts);
      int64_t end = start + static_cast<int64_t>(c.duration_ns());
      ctx.NoteTime(end);
      int64_t chain = 0;
      if (c.stack_id() != 0 && chains_ != nullptr && !(st = chains_->OsrtChainId(ctx, c.stack_id(), ts, &chain)).ok())
        return st;
      // OsrtChainId may have prepared other statements: take this one again.
      if ((ins = ctx.Insert("OSRT_API", kInsertOsrt, &st)) == nullptr)
        return st;
      ins->Int(1, start).Int(2, end).Int(3, kEventClassOsRuntime).Int(4, global_tid);
      ins->Int(5, name_id).Int(6, c.return_value()).Int(7, chain);
      if (!(st = ins->Run()).ok())
        return st;
    }
    return Status::Ok();
  }

 private:
  Status Config(ExportContext& ctx, StreamContext& s, const schema::OsrtConfig& c) {
    Status st;
    Statement* ins = ctx.Insert("META_DATA_CAPTURE", "INSERT INTO META_DATA_CAPTURE (name, value) VALUES (?,?)", &st);
    if (ins == nullptr)
      return st;
    std::string p = "PROCESS_" + std::to_string(s.index) + ":";
    std::vector<std::pair<std::string, std::string>> rows = {
        {"OSRT_THRESHOLD", std::to_string(c.threshold_ns())},
        {"OSRT_FUNCTIONS", std::to_string(c.functions_traced())},
    };
    if (c.has_backtrace_threshold_ns()) {
      rows.emplace_back("OSRT_BACKTRACE_THRESHOLD", std::to_string(c.backtrace_threshold_ns()));
      rows.emplace_back("OSRT_BACKTRACE_DEPTH", std::to_string(c.backtrace_depth()));
      rows.emplace_back("OSRT_BACKTRACE_UNWINDER", c.unwinder_path().empty() ? "none (no stacks)" : c.unwinder_path());
    }
    for (const auto& [key, value] : rows) {
      ins->Text(1, p + key).Text(2, value);
      if (!(st = ins->Run()).ok())
        return st;
    }
    return Status::Ok();
  }

  OsrtChains* chains_;
};

}  // namespace

std::unique_ptr<ExportModule> MakeOsrtExport(OsrtChains* chains) {
  return std::make_unique<OsrtExport>(chains);
}

}  // namespace gt::exporter
