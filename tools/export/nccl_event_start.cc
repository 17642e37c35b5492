#include "tools/export/nccl_event_start.h"

namespace gt::exporter {

void FillStart(const schema::NcclEvent& e,
               uint64_t ts_ns,
               uint32_t tid,
               std::string_view func,
               std::string_view datatype,
               std::string_view algo,
               std::string_view proto,
               std::string_view sync,
               NcclEvent* ev) {
  ev->id = e.event_id();
  ev->type = static_cast<uint32_t>(e.type());
  ev->comm_index = e.comm_index();
  ev->start_ns = ts_ns;
  ev->start_tid = tid;
  ev->parent_id = e.parent_id();
  ev->group_id = e.group_id();
  ev->func = func;
  ev->datatype = datatype;
  ev->algo = algo;
  ev->proto = proto;
  ev->sync_strategy = sync;
}

}  // namespace gt::exporter
