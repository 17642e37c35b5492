// CudaTargetInfo: the machine description of a CUDA export, collected from the CudaDevice /
// CudaContext / CudaStream messages of every stream and written once all streams are read:
// TARGET_INFO_GPU (one row per physical GPU: host + UUID, numbered in the order first seen),
// TARGET_INFO_CUDA_DEVICE (process x GPU), TARGET_INFO_CUDA_CONTEXT_INFO (one row per context),
// TARGET_INFO_CUDA_STREAM (one row per stream, NULL streams included) and GTRACE_DEVICES (process x
// CUDA ordinal -> deviceId, host, UUID). Also maps (process, context) -> device for rows whose CUPTI
// record has no device id (SYNCHRONIZATION).
//
// deviceId in every table is the GPU id (TARGET_INFO_GPU.id), as nsys's reports join it: one id per
// physical GPU of the export, so that readers keying GPUs on deviceId (and streams on deviceId,
// streamId) see each rank's GPU apart. TARGET_INFO_CUDA_DEVICE.cudaId is that same id (readers join
// CONTEXT_INFO.deviceId and KERNEL.deviceId to it); CUPTI's process-local ordinal is
// GTRACE_DEVICES.cudaId. Rows get the id as they are written (DeviceColumn); a merge renumbers GPUs
// across hosts.
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
  // A stream traced CUDA (or has GPU rows): the tables get written.
  void NoteTraced(const StreamContext&) { traced_ = true; }
  // The deviceId to write for a row of process `s` on CUDA ordinal `ordinal` (context `context_id`):
  // the GPU id when the device record has arrived (CUPTI sends it before the device's first
  // activity), else kUnmappedBase + ordinal, rewritten at Write; a process whose ordinal never gets a
  // device record (lost, or a stream cut before CUPTI's first buffer) gets a placeholder GPU, device
  // and context there.
  int64_t DeviceColumn(const StreamContext& s, uint32_t ordinal, uint32_t context_id) {
    auto it = device_gpu_.find(std::make_tuple(s.hw_id, s.pid, ordinal));
    if (it != device_gpu_.end())
      return it->second;
    unmapped_.insert(std::make_tuple(s.hw_id, s.pid, ordinal, context_id));
    return kUnmappedBase + ordinal;
  }
  static constexpr int64_t kUnmappedBase = int64_t{1} << 24;
  // The src/dst device of a peer copy: its GPU id when described so far, else the ordinal as is
  // (a peer GPU CUPTI never described gets no placeholder).
  int64_t PeerDeviceColumn(const StreamContext& s, uint32_t ordinal) const {
    auto it = device_gpu_.find(std::make_tuple(s.hw_id, s.pid, ordinal));
    return it != device_gpu_.end() ? it->second : ordinal;
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
  // Rewrites the deviceId columns written as kUnmappedBase + ordinal to the GPU id.
  Status RenumberUnmapped(ExportContext& ctx);
  // Assigns the GPU id of a new device: one per (host, UUID), in the order first seen.
  void NumberDevice(size_t index);
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
  // Placeholder devices and contexts for the ordinals and contexts of unmapped_ never described.
  void AddPlaceholders(ExportContext& ctx);

  bool traced_ = false;
  std::map<std::pair<uint32_t, std::string>, int64_t> gpu_ids_;             // (hw, UUID) -> GPU id
  std::vector<size_t> gpu_rows_;                                            // GPU id -> its first device
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, int64_t> device_gpu_;  // (hw, pid, ordinal) -> GPU id
  std::set<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>> unmapped_;   // (hw, pid, ordinal, context)
  std::vector<Device> devices_;                                             // one per (process, CUDA ordinal)
  std::vector<Context> contexts_;
  std::vector<Stream> streams_;
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, uint32_t> context_device_;  // (hw, pid, ctx) -> device
};

}  // namespace gt::exporter
