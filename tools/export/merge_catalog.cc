#include "tools/export/merge_catalog.h"

#include <array>
#include <cctype>
#include <string>

namespace gt::exporter {
namespace {

using K = ColumnKind;

// clang-format off
constexpr ColumnRule kNone[] = {{"", K::kPlain}};  // placeholder for tables without rules
constexpr ColumnRule kAnalysisFile[] = {{"id", K::kPlain}, {"contentId", K::kPlain}, {"globalPid", K::kGlobalId}};
constexpr ColumnRule kProcessStreams[] = {{"globalPid", K::kGlobalId}, {"filenameId", K::kStringId},
                                          {"contentId", K::kStringId}};
constexpr ColumnRule kPayloadSchemas[] = {{"domainId", K::kPlain}, {"schemaId", K::kPlain}};
constexpr ColumnRule kCudaEvent[] = {{"timestamp", K::kTimeOrZero}, {"deviceId", K::kGpuId}, {"contextId", K::kPlain},
                                     {"greenContextId", K::kPlain}, {"streamId", K::kPlain},
                                     {"correlationId", K::kPlain}, {"globalPid", K::kGlobalId},
                                     {"eventId", K::kPlain}, {"eventSyncId", K::kPlain}};
constexpr ColumnRule kDiagnostic[] = {{"timestamp", K::kTime}, {"timestampType", K::kPlain},
                                     {"globalPid", K::kGlobalId}};
constexpr ColumnRule kSync[] = {{"start", K::kTime}, {"end", K::kTime}, {"deviceId", K::kGpuId},
                                {"contextId", K::kPlain}, {"greenContextId", K::kPlain}, {"streamId", K::kPlain},
                                {"correlationId", K::kPlain}, {"globalPid", K::kGlobalId}, {"eventId", K::kPlain},
                                {"eventSyncId", K::kPlain}};
constexpr ColumnRule kMemset[] = {{"start", K::kTime}, {"end", K::kTime}, {"deviceId", K::kGpuId},
                                  {"contextId", K::kPlain}, {"greenContextId", K::kPlain}, {"streamId", K::kPlain},
                                  {"correlationId", K::kPlain}, {"globalPid", K::kGlobalId},
                                  {"graphNodeId", K::kPlain}};
constexpr ColumnRule kMemcpy[] = {{"start", K::kTime}, {"end", K::kTime}, {"deviceId", K::kGpuId},
                                  {"contextId", K::kPlain}, {"greenContextId", K::kPlain}, {"streamId", K::kPlain},
                                  {"correlationId", K::kPlain}, {"globalPid", K::kGlobalId},
                                  {"deprecatedSrcId", K::kPlain}, {"srcDeviceId", K::kGpuId},
                                  {"srcContextId", K::kPlain}, {"dstDeviceId", K::kGpuId}, {"dstContextId", K::kPlain},
                                  {"graphNodeId", K::kPlain}};
constexpr ColumnRule kGraphTrace[] = {{"start", K::kTime}, {"end", K::kTime}, {"deviceId", K::kGpuId},
                                      {"contextId", K::kPlain}, {"greenContextId", K::kPlain},
                                      {"streamId", K::kPlain}, {"correlationId", K::kPlain},
                                      {"globalPid", K::kGlobalId}, {"graphId", K::kPlain}, {"graphExecId", K::kPlain}};
constexpr ColumnRule kKernel[] = {{"start", K::kTime}, {"end", K::kTime}, {"deviceId", K::kGpuId},
                                  {"contextId", K::kPlain}, {"greenContextId", K::kPlain}, {"streamId", K::kPlain},
                                  {"correlationId", K::kPlain}, {"globalPid", K::kGlobalId},
                                  {"demangledName", K::kStringId}, {"shortName", K::kStringId},
                                  {"mangledName", K::kStringId}, {"gridId", K::kPlain}, {"graphNodeId", K::kPlain},
                                  {"graphId", K::kPlain}};
constexpr ColumnRule kOverhead[] = {{"start", K::kTime}, {"end", K::kTime}, {"globalTid", K::kGlobalId},
                                    {"correlationId", K::kPlain}, {"nameId", K::kStringId}};
constexpr ColumnRule kProfilerOverhead[] = {{"start", K::kTime}, {"end", K::kTime}, {"globalTid", K::kGlobalId},
                                            {"nameId", K::kStringId}};
constexpr ColumnRule kProcesses[] = {{"globalPid", K::kGlobalId}, {"pid", K::kPlain}};
constexpr ColumnRule kRuntime[] = {{"start", K::kTime}, {"end", K::kTime}, {"globalTid", K::kGlobalId},
                                   {"correlationId", K::kPlain}, {"nameId", K::kStringId},
                                   {"callchainId", K::kCallchainId}};
constexpr ColumnRule kNvtx[] = {{"start", K::kTime}, {"end", K::kTime}, {"rangeId", K::kPlain},
                                {"globalTid", K::kGlobalId}, {"endGlobalTid", K::kGlobalId},
                                {"textId", K::kStringId}, {"domainId", K::kPlain}, {"jsonTextId", K::kStringId}};
constexpr ColumnRule kThreadNames[] = {{"nameId", K::kStringId}, {"globalTid", K::kGlobalId}};
constexpr ColumnRule kCudaStream[] = {{"streamId", K::kPlain}, {"hwId", K::kHostIndex}, {"vmId", K::kPlain},
                                      {"processId", K::kPlain}, {"contextId", K::kPlain}};
constexpr ColumnRule kCudaDevice[] = {{"gpuId", K::kGpuId}, {"cudaId", K::kGpuId}, {"pid", K::kPlain},
                                      {"uuid", K::kPlain}};
constexpr ColumnRule kContextInfo[] = {{"nullStreamId", K::kPlain}, {"hwId", K::kHostIndex}, {"vmId", K::kPlain},
                                       {"processId", K::kPlain}, {"deviceId", K::kGpuId}, {"contextId", K::kPlain},
                                       {"parentContextId", K::kPlain}};
constexpr ColumnRule kGraphEvents[] = {{"start", K::kTime}, {"end", K::kTime}, {"globalTid", K::kGlobalId},
                                       {"nameId", K::kStringId}, {"graphId", K::kPlain},
                                       {"originalGraphId", K::kPlain}, {"graphExecId", K::kPlain}};
// OSRT_API.argumentsId is always 0 (no arguments are written); callchainId 0 means no stack.
constexpr ColumnRule kOsrt[] = {{"start", K::kTime}, {"end", K::kTime}, {"globalTid", K::kGlobalId},
                                {"nameId", K::kStringId}, {"callchainId", K::kOsrtCallchainId},
                                {"argumentsId", K::kPlain}};
constexpr ColumnRule kOsrtCallchains[] = {{"id", K::kOsrtCallchainId}, {"symbol", K::kStringId},
                                          {"module", K::kStringId}};
constexpr ColumnRule kCallchains[] = {{"id", K::kCallchainId}, {"symbol", K::kStringId}, {"module", K::kStringId}};
// CPU samples: ids dense per database, so each source's are offset; ENUM_SAMPLING_THREAD_STATE is
// written by the merge (db_merge.cc) when a source has samples.
constexpr ColumnRule kCompositeEvents[] = {{"id", K::kSampleId}, {"start", K::kTime}, {"globalTid", K::kGlobalId}};
constexpr ColumnRule kSamplingCallchains[] = {
    {"id", K::kSampleId}, {"symbol", K::kStringId}, {"module", K::kStringId}};
// GPU_METRICS.typeId = <hw:8><vm:8><source:16><type:32>: host bits like a global id.
constexpr ColumnRule kGpuMetrics[] = {{"rawTimestamp", K::kPlain}, {"timestamp", K::kTime},
                                      {"typeId", K::kGlobalId}, {"metricId", K::kPlain}};
constexpr ColumnRule kGpuMetricsInfo[] = {{"typeId", K::kGlobalId}, {"sourceId", K::kPlain},
                                          {"metricId", K::kPlain}};
constexpr ColumnRule kMemoryUsage[] = {{"start", K::kTime}, {"globalPid", K::kGlobalId}, {"deviceId", K::kGpuId},
                                       {"contextId", K::kPlain}, {"correlationId", K::kPlain},
                                       {"streamId", K::kPlain}, {"importedMemoryPoolProcessId", K::kPlain}};
constexpr ColumnRule kMemoryPool[] = {{"start", K::kTime}, {"globalPid", K::kGlobalId}, {"deviceId", K::kGpuId},
                                      {"correlationId", K::kPlain}};
constexpr ColumnRule kDevices[] = {{"globalPid", K::kGlobalId}, {"pid", K::kPlain}, {"cudaId", K::kPlain},
                                   {"deviceId", K::kGpuId}};
constexpr ColumnRule kMpiRanks[] = {{"globalTid", K::kGlobalId}};
constexpr ColumnRule kNvtxCudaDevice[] = {{"hwId", K::kHostIndex}, {"vmId", K::kPlain}, {"deviceId", K::kPlain}};
constexpr ColumnRule kNcclComms[] = {{"globalPid", K::kGlobalId}, {"commIndex", K::kPlain}, {"commId", K::kPlain},
                                     {"initTime", K::kTime}, {"finalizeTime", K::kTime},
                                     {"globalTid", K::kGlobalId}};
constexpr ColumnRule kNcclEvents[] = {{"globalPid", K::kGlobalId}, {"eventId", K::kPlain},
                                      {"commIndex", K::kPlain}, {"start", K::kTime}, {"end", K::kTime},
                                      {"globalTid", K::kGlobalId}, {"endGlobalTid", K::kGlobalId},
                                      {"parentId", K::kPlain}, {"groupId", K::kPlain}, {"channelId", K::kPlain},
                                      {"gpuStart", K::kTime}, {"gpuEnd", K::kTime},
                                      {"gpuStartRaw", K::kPlain}, {"gpuEndRaw", K::kPlain},
                                      {"proxyPid", K::kPlain}, {"isSend", K::kPlain}};
constexpr ColumnRule kNcclStates[] = {{"globalPid", K::kGlobalId}, {"eventId", K::kPlain},
                                      {"timestamp", K::kTime}, {"globalTid", K::kGlobalId},
                                      {"appendedProxyOps", K::kPlain}};
constexpr ColumnRule kNcclOps[] = {{"globalPid", K::kGlobalId}, {"eventId", K::kPlain}, {"commId", K::kPlain},
                                   {"apiStart", K::kTime}, {"apiEnd", K::kTime}, {"apiGlobalTid", K::kGlobalId},
                                   {"enqueueStart", K::kTime}, {"enqueueEnd", K::kTime},
                                   {"globalTid", K::kGlobalId}, {"gpuStart", K::kTime}, {"gpuEnd", K::kTime},
                                   {"proxyEnd", K::kTime}, {"sendBytes", K::kPlain}};
// baseOffset / correction are differences of clocks, not times; windowStart/End are times.
constexpr ColumnRule kNcclClock[] = {{"globalPid", K::kGlobalId}, {"windowStart", K::kTime},
                                     {"windowEnd", K::kTime}, {"baseOffset", K::kPlain},
                                     {"correction", K::kPlain}};
constexpr ColumnRule kNcclPools[] = {{"globalPid", K::kGlobalId}};
// GPU metrics (gpu_metrics_export.cc): typeId as in GPU_METRICS; intervals and offsets are durations.
constexpr ColumnRule kMetricsDevices[] = {{"typeId", K::kGlobalId}, {"globalPid", K::kGlobalId},
                                          {"gpuId", K::kGpuId}, {"cudaId", K::kPlain},
                                          {"samplingIntervalNs", K::kPlain}, {"clockOffsetNs", K::kPlain}};
constexpr ColumnRule kMetricsConfig[] = {{"typeId", K::kGlobalId}, {"globalPid", K::kGlobalId},
                                         {"cudaId", K::kPlain}, {"metricId", K::kPlain}};
constexpr ColumnRule kRangeMetrics[] = {{"globalPid", K::kGlobalId}, {"globalTid", K::kGlobalId},
                                        {"gpuId", K::kGpuId}, {"cudaId", K::kPlain}, {"contextId", K::kPlain},
                                        {"passId", K::kPlain}, {"passStart", K::kTime}, {"passEnd", K::kTime},
                                        {"correlationId", K::kPlain}, {"kernelStart", K::kTime},
                                        {"kernelEnd", K::kTime}, {"kernelName", K::kStringId}};

template <size_t N>
constexpr std::span<const ColumnRule> R(const ColumnRule (&a)[N]) {
  return std::span<const ColumnRule>(a, N);
}
constexpr std::span<const ColumnRule> kEmpty = std::span<const ColumnRule>(kNone, 0);

constexpr TableRule kRules[] = {
    {"StringIds", TableMode::kSpecial, "", kEmpty},
    {"ANALYSIS_FILE", TableMode::kCopy, "globalPid", R(kAnalysisFile)},
    {"ProcessStreams", TableMode::kCopy, "globalPid", R(kProcessStreams)},
    {"NVTX_PAYLOAD_SCHEMAS", TableMode::kCopy, "", R(kPayloadSchemas)},
    {"NVTX_PAYLOAD_SCHEMA_ENTRIES", TableMode::kCopy, "", R(kPayloadSchemas)},
    {"TARGET_INFO_SYSTEM_ENV", TableMode::kSpecial, "", kEmpty},
    {"TARGET_INFO_SESSION_START_TIME", TableMode::kSpecial, "", kEmpty},
    {"ANALYSIS_DETAILS", TableMode::kSpecial, "", kEmpty},
    {"CUPTI_ACTIVITY_KIND_CUDA_EVENT", TableMode::kCopy, "globalPid", R(kCudaEvent)},
    {"DIAGNOSTIC_EVENT", TableMode::kCopy, "globalPid", R(kDiagnostic)},
    {"CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", TableMode::kCopy, "globalPid", R(kSync)},
    {"PROFILER_OVERHEAD", TableMode::kCopy, "globalTid", R(kProfilerOverhead)},
    {"CUPTI_ACTIVITY_KIND_OVERHEAD", TableMode::kCopy, "globalTid", R(kOverhead)},
    {"CUPTI_ACTIVITY_KIND_MEMSET", TableMode::kCopy, "globalPid", R(kMemset)},
    {"CUPTI_ACTIVITY_KIND_MEMCPY", TableMode::kCopy, "globalPid", R(kMemcpy)},
    {"CUPTI_ACTIVITY_KIND_KERNEL", TableMode::kCopy, "globalPid", R(kKernel)},
    {"PROCESSES", TableMode::kCopy, "globalPid", R(kProcesses)},
    {"CUPTI_ACTIVITY_KIND_RUNTIME", TableMode::kCopy, "globalTid", R(kRuntime)},
    {"NVTX_EVENTS", TableMode::kCopy, "globalTid", R(kNvtx)},
    {"ThreadNames", TableMode::kCopy, "globalTid", R(kThreadNames)},
    {"TARGET_INFO_CUDA_STREAM", TableMode::kCopy, "", R(kCudaStream)},
    {"META_DATA_CAPTURE", TableMode::kSpecial, "", kEmpty},
    {"META_DATA_EXPORT", TableMode::kSpecial, "", kEmpty},
    {"TARGET_INFO_GPU", TableMode::kSpecial, "", kEmpty},
    {"TARGET_INFO_CUDA_DEVICE", TableMode::kCopy, "", R(kCudaDevice)},
    {"TARGET_INFO_CUDA_CONTEXT_INFO", TableMode::kCopy, "", R(kContextInfo)},
    {"CUPTI_ACTIVITY_KIND_GRAPH_TRACE", TableMode::kCopy, "globalPid", R(kGraphTrace)},
    {"CUDA_GRAPH_EVENTS", TableMode::kCopy, "globalTid", R(kGraphEvents)},
    {"OSRT_API", TableMode::kCopy, "globalTid", R(kOsrt)},
    {"CUDA_CALLCHAINS", TableMode::kCopy, "", R(kCallchains)},
    {"OSRT_CALLCHAINS", TableMode::kCopy, "", R(kOsrtCallchains)},
    {"COMPOSITE_EVENTS", TableMode::kCopy, "globalTid", R(kCompositeEvents)},
    {"SAMPLING_CALLCHAINS", TableMode::kCopy, "", R(kSamplingCallchains)},
    {"GPU_METRICS", TableMode::kCopy, "typeId", R(kGpuMetrics)},
    {"TARGET_INFO_GPU_METRICS", TableMode::kCopy, "", R(kGpuMetricsInfo)},
    {"CUDA_GPU_MEMORY_USAGE_EVENTS", TableMode::kCopy, "globalPid", R(kMemoryUsage)},
    {"CUDA_GPU_MEMORY_POOL_EVENTS", TableMode::kCopy, "globalPid", R(kMemoryPool)},
    {"MPI_RANKS", TableMode::kCopy, "globalTid", R(kMpiRanks)},
    {"TARGET_INFO_NVTX_CUDA_DEVICE", TableMode::kCopy, "", R(kNvtxCudaDevice)},
    {"GTRACE_RANKS", TableMode::kSpecial, "", kEmpty},
    {"GTRACE_CLOCK_ALIGNMENT", TableMode::kSpecial, "", kEmpty},
    {"GTRACE_NCCL_COMMUNICATORS", TableMode::kCopy, "globalPid", R(kNcclComms)},
    {"GTRACE_NCCL_EVENTS", TableMode::kCopy, "globalPid", R(kNcclEvents)},
    {"GTRACE_NCCL_EVENT_STATES", TableMode::kCopy, "globalPid", R(kNcclStates)},
    {"GTRACE_NCCL_OPERATIONS", TableMode::kCopy, "globalPid", R(kNcclOps)},
    {"GTRACE_NCCL_GPU_CLOCK", TableMode::kCopy, "globalPid", R(kNcclClock)},
    {"GTRACE_NCCL_POOLS", TableMode::kCopy, "globalPid", R(kNcclPools)},
    {"GTRACE_DEVICES", TableMode::kCopy, "globalPid", R(kDevices)},
    {"GTRACE_GPU_METRICS_DEVICES", TableMode::kCopy, "globalPid", R(kMetricsDevices)},
    {"GTRACE_GPU_METRICS_CONFIG", TableMode::kCopy, "globalPid", R(kMetricsConfig)},
    {"GTRACE_RANGE_METRICS", TableMode::kCopy, "globalPid", R(kRangeMetrics)},
    // Rows of untraced ancestors repeat across databases; db_merge.cc keeps one per process and
    // re-derives tracedAncestorGlobalPid across all merged processes (process_tree_merge.h).
    {"GTRACE_PROCESS_TREE", TableMode::kSpecial, "", kEmpty},
};
constexpr TableRule kEnumRule = {"ENUM_*", TableMode::kSkip, "", kEmpty};
// clang-format on

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

const TableRule* FindTableRule(std::string_view table) {
  if (table.rfind("ENUM_", 0) == 0) return &kEnumRule;
  for (const TableRule& r : kRules) {
    if (r.table == table) return &r;
  }
  return nullptr;
}

std::span<const TableRule> TableRules() { return kRules; }

bool LooksLikeTimeOrId(std::string_view c) {
  std::string lower;
  for (char ch : c) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  static constexpr std::string_view kWords[] = {"start", "end", "time", "timestamp", "global", "id", "pid", "tid"};
  if (lower == "id" || lower == "pid" || lower == "tid") return true;
  for (std::string_view w : kWords) {
    if (w == "id" || w == "pid" || w == "tid") continue;
    if (lower.find(w) != std::string::npos) return true;
  }
  return EndsWith(c, "Id") || EndsWith(c, "Pid") || EndsWith(c, "Tid") || EndsWith(c, "Ns");
}

}  // namespace gt::exporter
