// ParaverLabels: the event types and values a Paraver export uses, and the .pcf text that names
// them, plus the state table. Types and states follow BSC's conventions for GPU traces (Extrae's
// CUDA types and states, nsys2prv's kernel/NVTX types) where they exist; the rest are ours and are
// listed in docs/viewers.md.
//
// Used by the exporting thread. Value tables are bounded (NameTable: 262144 names or 32 MiB per
// type); past the bound a type's names share one "(more names)" value.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "tools/viewers/name_table.h"

namespace gt::viewers::prv {

// States (Extrae's numbering and labels).
inline constexpr int kStateRunning = 1;
inline constexpr int kStateSynchronization = 5;
inline constexpr int kStateOthers = 15;
inline constexpr int kStateMemoryTransfer = 17;
inline constexpr int kStateAllocating = 30;
inline constexpr int kStateFreeing = 31;
inline constexpr int kStateConfiguringAccelerator = 32;

// Event types.
inline constexpr int64_t kRuntimeApi = 63000000;      // Extrae: CUDA library call
inline constexpr int64_t kMemoryTransfer = 63000001;  // GPU memcpy/memset (nsys2prv: CUDA memcpy kernel)
inline constexpr int64_t kTransferBytes = 63000002;   // nsys2prv: memcopy size
inline constexpr int64_t kKernel = 63000006;          // Extrae/nsys2prv: CUDA kernel
inline constexpr int64_t kNcclKernel = 63000007;      // nsys2prv: NCCL kernel
inline constexpr int64_t kDriverApi = 63000020;       // ours: CUDA driver API call
inline constexpr int64_t kGpuSync = 63000030;         // ours: GPU-side synchronization
inline constexpr int64_t kGridX = 9101;               // nsys2prv 9101-9108: grid, block, shared memory
inline constexpr int64_t kRegistersPerThread = 9110;  // nsys2prv
inline constexpr int64_t kCorrelation = 9200;         // nsys2prv: correlation id
inline constexpr int64_t kNvtxMark = 9002;            // ours
inline constexpr int64_t kNvtxRange = 9003;           // nsys2prv: NVTX push/pop ranges (default domain)
inline constexpr int64_t kNvtxStartEnd = 9004;        // nsys2prv: NVTX start/end ranges
inline constexpr int64_t kNcclRange = 9500;           // nsys2prv: NCCL (NVTX domain "NCCL")
inline constexpr int64_t kNcclOperation = 9510;       // ours: GTRACE_NCCL_OPERATIONS
inline constexpr int64_t kNcclBytes = 9511;           // ours
inline constexpr int64_t kNvtxDomainBase = 9600;      // nsys2prv: 9600 + 100 * k per other domain
inline constexpr int64_t kMetricBase = 940000;        // ours: 940000 + i per GPU metric

class ParaverLabels {
 public:
  // Declares a type with named values (value 0 = "End").
  void NamedType(int64_t type, std::string label);
  // Declares a type whose values are numbers.
  void NumericType(int64_t type, std::string label);
  // The value of `name` under a named type (from 1).
  uint64_t Value(int64_t type, std::string_view name);

  std::string PcfText() const;

 private:
  struct Type {
    std::string label;
    bool named = false;
    NameTable values{1 << 18, 32 << 20};
  };
  std::map<int64_t, Type> types_;
};

}  // namespace gt::viewers::prv
