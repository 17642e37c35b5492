// GraphTraceSpill: CUPTI_ACTIVITY_KIND_GRAPH_TRACE rows of one stream in bounded memory. A graph
// trace row needs the executable-graph id of its launch, and the launch's callback record may come
// after the activity, so rows can only be finished at the stream's end. Both the rows and the
// launches (correlation id -> exec id) go to the spill database (ExportContext::AttachSpill) as they
// are read; WriteStream copies the rows, in read order, into the output with one INSERT ... SELECT
// at the stream's end, and empties the spill tables. The output is the same as when every row and
// launch was held in memory until then: the table is created at the same moment, the rows keep
// their order, each row's device column is computed at the stream's end (DeviceColumn, once per
// distinct device and context) and the last launch of a correlation id wins.
// Memory: one entry per distinct (device, context) of a stream's graph rows. Single-threaded (the
// exporter's thread); owned by the CUDA export module.
#pragma once

#include <cstdint>

#include "gtrace.pb.h"
#include "schema/status.h"
#include "tools/export/cuda_target_info.h"
#include "tools/export/export_context.h"

namespace gt::exporter {

class GraphTraceSpill {
 public:
  GraphTraceSpill() = default;
  GraphTraceSpill(const GraphTraceSpill&) = delete;
  GraphTraceSpill& operator=(const GraphTraceSpill&) = delete;

  // One graph-trace activity (session-relative start and end).
  Status AddTrace(ExportContext& ctx, int64_t start_ns, int64_t end_ns, const schema::CudaGraphTrace& r);
  // One graph launch's callback record: its correlation id names executable graph `exec_id`.
  Status AddLaunch(ExportContext& ctx, uint32_t correlation_id, uint32_t exec_id);
  // At the stream's end: writes its rows into CUPTI_ACTIVITY_KIND_GRAPH_TRACE (created then, when
  // there are rows), *without_exec = rows whose launch was never recorded (graphExecId 0).
  Status WriteStream(ExportContext& ctx, StreamContext& s, CudaTargetInfo* target, uint64_t* without_exec);

 private:
  Status Create(ExportContext& ctx);

  bool created_ = false;  // the spill tables exist
  bool rows_ = false;     // this stream spilled a row or a launch
};

}  // namespace gt::exporter
