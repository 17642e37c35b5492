// Kernel names and CUPTI -> nsys enum translations for the CUDA export modules.
// Pure functions (any thread); unit-tested in tests/cuda/cuda_names_test.cc.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gt::exporter {

// The three names nsys stores for a kernel (all StringIds in CUPTI_ACTIVITY_KIND_KERNEL).
struct KernelNames {
  std::string mangled;    // as CUPTI reports it ("_Z7add_onePKfPfi"; a C kernel's plain name)
  std::string demangled;  // abi::__cxa_demangle of it in nsys spelling ("add_one(const float *, float *, int)")
  std::string short_name; // base name: no return type, scope, template arguments or parameters ("add_one")
};
KernelNames MakeKernelNames(std::string_view cupti_name);
std::string DemangleKernelName(std::string_view mangled);
std::string ShortKernelName(std::string_view demangled);

// ENUM_CUDA_MEM_KIND: nsys = CUPTI - 1, CUPTI 0 (unknown) -> 7.
int64_t NsysMemKind(uint32_t cupti_memory_kind);
// ENUM_CUDA_KERNEL_LAUNCH_TYPE: nsys = CUPTI + 1 (0 is nsys's "unknown").
int64_t NsysLaunchType(uint32_t cupti_launch_type);
// ENUM_CUDA_DEV_MEM_EVENT_OPER: CUPTI 1 allocation -> 0, 2 release -> 1.
int64_t NsysMemoryOperation(uint32_t cupti_operation);
// ENUM_CUPTI_OVERHEAD_TYPE (mapped by name; CUPTI uses n << 16 codes) and the overhead's name
// (StringIds text of CUPTI_ACTIVITY_KIND_OVERHEAD.nameId).
struct OverheadType {
  int64_t type;
  const char* name;
};
OverheadType NsysOverhead(uint32_t cupti_overhead_kind);

// "b15c2a57-42ed-1d24-2c84-067081698645" from 16 UUID bytes ("" when not 16 bytes).
std::string FormatUuid(std::string_view bytes);

}  // namespace gt::exporter
