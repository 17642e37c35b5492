// CudaTargetInfo: the machine description of a CUDA export — TARGET_INFO_GPU (one row per physical
// GPU per host, identified by UUID), TARGET_INFO_CUDA_DEVICE (process x CUDA ordinal -> GPU),
// TARGET_INFO_CUDA_CONTEXT_INFO (one row per context) and TARGET_INFO_CUDA_STREAM (one row per
// stream, NULL streams included), and GTRACE_DEVICES (process x CUDA ordinal -> deviceId, host, UUID) — collected from CudaDevice/CudaContext/CudaStream messages of
// every stream and written once all streams are read. Also maps (process, context) -> device for
// rows whose CUPTI record has no device id (SYNCHRONIZATION).
//
// deviceId in every table is the GPU id (TARGET_INFO_GPU.id), as nsys's reports join it: one id per
// physical GPU (host, UUID) of the export, so that readers keying GPUs on deviceId (and streams on
// deviceId, streamId) see each rank's GPU apart. CUPTI's process-local ordinal stays in
// TARGET_INFO_CUDA_DEVICE.cudaId and GTRACE_DEVICES.cudaId.
//
// Single-threaded (the exporter's thread); owned by the CUDA export module.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "gtrace.pb.h"
#include "schema/status.h"
#include "tools/export/export_context.h"

namespace gt::exporter {

class CudaTargetInfo {
 public:
  // A stream announced it traced CUDA. A process with GPU rows but no device record (lost, or a
  // stream cut before CUPTI's first buffer) gets a placeholder GPU, device and context at Write.
  void NoteTraced(const StreamContext& s) {
    traced_ = true;
    traced_processes_.insert({s.hw_id, s.pid});
  }
  bool traced() const { return traced_; }

  void AddDevice(const StreamContext& s, const schema::CudaDevice& d);
  void AddContext(const StreamContext& s, const schema::CudaContext& c);
  void AddStream(const StreamContext& s, const schema::CudaStream& st);
  // Device of `context_id` in process `s` (nullopt when no CONTEXT record named it).
  std::optional<uint32_t> DeviceOfContext(const StreamContext& s, uint32_t context_id) const;

  // Creates and fills the four tables (only when some stream traced CUDA).
  Status Write(ExportContext& ctx);

 private:
  struct Device {
    uint32_t hw_id;
    uint32_t pid;
    schema::CudaDevice info;
    std::string host_name;
  };
  // Rewrites the deviceId columns of the GPU activity tables from the CUDA ordinal CUPTI reports
  // to the GPU id (`gpu_of` maps (globalPid, ordinal) -> TARGET_INFO_GPU.id).
  Status RenumberDevices(ExportContext& ctx, const std::map<std::pair<int64_t, uint32_t>, int64_t>& gpu_of);
  struct Context {
    uint32_t hw_id;
    uint32_t pid;
    schema::CudaContext info;
  };
  struct Stream {
    uint32_t hw_id;
    uint32_t pid;
    schema::CudaStream info;
  };
  // Placeholder devices for the processes of traced_processes_ that have GPU rows but no device.
  Status AddPlaceholders(ExportContext& ctx);

  bool traced_ = false;
  std::set<std::pair<uint32_t, uint32_t>> traced_processes_;  // (hw, pid)
  std::vector<Device> devices_;  // one per (process, CUDA ordinal)
  std::vector<Context> contexts_;
  std::vector<Stream> streams_;
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, uint32_t> context_device_;  // (hw, pid, ctx) -> device
};

}  // namespace gt::exporter
