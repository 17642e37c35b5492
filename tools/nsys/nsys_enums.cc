// Rows of the 24 ENUM_* tables in gt::nsys::EnumTables(): the id/name/label values a 3.25.0 CUDA export carries
// (identical to 3.24.14's; 3.24.0 lacks 4 ENUM_NSYS_EVENT_TYPE rows and has 4 more OSRT/sampling tables). These are
// facts about nsys's numbering, not our choices: reports join on them (e.g. ENUM_CUDA_MEMCPY_OPER.label builds
// "[CUDA memcpy Host-to-Device]"). tests/nsys/ checks them row for row against real exports.
// Note the numbering differs from CUPTI's in places (ENUM_CUDA_MEM_KIND, ENUM_CUDA_KERNEL_LAUNCH_TYPE,
// ENUM_CUPTI_OVERHEAD_TYPE): translating CUPTI values is the exporter's job, not this table's.
#include <span>

#include "tools/nsys/nsys_schema.h"

namespace gt::nsys {
namespace {

// clang-format off
constexpr EnumRow kNsysEventTypeRows[] = {
    {0, "Unknown", "Unknown"},
    {1, "CpuCycles", "CpuCycles"},
    {2, "Instructions", "Instructions"},
    {3, "CacheReferences", "CacheReferences"},
    {4, "L1CacheDataWriteMisses", "L1CacheDataWriteMisses"},
    {5, "L1CacheDataReadMisses", "L1CacheDataReadMisses"},
    {6, "L1CacheInstructionMisses", "L1CacheInstructionMisses"},
    {7, "L2CacheDataWriteMisses", "L2CacheDataWriteMisses"},
    {8, "L2CacheDataReadMisses", "L2CacheDataReadMisses"},
    {9, "L2CacheInstructionMisses", "L2CacheInstructionMisses"},
    {10, "BranchInstructions", "BranchInstructions"},
    {11, "BranchMisses", "BranchMisses"},
    {12, "BusCycles", "BusCycles"},
    {13, "CpuClock", "CpuClock"},
    {14, "TaskClock", "TaskClock"},
    {15, "PageFault", "PageFault"},
    {16, "ContextSwitches", "ContextSwitches"},
    {17, "CpuMigrations", "CpuMigrations"},
    {18, "PageFaultsMin", "PageFaultsMin"},
    {19, "PageFaultsMax", "PageFaultsMax"},
    {20, "AlignmentFaults", "AlignmentFaults"},
    {21, "EmulationFaults", "EmulationFaults"},
    {22, "ThreadState", "ThreadState"},
    {23, "Frames", "Frames"},
    {24, "Annotations", "Annotations"},
    {25, "SchedSwitch", "SchedSwitch"},
    {26, "SchedWakeup", "SchedWakeup"},
    {27, "Command", "Command"},
    {28, "Mmap", "Mmap"},
    {29, "MemUsage", "MemUsage"},
    {30, "Emc", "Emc"},
    {31, "Composite", "Composite"},
    {32, "NvtxEvents", "NvtxEvents"},
    {33, "NvtxCategory", "NvtxCategory"},
    {34, "NvtxMark", "NvtxMark"},
    {35, "NvtxPushRange", "NvtxPushRange"},
    {36, "NvtxPopRange", "NvtxPopRange"},
    {37, "NvtxStartRange", "NvtxStartRange"},
    {38, "NvtxEndRange", "NvtxEndRange"},
    {39, "NvtxThread", "NvtxThread"},
    {40, "PowerRate", "PowerRate"},
    {41, "Sched", "Sched"},
    {42, "CpuCyclesSelf", "CpuCyclesSelf"},
    {43, "CpuCyclesTotal", "CpuCyclesTotal"},
    {44, "CpuCyclesSelfPlus", "CpuCyclesSelfPlus"},
    {45, "Cuda", "Cuda"},
    {46, "CudaDevice", "CudaDevice"},
    {47, "TraceProcess", "TraceProcess"},
    {48, "TraceFunctions", "TraceFunctions"},
    {49, "Diagnostic", "Diagnostic"},
    {50, "GlWorkload", "GlWorkload"},
    {51, "BandwidthUsage", "BandwidthUsage"},
    {52, "KhrDebugMark", "KhrDebugMark"},
    {53, "KhrDebugPushRange", "KhrDebugPushRange"},
    {54, "KhrDebugPopRange", "KhrDebugPopRange"},
    {55, "KhrDebugGpuMark", "KhrDebugGpuMark"},
    {56, "KhrDebugGpuPushRange", "KhrDebugGpuPushRange"},
    {57, "KhrDebugGpuPopRange", "KhrDebugGpuPopRange"},
    {58, "GpuCtxsw", "GpuCtxsw"},
    {59, "NvtxPushPopRange", "NvtxPushPopRange"},
    {60, "NvtxStartEndRange", "NvtxStartEndRange"},
    {61, "ProfTime", "ProfTime"},
    {62, "KhrDebugPushPopRange", "KhrDebugPushPopRange"},
    {63, "KhrDebugGpuPushPopRange", "KhrDebugGpuPushPopRange"},
    {64, "NvtxtCategory", "NvtxtCategory"},
    {65, "NvtxtMark", "NvtxtMark"},
    {66, "NvtxtPushRange", "NvtxtPushRange"},
    {67, "NvtxtPopRange", "NvtxtPopRange"},
    {68, "NvtxtStartRange", "NvtxtStartRange"},
    {69, "NvtxtEndRange", "NvtxtEndRange"},
    {70, "NvtxtPushPopRange", "NvtxtPushPopRange"},
    {71, "NvtxtStartEndRange", "NvtxtStartEndRange"},
    {72, "NvtxtMetaThread", "NvtxtMetaThread"},
    {73, "NvtxtMetaProcess", "NvtxtMetaProcess"},
    {74, "NvtxtMetaFileDisplay", "NvtxtMetaFileDisplay"},
    {75, "NvtxDomainCreate", "NvtxDomainCreate"},
    {76, "NvtxDomainDestroy", "NvtxDomainDestroy"},
    {77, "NvnGpuCmdBuf", "NvnGpuCmdBuf"},
    {78, "TraceVSync", "TraceVSync"},
    {79, "CudaDeviceKernel", "CudaDeviceKernel"},
    {80, "CudaDeviceMemory", "CudaDeviceMemory"},
    {81, "Pmu", "Pmu"},
    {82, "NvnGpuDraw", "NvnGpuDraw"},
    {83, "NvnGpuCompute", "NvnGpuCompute"},
    {84, "NvnGpuDebug", "NvnGpuDebug"},
    {85, "OS runtime libraries", "OS runtime libraries"},
    {86, "CuDNN", "CuDNN"},
    {87, "CuBLAS", "CuBLAS"},
    {88, "NvMedia", "NvMedia"},
    {89, "OpenACC", "OpenACC"},
    {90, "Correlation", "Correlation"},
    {91, "DX12", "DX12"},
    {92, "DX12Workload", "DX12Workload"},
    {93, "PmuRawEvent", "PmuRawEvent"},
    {94, "GraphicsFrame", "GraphicsFrame"},
    {95, "Vulkan", "Vulkan"},
    {96, "VulkanWorkload", "VulkanWorkload"},
    {97, "NvtxNameCudaDevice", "NvtxNameCudaDevice"},
    {98, "NvtxNameCudaContext", "NvtxNameCudaContext"},
    {99, "NvtxNameCudaStream", "NvtxNameCudaStream"},
    {100, "SystemEvent", "SystemEvent"},
    {101, "GpuMemoryEvent", "GpuMemoryEvent"},
    {102, "DX12CreateObject", "DX12CreateObject"},
    {103, "VulkanCreateObject", "VulkanCreateObject"},
    {104, "UnitTraceEvent", "UnitTraceEvent"},
    {105, "CustomETWEvent", "CustomETWEvent"},
    {106, "CudaSyncEvent", "CudaSyncEvent"},
    {107, "SLIEvent (DEPRECATED)", "SLIEvent (DEPRECATED)"},
    {108, "CudaBacktrace", "CudaBacktrace"},
    {109, "WddmEvent", "WddmEvent"},
    {110, "DX11", "DX11"},
    {111, "DX11CreateObject", "DX11CreateObject"},
    {112, "DXGI", "DXGI"},
    {113, "CudaGraphNodeCreation", "CudaGraphNodeCreation"},
    {114, "OpenMP", "OpenMP"},
    {115, "UncorePmuEvent", "UncorePmuEvent"},
    {116, "UncorePmuCarmel", "UncorePmuCarmel"},
    {117, "CudaDeviceMemoryUsage", "CudaDeviceMemoryUsage"},
    {118, "ETWDxgKrnlEvent", "ETWDxgKrnlEvent"},
    {119, "CudaUvmCpuPageFaultEvent", "CudaUvmCpuPageFaultEvent"},
    {120, "CudaUvmGpuPageFaultEvent", "CudaUvmGpuPageFaultEvent"},
    {121, "NICMetricsValuesEvent", "NICMetricsValuesEvent"},
    {122, "NICMetricsListEvent", "NICMetricsListEvent"},
    {123, "InterruptHandler", "InterruptHandler"},
    {124, "NvEncode", "NvEncode"},
    {125, "NVDecode", "NVDecode"},
    {126, "nvJPEG", "nvJPEG"},
    {127, "CudaEventRecord", "CudaEventRecord"},
    {128, "PerfEventCountEvent", "PerfEventCountEvent"},
    {129, "CudaDeviceMemoryPool", "CudaDeviceMemoryPool"},
    {130, "CudaDeviceGraph", "CudaDeviceGraph"},
    {131, "CudaGraphExecCreation", "CudaGraphExecCreation"},
    {132, "CudaGraphCreation", "CudaGraphCreation"},
    {133, "CudaGraphClone", "CudaGraphClone"},
    {134, "GpuMemoryTransferEvent", "GpuMemoryTransferEvent"},
    {135, "GlTrace", "GlTrace"},
    {136, "GpuVideoEngineWorkload", "GpuVideoEngineWorkload"},
    {137, "IBSwitchMetricsValuesEvent", "IBSwitchMetricsValuesEvent"},
    {138, "GenericEvent", "GenericEvent"},
    {139, "UncorePmuT23xScf", "UncorePmuT23xScf"},
    {140, "UncorePmuT23xDsu", "UncorePmuT23xDsu"},
    {141, "IBSwitchCongestionEvent", "IBSwitchCongestionEvent"},
    {142, "CudaDeviceMemcpy", "CudaDeviceMemcpy"},
    {143, "PerfMetricValueEvent", "PerfMetricValueEvent"},
    {144, "OpenXREvent", "OpenXREvent"},
    {145, "TegraInternalEvent", "TegraInternalEvent"},
    {146, "TraceStartFinish", "TraceStartFinish"},
    {147, "Syscall", "Syscall"},
    {148, "CudaConfidentialComputeKeyRotation", "CudaConfidentialComputeKeyRotation"},
    {149, "CudaGraphExecNodeSetParams", "CudaGraphExecNodeSetParams"},
    {150, "NvApi", "NvApi"},
    {151, "CudaHostFunc", "CudaHostFunc"},
    {152, "CudaApi", "CudaApi"},
    {153, "Overhead", "Overhead"},
    {154, "CudaOverhead", "CudaOverhead"},
};

constexpr EnumRow kNsysEventClassRows[] = {
    {0, "TRACE_PROCESS_EVENT_CUDA_RUNTIME", "CUDA runtime"},
    {1, "TRACE_PROCESS_EVENT_CUDA_DRIVER", "CUDA driver"},
    {2, "TRACE_PROCESS_EVENT_GL", "GL"},
    {3, "TRACE_PROCESS_EVENT_TSP_OVERHEAD", "TSP overhead"},
    {4, "TRACE_PROCESS_EVENT_GL_DEBUG", "GL debug"},
    {5, "TRACE_PROCESS_EVENT_GL_WORKLOAD", "GL workload"},
    {6, "TRACE_PROCESS_EVENT_NVTX_START", "NVTX start"},
    {7, "TRACE_PROCESS_EVENT_NVTX_FINISH", "NVTX finish"},
    {8, "TRACE_PROCESS_EVENT_GL_START", "GL start"},
    {9, "TRACE_PROCESS_EVENT_GL_FINISH", "GL finish"},
    {10, "TRACE_PROCESS_EVENT_CUDA_START", "CUDA start"},
    {11, "TRACE_PROCESS_EVENT_CUDA_FINISH", "CUDA finish"},
    {12, "TRACE_PROCESS_EVENT_CUDA_INIT_ERROR", "CUDA init error"},
    {13, "TRACE_PROCESS_EVENT_CUDA_EGL_DRIVER", "CUDA EGL driver"},
    {18, "TRACE_PROCESS_EVENT_VSYNC", "Vsync"},
    {26, "TRACE_PROCESS_EVENT_CUDA_API", "CUDA API"},
    {27, "TRACE_PROCESS_EVENT_OS_RUNTIME", "OSRT runtime"},
    {28, "TRACE_PROCESS_EVENT_CUDNN", "cuDNN"},
    {29, "TRACE_PROCESS_EVENT_CUBLAS", "cuBLAS"},
    {31, "TRACE_PROCESS_EVENT_OS_RUNTIME_START", "OSRT start"},
    {32, "TRACE_PROCESS_EVENT_OS_RUNTIME_FINISH", "OSRT finish"},
    {33, "TRACE_PROCESS_EVENT_CUDNN_START", "cuDNN start"},
    {34, "TRACE_PROCESS_EVENT_CUDNN_FINISH", "cuDNN finish"},
    {35, "TRACE_PROCESS_EVENT_CUBLAS_START", "cuBLAS start"},
    {36, "TRACE_PROCESS_EVENT_CUBLAS_FINISH", "cuBLAS finish"},
    {37, "TRACE_PROCESS_EVENT_THREAD_BLOCK", "Thread block"},
    {38, "TRACE_PROCESS_EVENT_NVMEDIA", "NVmedia"},
    {39, "TRACE_PROCESS_EVENT_NVMEDIA_START", "NVmedia start"},
    {40, "TRACE_PROCESS_EVENT_NVMEDIA_FINISH", "NVmedia finish"},
    {41, "TRACE_PROCESS_EVENT_DX12_API", "DX12 API"},
    {42, "TRACE_PROCESS_EVENT_DX12_WORKLOAD", "DX12 workload"},
    {43, "TRACE_PROCESS_EVENT_DX12_START", "DX12 start"},
    {44, "TRACE_PROCESS_EVENT_DX12_FINISH", "DX12 finish"},
    {45, "TRACE_PROCESS_EVENT_OPENACC_START", "OpenACC start"},
    {46, "TRACE_PROCESS_EVENT_OPENACC_FINISH", "OpenACC finish"},
    {47, "TRACE_PROCESS_EVENT_OPENACC_INIT_ERROR", "OpenACC init error"},
    {48, "TRACE_PROCESS_EVENT_OPENACC", "OpenACC"},
    {49, "TRACE_PROCESS_EVENT_CPU_FPS", "CPU FPS"},
    {50, "TRACE_PROCESS_EVENT_GPU_FPS", "GPU FPS"},
    {51, "TRACE_PROCESS_EVENT_GL_MULTI_ERROR", "GL multi-error"},
    {52, "TRACE_PROCESS_EVENT_DX12_DISPLAY", "DX12 display"},
    {53, "TRACE_PROCESS_EVENT_VULKAN_API", "Vulkan API"},
    {54, "TRACE_PROCESS_EVENT_VULKAN_WORKLOAD", "Vulkan workload"},
    {55, "TRACE_PROCESS_EVENT_VULKAN_START", "Vulkan start"},
    {56, "TRACE_PROCESS_EVENT_VULKAN_FINISH", "Vulkan finish"},
    {57, "TRACE_PROCESS_EVENT_SYSTEM_EVENT", "System event"},
    {58, "TRACE_PROCESS_EVENT_GPU_MEMORY", "GPU memory"},
    {59, "TRACE_PROCESS_EVENT_DX12_CREATE_OBJECT", "DX12 create object"},
    {60, "TRACE_PROCESS_EVENT_VULKAN_CREATE_OBJECT", "Vulkan create object"},
    {61, "TRACE_PROCESS_EVENT_CUSTOM_ETW_TRACE", "Custom ETW trace"},
    {62, "TRACE_PROCESS_EVENT_SLI_DEPRECATED", "SLI (Deprecated)"},
    {63, "TRACE_PROCESS_EVENT_SLI_START_DEPRECATED", "SLI start (Deprecated)"},
    {64, "TRACE_PROCESS_EVENT_SLI_FINISH_DEPRECATED", "SLI finish (Deprecated)"},
    {65, "TRACE_PROCESS_EVENT_DX12_DEBUG_API", "DX12 debug API"},
    {66, "TRACE_PROCESS_EVENT_VULKAN_DEBUG_API", "Vulkan debug API"},
    {67, "TRACE_PROCESS_EVENT_CUDABACKTRACE", "CUDA backtrace"},
    {68, "TRACE_PROCESS_EVENT_CUDABACKTRACE_START", "CUDA backtrace start"},
    {69, "TRACE_PROCESS_EVENT_CUDABACKTRACE_FINISH", "CUDA backtrace finish"},
    {70, "TRACE_PROCESS_EVENT_WDDM", "WDDM"},
    {71, "TRACE_PROCESS_EVENT_DX11_API", "DX11 API"},
    {72, "TRACE_PROCESS_EVENT_DX11_START", "DX11 start"},
    {73, "TRACE_PROCESS_EVENT_DX11_FINISH", "DX11 finish"},
    {74, "TRACE_PROCESS_EVENT_DX11_CREATE_OBJECT", "DX11 create object"},
    {75, "TRACE_PROCESS_EVENT_DX11_DEBUG_API", "DX11 debug API"},
    {76, "TRACE_PROCESS_EVENT_DXCOMMON_API", "DX common API"},
    {77, "TRACE_PROCESS_EVENT_CUDA_GRAPH_NODE_CREATION", "CUDA graph node creation"},
    {78, "TRACE_PROCESS_EVENT_OPENMP", "OpenMP"},
    {79, "TRACE_PROCESS_EVENT_OPENMP_START", "OpenMP start"},
    {80, "TRACE_PROCESS_EVENT_OPENMP_FINISH", "OpenMP finish"},
    {81, "TRACE_PROCESS_EVENT_NVAPI", "NV API"},
    {82, "TRACE_PROCESS_EVENT_ETWDXGKRNL", "ETW DXG KRNL"},
    {83, "TRACE_PROCESS_EVENT_NVENCODE", "NVENCODE"},
    {84, "TRACE_PROCESS_EVENT_NVENCODE_START", "NVENCODE start"},
    {85, "TRACE_PROCESS_EVENT_NVENCODE_FINISH", "NVENCODE finish"},
    {86, "TRACE_PROCESS_EVENT_NVDECODE", "NVDECODE"},
    {87, "TRACE_PROCESS_EVENT_NVDECODE_START", "NVDECODE start"},
    {88, "TRACE_PROCESS_EVENT_NVDECODE_FINISH", "NVDECODE finish"},
    {89, "TRACE_PROCESS_EVENT_NVJPEG", "nvJPEG"},
    {90, "TRACE_PROCESS_EVENT_NVJPEG_START", "nvJPEG start"},
    {91, "TRACE_PROCESS_EVENT_NVJPEG_FINISH", "nvJPEG finish"},
    {92, "TRACE_PROCESS_EVENT_DX12_BATCH_WORKLOAD", "DX12 batch workload"},
    {93, "TRACE_PROCESS_EVENT_VULKAN_BATCH_WORKLOAD", "Vulkan batch workload"},
    {94, "TRACE_PROCESS_EVENT_CUDA_GRAPHEXEC_CREATION", "CUDA graph exec creation"},
    {95, "TRACE_PROCESS_EVENT_CUDA_GRAPH_CREATION", "CUDA graph creation"},
    {96, "TRACE_PROCESS_EVENT_CUDA_GRAPH_CLONE", "CUDA graph clone"},
    {98, "TRACE_PROCESS_EVENT_OPENCL", "OpenCL event"},
    {99, "TRACE_PROCESS_EVENT_OPENCL_START", "OpenCL start"},
    {100, "TRACE_PROCESS_EVENT_OPENCL_FINISH", "OpenCL finish"},
    {101, "TRACE_PROCESS_EVENT_OPENCL_INIT_ERROR", "OpenCL Init error"},
    {102, "TRACE_PROCESS_EVENT_CUDA_JIT", "CUDA JIT"},
    {103, "TRACE_PROCESS_EVENT_CUDA_OVERHEAD", "CUDA overhead"},
    {104, "TRACE_PROCESS_EVENT_OPENXR", "OpenXR event"},
    {105, "TRACE_PROCESS_EVENT_OPENXR_START", "OpenXR start"},
    {106, "TRACE_PROCESS_EVENT_OPENXR_FINISH", "OpenXR finish"},
    {107, "TRACE_PROCESS_EVENT_SYSCALL", "Syscall"},
    {108, "TRACE_PROCESS_EVENT_TEGRA_INTERNAL", "Tegra Internal API"},
    {109, "TRACE_PROCESS_EVENT_TEGRA_INTERNAL_START", "Tegra Internal API start"},
    {110, "TRACE_PROCESS_EVENT_TEGRA_INTERNAL_FINISH", "Tegra Internal API finish"},
    {111, "TRACE_PROCESS_EVENT_CUDA_GRAPH_EXEC_NODE_SET_PARAMS", "CUDA graph exec-node set params"},
};

constexpr EnumRow kNsysGenericEventSourceRows[] = {
    {0, "NotSpecified", "Not Specified"},
    {1, "ClockMonotonicRaw", "Clock Monotoic Raw"},
    {2, "CntVct", "Counter-Timer Virtual Count Register"},
    {3, "SessionNs", "Session Nanoseconds"},
};

constexpr EnumRow kNsysGenericEventGroupRows[] = {
    {0, "Unknown", "Unknown"},
    {1, "FTrace", "FTrace"},
    {2, "NvMedia", "NV Media"},
    {3, "Hypervisor", "Hypervisor"},
    {4, "ETW", "ETW"},
};

constexpr EnumRow kNsysGenericEventFieldTypeRows[] = {
    {0, "Signed", "Signed Integer"},
    {1, "Unsigned", "Unsigned Integer"},
    {2, "Float", "Float"},
    {3, "Double", "Double"},
};

constexpr EnumRow kNsysGenericEventFieldEtwPropertyRows[] = {
    {1, "PropertyStruct", "Struct"},
    {2, "PropertyParamLength", "Param Length"},
    {4, "PropertyParamCount", "Param Count"},
    {8, "PropertyWBEMXmlFragment", "WBEM XML Fragment"},
    {16, "PropertyParamFixedLength", "Param Fixed Length"},
    {32, "PropertyParamFixedCount", "Param Fixed Count"},
    {64, "PropertyHasTags", "Has tags"},
    {128, "PropertyHasCustomSchema", "Has Custom Schema"},
};

constexpr EnumRow kNsysGenericEventFieldEtwTypeRows[] = {
    {0, "TDH_INTYPE_NULL", "NULL"},
    {1, "TDH_INTYPE_UNICODESTRING", "Unicode String"},
    {2, "TDH_INTYPE_ANSISTRING", "ANSI String"},
    {3, "TDH_INTYPE_INT8", "int8"},
    {4, "TDH_INTYPE_UINT8", "uint8"},
    {5, "TDH_INTYPE_INT16", "int16"},
    {6, "TDH_INTYPE_UINT16", "uint16"},
    {7, "TDH_INTYPE_INT32", "int32"},
    {8, "TDH_INTYPE_UINT32", "uint32"},
    {9, "TDH_INTYPE_INT64", "int64"},
    {10, "TDH_INTYPE_UINT64", "uint64"},
    {11, "TDH_INTYPE_FLOAT", "float"},
    {12, "TDH_INTYPE_DOUBLE", "double"},
    {13, "TDH_INTYPE_BOOLEAN", "boolean"},
    {14, "TDH_INTYPE_BINARY", "binary data"},
    {15, "TDH_INTYPE_GUID", "GUID"},
    {16, "TDH_INTYPE_POINTER", "Pointer"},
    {17, "TDH_INTYPE_FILETIME", "File-time"},
    {18, "TDH_INTYPE_SYSTEMTIME", "System-time"},
    {19, "TDH_INTYPE_SID", "SID"},
    {20, "TDH_INTYPE_HEXINT32", "Hex int32"},
    {21, "TDH_INTYPE_HEXINT64", "Hex int64"},
};

constexpr EnumRow kNsysGenericEventFieldEtwFlagsRows[] = {
    {1, "EVENTMAP_INFO_FLAG_MANIFEST_VALUEMAP", "Manifest Value Map"},
    {2, "EVENTMAP_INFO_FLAG_MANIFEST_BITMAP", "Manifest Bitmap"},
    {4, "EVENTMAP_INFO_FLAG_MANIFEST_PATTERNMAP", "Manifest Pattern Map"},
    {8, "EVENTMAP_INFO_FLAG_WBEM_VALUEMAP", "WBEM Value Map"},
    {16, "EVENTMAP_INFO_FLAG_WBEM_BITMAP", "WBEM Bitmap"},
    {32, "EVENTMAP_INFO_FLAG_WBEM_FLAG", "WBEM Flag"},
    {64, "EVENTMAP_INFO_FLAG_WBEM_NO_MAP", "WBEM No Map"},
};

constexpr EnumRow kCudaMemcpyOperRows[] = {
    {0, "CUDA_MEMCPY_KIND_UNKNOWN", "Unknown"},
    {1, "CUDA_MEMCPY_KIND_HTOD", "Host-to-Device"},
    {2, "CUDA_MEMCPY_KIND_DTOH", "Device-to-Host"},
    {3, "CUDA_MEMCPY_KIND_HTOA", "Host-to-Array"},
    {4, "CUDA_MEMCPY_KIND_ATOH", "Array-to-Host"},
    {5, "CUDA_MEMCPY_KIND_ATOA", "Array-to-Array"},
    {6, "CUDA_MEMCPY_KIND_ATOD", "Array-to-Device"},
    {7, "CUDA_MEMCPY_KIND_DTOA", "Device-to-Array"},
    {8, "CUDA_MEMCPY_KIND_DTOD", "Device-to-Device"},
    {9, "CUDA_MEMCPY_KIND_HTOH", "Host-to-Host"},
    {10, "CUDA_MEMCPY_KIND_PTOP", "Peer-to-Peer"},
    {11, "CUDA_MEMCPY_KIND_UVM_HTOD", "Unified Host-to-Device"},
    {12, "CUDA_MEMCPY_KIND_UVM_DTOH", "Unified Device-to-Host"},
    {13, "CUDA_MEMCPY_KIND_UVM_DTOD", "Unified Device-to-Device"},
};

constexpr EnumRow kCudaMemKindRows[] = {
    {0, "CUDA_MEMOPR_MEMORY_KIND_PAGEABLE", "Pageable"},
    {1, "CUDA_MEMOPR_MEMORY_KIND_PINNED", "Pinned"},
    {2, "CUDA_MEMOPR_MEMORY_KIND_DEVICE", "Device"},
    {3, "CUDA_MEMOPR_MEMORY_KIND_ARRAY", "Array"},
    {4, "CUDA_MEMOPR_MEMORY_KIND_MANAGED", "Managed"},
    {5, "CUDA_MEMOPR_MEMORY_KIND_DEVICE_STATIC", "Device Static"},
    {6, "CUDA_MEMOPR_MEMORY_KIND_MANAGED_STATIC", "Managed Static"},
    {7, "CUDA_MEMOPR_MEMORY_KIND_UNKNOWN", "Unknown"},
};

constexpr EnumRow kCudaMempoolTypeRows[] = {
    {0, "CUPTI_ACTIVITY_MEMORY_POOL_TYPE_INVALID", "Invalid"},
    {1, "CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL", "Local"},
    {2, "CUPTI_ACTIVITY_MEMORY_POOL_TYPE_IMPORTED", "Imported"},
};

constexpr EnumRow kCudaMempoolOperRows[] = {
    {0, "CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_INVALID", "Invalid"},
    {1, "CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED", "Created"},
    {2, "CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_DESTROYED", "Destroyed"},
    {3, "CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED", "Trimmed"},
};

constexpr EnumRow kCudaDevMemEventOperRows[] = {
    {0, "CUDA_DEV_MEM_EVENT_OPR_ALLOCATION", "Allocation"},
    {1, "CUDA_DEV_MEM_EVENT_OPR_DEALLOCATION", "Deallocation"},
};

constexpr EnumRow kCudaKernelLaunchTypeRows[] = {
    {0, "CUDA_KERNEL_LAUNCH_TYPE_UNKNOWN", "Unknown"},
    {1, "CUDA_KERNEL_LAUNCH_TYPE_REGULAR", "Regular"},
    {2, "CUDA_KERNEL_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE", "Coop Single Device"},
    {3, "CUDA_KERNEL_LAUNCH_TYPE_COOPERATIVE_MULTI_DEVICE", "Coop Multi Device"},
};

constexpr EnumRow kCudaSharedMemLimitConfigRows[] = {
    {0, "CUDA_SHARED_MEM_LIMIT_DEFAULT", "Default"},
    {1, "CUDA_SHARED_MEM_LIMIT_OPTIN", "Opt in"},
};

constexpr EnumRow kCudaUnifMemMigrationRows[] = {
    {0, "CUDA_UNIFIED_MEMORY_MIGRATION_CAUSE_UNKNOWN", "Unknown"},
    {1, "CUDA_UNIFIED_MEMORY_MIGRATION_CAUSE_USER", "User prefetch"},
    {2, "CUDA_UNIFIED_MEMORY_MIGRATION_CAUSE_COHERENCE", "Page fault"},
    {3, "CUDA_UNIFIED_MEMORY_MIGRATION_CAUSE_PREFETCH", "Speculative prefecth"},
    {4, "CUDA_UNIFIED_MEMORY_MIGRATION_CAUSE_EVICTION", "Eviction"},
    {5, "CUDA_UNIFIED_MEMORY_MIGRATION_CAUSE_ACCESS_COUNTERS", "Access counters"},
};

constexpr EnumRow kCudaUnifMemAccessTypeRows[] = {
    {0, "CUPTI_ACTIVITY_UNIFIED_MEMORY_ACCESS_TYPE_UNKNOWN", "Unknown"},
    {1, "CUPTI_ACTIVITY_UNIFIED_MEMORY_ACCESS_TYPE_READ", "Read"},
    {2, "CUPTI_ACTIVITY_UNIFIED_MEMORY_ACCESS_TYPE_WRITE", "Write"},
    {3, "CUPTI_ACTIVITY_UNIFIED_MEMORY_ACCESS_TYPE_ATOMIC", "Atomic"},
    {4, "CUPTI_ACTIVITY_UNIFIED_MEMORY_ACCESS_TYPE_PREFETCH", "Prefetch"},
};

constexpr EnumRow kCudaFuncCacheConfigRows[] = {
    {0, "CU_FUNC_CACHE_PREFER_NONE", "None"},
    {1, "CU_FUNC_CACHE_PREFER_SHARED", "Shared"},
    {2, "CU_FUNC_CACHE_PREFER_L1", "L1"},
    {3, "CU_FUNC_CACHE_PREFER_EQUAL", "Equal"},
};

constexpr EnumRow kCuptiStreamTypeRows[] = {
    {0, "CUPTI_ACTIVITY_STREAM_CREATE_FLAG_UNKNOWN", "Unknown stream type"},
    {1, "CUPTI_ACTIVITY_STREAM_CREATE_FLAG_DEFAULT", "Default stream"},
    {2, "CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NON_BLOCKING", "Non-blocking stream"},
    {3, "CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NULL", "Null stream"},
};

constexpr EnumRow kCuptiSyncTypeRows[] = {
    {0, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_UNKNOWN", "Unknown"},
    {1, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE", "Event sync"},
    {2, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT", "Stream wait sync"},
    {3, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE", "Stream sync"},
    {4, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE", "Context sync"},
};

constexpr EnumRow kCuptiOverheadTypeRows[] = {
    {0, "OVERHEAD_UNDEFINED", "Undefined"},
    {1, "OVERHEAD_UNKNOWN", "Unknown"},
    {2, "OVERHEAD_DRIVER_COMPILER", "Driver JIT compiler (CUDA)"},
    {3, "OVERHEAD_CUPTI_BUFFER_FLUSH", "Buffer flush (Profiler)"},
    {4, "OVERHEAD_CUPTI_INSTRUMENTATION", "Instrumentation (Profiler)"},
    {5, "OVERHEAD_CUPTI_RESOURCE", "Resource creation/destruction (Profiler)"},
    {6, "OVERHEAD_RUNTIME_TRIGGERED_MODULE_LOADING", "Runtime module loading (CUDA)"},
    {7, "OVERHEAD_LAZY_FUNCTION_LOADING", "Lazy function loading (CUDA)"},
    {8, "OVERHEAD_COMMAND_BUFFER_FULL", "Command buffer full (CUDA)"},
};

constexpr EnumRow kDiagnosticSeverityLevelRows[] = {
    {0, "UnknownLevel", "Unknown"},
    {1, "Info", "Info"},
    {2, "Warning", "Warning"},
    {3, "Error", "Error"},
    {4, "Verbose", "Verbose"},
};

constexpr EnumRow kDiagnosticSourceTypeRows[] = {
    {0, "UnknownSource", "Unknown source"},
    {1, "Injection", "Injection"},
    {2, "Daemon", "Daemon"},
    {3, "Analysis", "Analysis"},
};

constexpr EnumRow kDiagnosticTimestampSourceRows[] = {
    {0, "UnknownTimestamp", "Unknown timestamp"},
    {1, "TargetTimestamp", "Target timestamp"},
    {2, "HostTimestamp", "Host timestamp"},
};

// Written only by exports that have CPU samples (COMPOSITE_EVENTS.threadState); rows as in the real
// 3.24.0 export (shared/reference) and the 3.16.1 export of nsys_tables.cc group 4.
constexpr EnumRow kSamplingThreadStateRows[] = {
    {0, "Unknown", "Unknown"},
    {1, "Running", "Running"},
    {2, "Interruptible", "Interruptible"},
    {3, "Uninterruptible", "Uninterruptible"},
    {4, "Stopped", "Stopped"},
    {5, "Terminated", "Terminated"},
    {6, "Unscheduled", "Unscheduled"},
    {7, "Waiting", "Waiting"},
    {8, "OSRuntime", "OS runtime"},
    {9, "Initialized", "Initialized"},
    {10, "Transition", "Transition"},
};
constexpr EnumTable kSamplingThreadState = {"ENUM_SAMPLING_THREAD_STATE", kSamplingThreadStateRows};

constexpr EnumTable kEnumTables[] = {
    {"ENUM_NSYS_EVENT_TYPE", kNsysEventTypeRows},
    {"ENUM_NSYS_EVENT_CLASS", kNsysEventClassRows},
    {"ENUM_NSYS_GENERIC_EVENT_SOURCE", kNsysGenericEventSourceRows},
    {"ENUM_NSYS_GENERIC_EVENT_GROUP", kNsysGenericEventGroupRows},
    {"ENUM_NSYS_GENERIC_EVENT_FIELD_TYPE", kNsysGenericEventFieldTypeRows},
    {"ENUM_NSYS_GENERIC_EVENT_FIELD_ETW_PROPERTY", kNsysGenericEventFieldEtwPropertyRows},
    {"ENUM_NSYS_GENERIC_EVENT_FIELD_ETW_TYPE", kNsysGenericEventFieldEtwTypeRows},
    {"ENUM_NSYS_GENERIC_EVENT_FIELD_ETW_FLAGS", kNsysGenericEventFieldEtwFlagsRows},
    {"ENUM_CUDA_MEMCPY_OPER", kCudaMemcpyOperRows},
    {"ENUM_CUDA_MEM_KIND", kCudaMemKindRows},
    {"ENUM_CUDA_MEMPOOL_TYPE", kCudaMempoolTypeRows},
    {"ENUM_CUDA_MEMPOOL_OPER", kCudaMempoolOperRows},
    {"ENUM_CUDA_DEV_MEM_EVENT_OPER", kCudaDevMemEventOperRows},
    {"ENUM_CUDA_KERNEL_LAUNCH_TYPE", kCudaKernelLaunchTypeRows},
    {"ENUM_CUDA_SHARED_MEM_LIMIT_CONFIG", kCudaSharedMemLimitConfigRows},
    {"ENUM_CUDA_UNIF_MEM_MIGRATION", kCudaUnifMemMigrationRows},
    {"ENUM_CUDA_UNIF_MEM_ACCESS_TYPE", kCudaUnifMemAccessTypeRows},
    {"ENUM_CUDA_FUNC_CACHE_CONFIG", kCudaFuncCacheConfigRows},
    {"ENUM_CUPTI_STREAM_TYPE", kCuptiStreamTypeRows},
    {"ENUM_CUPTI_SYNC_TYPE", kCuptiSyncTypeRows},
    {"ENUM_CUPTI_OVERHEAD_TYPE", kCuptiOverheadTypeRows},
    {"ENUM_DIAGNOSTIC_SEVERITY_LEVEL", kDiagnosticSeverityLevelRows},
    {"ENUM_DIAGNOSTIC_SOURCE_TYPE", kDiagnosticSourceTypeRows},
    {"ENUM_DIAGNOSTIC_TIMESTAMP_SOURCE", kDiagnosticTimestampSourceRows},
};
// clang-format on

}  // namespace

const EnumTable& SamplingThreadStateEnum() {
  return kSamplingThreadState;
}

std::span<const EnumTable> EnumTables() {
  return kEnumTables;
}

}  // namespace gt::nsys
