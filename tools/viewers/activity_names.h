// Display names for nsys rows, shared by the viewer writers so Perfetto, Kineto JSON and Paraver
// name things alike. Kineto's own spellings are used where HTA depends on them: HTA classifies a
// GPU event as memory work when its name starts with "Memcpy"/"Memset" and as communication when it
// matches ^nccl.*Kernel.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gt::viewers {

// "cudaLaunchKernel_v7000" -> "cudaLaunchKernel": nsys keeps CUPTI's version suffix (fact sheet
// fact 7); viewers show the API name people call.
std::string ApiDisplayName(std::string_view nsys_name);

// ENUM_CUDA_MEMCPY_OPER id -> "HtoD", "DtoH", "PtoP", ...
std::string MemcpyKindShort(int64_t copy_kind);
// ENUM_CUDA_MEM_KIND id (nsys numbering) -> "Pageable", "Device", ...
std::string MemoryKindLabel(int64_t mem_kind);
// "Memcpy HtoD (Pageable -> Device)" (Kineto's form); kinds unknown -> "Memcpy HtoD".
std::string MemcpyName(int64_t copy_kind, int64_t src_kind, int64_t dst_kind);
// "Memset (Device)".
std::string MemsetName(int64_t mem_kind);
// CUPTI synchronization type -> "Event Sync", "Stream Wait Event", "Stream Sync", "Context Sync".
std::string SyncName(int64_t sync_type);

// NCCL kernels (ncclDevKernel_*, ncclKernel_*), as HTA recognizes them.
bool IsNcclKernel(std::string_view name);

// How a CUDA API call spends its thread's time, for Paraver states (BSC's Extrae conventions).
enum class ApiCategory { kLaunch, kMemoryTransfer, kSynchronization, kAllocation, kFree, kOther };
ApiCategory CategorizeApi(std::string_view api_name);

}  // namespace gt::viewers
