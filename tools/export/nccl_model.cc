#include "tools/export/nccl_model.h"

namespace gt::exporter {

uint32_t NcclTypeSizeBytes(const std::string& t) {
  if (t == "ncclInt8" || t == "ncclUint8" || t == "ncclFloat8e4m3" || t == "ncclFloat8e5m2") return 1;
  if (t == "ncclFloat16" || t == "ncclBfloat16") return 2;
  if (t == "ncclInt32" || t == "ncclUint32" || t == "ncclFloat32") return 4;
  if (t == "ncclInt64" || t == "ncclUint64" || t == "ncclFloat64") return 8;
  return 0;
}

bool NcclTestsFactors(const std::string& func, int32_t n, uint64_t* size_multiplier, int64_t* bus_num,
                      int64_t* bus_den) {
  if (n <= 0) return false;
  *size_multiplier = 1;
  *bus_num = 1;
  *bus_den = 1;
  if (func == "AllReduce") {
    *bus_num = 2 * (n - 1);
    *bus_den = n;
  } else if (func == "AllGather" || func == "ReduceScatter" || func == "AlltoAll" || func == "Gather" ||
             func == "Scatter") {
    *size_multiplier = static_cast<uint64_t>(n);
    *bus_num = n - 1;
    *bus_den = n;
  } else if (func == "Broadcast" || func == "Reduce" || func == "Send" || func == "Recv") {
    // factor 1
  } else {
    return false;
  }
  return true;
}

void NcclBufferBytes(const std::string& func, uint64_t m, int32_t n, std::optional<uint64_t>* send,
                     std::optional<uint64_t>* recv) {
  uint64_t all = n > 0 ? m * static_cast<uint64_t>(n) : 0;
  if (func == "AllReduce" || func == "Broadcast" || func == "Reduce") {
    *send = m;
    *recv = m;
  } else if (func == "AllGather" || func == "Gather") {
    *send = m;
    if (n > 0) *recv = all;
  } else if (func == "ReduceScatter" || func == "Scatter") {
    if (n > 0) *send = all;
    *recv = m;
  } else if (func == "AlltoAll") {
    if (n > 0) *send = *recv = all;
  } else if (func == "Send") {
    *send = m;
  } else if (func == "Recv") {
    *recv = m;
  }
}

void DeriveOperation(NcclOperation* out) {
  NcclOperation& o = *out;
  const NcclEvent& ev = *o.op;
  o.func = ev.func;
  o.count = o.api != nullptr ? o.api->start.count() : ev.start.count();
  o.datatype = o.api != nullptr ? o.api->datatype : ev.datatype;
  o.type_size_bytes = NcclTypeSizeBytes(o.datatype);
  if (o.type_size_bytes != 0) o.message_bytes = o.count * o.type_size_bytes;
  if (ev.type == schema::NCCL_EVENT_TYPE_P2P) o.peer = ev.start.peer();
  uint64_t multiplier = 0;
  int64_t num = 0, den = 0;
  int32_t n_ranks = o.comm != nullptr ? o.comm->info.n_ranks() : 0;
  if (o.message_bytes && NcclTestsFactors(o.func, n_ranks, &multiplier, &num, &den)) {
    o.alg_bytes = *o.message_bytes * multiplier;
  }
  if (o.message_bytes) NcclBufferBytes(o.func, *o.message_bytes, n_ranks, &o.send_bytes, &o.recv_bytes);
}

std::string NcclApiName(const std::string& func) { return func.empty() ? std::string() : "nccl" + func; }

}  // namespace gt::exporter
