#include "tests/common/held_anchor_scan.h"

#include <unordered_map>

#include "tools/stream/stream_reader.h"

namespace gt::test {

Status LoadHeldModel(const std::string& path, bool nvtx, NcclStreamModel* model) {
  stream::StreamReader reader;
  Status st = reader.Open(path);
  if (!st.ok())
    return st;
  const schema::ClockSnapshot& start = reader.header().start_clock();
  model->AddClockSnapshot(start.stream_clock_ns(), start.realtime_ns());
  std::unordered_map<uint64_t, std::string> strings;
  auto text = [&strings](uint64_t id) -> std::string_view {
    auto it = strings.find(id);
    return it != strings.end() ? std::string_view(it->second) : std::string_view();
  };
  schema::Chunk chunk;
  while (true) {
    bool has = false;
    if (!(st = reader.Next(&chunk, &has)).ok())
      return st;
    if (!has)
      break;
    for (const schema::InternedString& s : chunk.strings())
      strings[s.id()] = s.text();
    if (chunk.has_clock())
      model->AddClockSnapshot(chunk.clock().stream_clock_ns(), chunk.clock().realtime_ns());
    if (nvtx)
      model->AddNvtx(chunk);
    // (The old scan skipped chunks without NCCL records or communicators: nothing else of a chunk
    // reaches the model but its pool counts, which no collective end depends on.)
    model->AddChunk(chunk, text);
  }
  return Status::Ok();
}

Status ScanAnchorsHeld(const std::string& path, exporter::StreamAnchors* out) {
  NcclStreamModel model;
  Status st = LoadHeldModel(path, /*nvtx=*/false, &model);
  if (!st.ok())
    return st;
  if (model.empty())
    return Status::Ok();
  model.Finish();
  for (const exporter::NcclOperation& o : model.operations()) {
    if (o.op->type != schema::NCCL_EVENT_TYPE_COLL || o.comm == nullptr || !o.gpu_stop_ns)
      continue;
    out->ends.push_back({o.comm->info.comm_hash(), o.func, o.op->start.seq_number(), *o.gpu_stop_ns});
  }
  return Status::Ok();
}

}  // namespace gt::test
