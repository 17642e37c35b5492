// FillStart: what an NCCL START record gives an NcclEvent (ids, type, communicator, host time and
// thread, parent and group, NCCL's strings). Shared by the in-memory model (NcclStreamModel, the
// tests' reference in tests/common/nccl_stream_model.h) and the spill model (NcclSpillModel),
// which keep the START message itself each their own way (as is, or serialized). Pure; the
// exporter's thread.
#pragma once

#include <cstdint>
#include <string_view>

#include "gtrace.pb.h"
#include "tools/export/nccl_model.h"

namespace gt::exporter {

// `ts_ns` is the record's host time (stream clock), `tid` its thread; the strings are the START's
// interned func, datatype, algo, proto and sync-strategy texts, resolved by the caller.
void FillStart(const schema::NcclEvent& e,
               uint64_t ts_ns,
               uint32_t tid,
               std::string_view func,
               std::string_view datatype,
               std::string_view algo,
               std::string_view proto,
               std::string_view sync,
               NcclEvent* ev);

}  // namespace gt::exporter
