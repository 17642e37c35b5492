#include "tools/viewers/activity_names.h"

#include <cctype>

#include "tools/nsys/nsys_schema.h"

namespace gt::viewers {
namespace {

bool Contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

}  // namespace

std::string ApiDisplayName(std::string_view name) {
  size_t v = name.rfind("_v");
  if (v == std::string_view::npos || v == 0 || v + 2 >= name.size())
    return std::string(name);
  for (size_t i = v + 2; i < name.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(name[i])))
      return std::string(name);
  }
  return std::string(name.substr(0, v));
}

std::string MemcpyKindShort(int64_t copy_kind) {
  // ENUM_CUDA_MEMCPY_OPER (= CUPTI's copyKind, plus nsys's unified-memory kinds 11-13).
  static const char* const kNames[] = {"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD",
                                       "DtoA",    "DtoD", "HtoH", "PtoP", "HtoD", "DtoH", "DtoD"};
  if (copy_kind < 0 || copy_kind >= static_cast<int64_t>(std::size(kNames)))
    return "Unknown";
  return kNames[copy_kind];
}

std::string MemoryKindLabel(int64_t mem_kind) {
  if (const nsys::EnumTable* t = nsys::FindEnumTable("ENUM_CUDA_MEM_KIND")) {
    for (const nsys::EnumRow& row : t->rows) {
      if (row.id == mem_kind && row.label != nullptr)
        return row.label;
    }
  }
  return "Unknown";
}

std::string MemcpyName(int64_t copy_kind, int64_t src_kind, int64_t dst_kind) {
  std::string name = "Memcpy " + MemcpyKindShort(copy_kind);
  if (src_kind >= 0 && dst_kind >= 0)
    name += " (" + MemoryKindLabel(src_kind) + " -> " + MemoryKindLabel(dst_kind) + ")";
  return name;
}

std::string MemsetName(int64_t mem_kind) {
  return mem_kind >= 0 ? "Memset (" + MemoryKindLabel(mem_kind) + ")" : "Memset";
}

std::string SyncName(int64_t sync_type) {
  switch (sync_type) {
    case 1:
      return "Event Sync";
    case 2:
      return "Stream Wait Event";
    case 3:
      return "Stream Sync";
    case 4:
      return "Context Sync";
    default:
      return "Unknown Sync";
  }
}

bool IsNcclKernel(std::string_view name) {
  return name.rfind("nccl", 0) == 0 && Contains(name, "Kernel");
}

ApiCategory CategorizeApi(std::string_view name) {
  // Order matters: cudaMemcpyAsync is a transfer, cudaLaunchHostFunc a launch, cudaFreeHost a free.
  if (Contains(name, "Memcpy") || Contains(name, "Memset") || Contains(name, "MemPrefetch")) {
    return ApiCategory::kMemoryTransfer;
  }
  if (Contains(name, "Synchronize") || Contains(name, "WaitEvent") || Contains(name, "StreamWait") ||
      Contains(name, "EventQuery") || Contains(name, "StreamQuery")) {
    return ApiCategory::kSynchronization;
  }
  if (Contains(name, "Launch"))
    return ApiCategory::kLaunch;
  if (Contains(name, "Free"))
    return ApiCategory::kFree;
  if (Contains(name, "Malloc") || Contains(name, "Alloc"))
    return ApiCategory::kAllocation;
  return ApiCategory::kOther;
}

}  // namespace gt::viewers
