// Every field-number constant of inject/metrics/metrics_fields.h equals the protoc descriptor's, and
// every field of the GPU-metrics messages (and every Chunk field in 100-119) has a constant: a field
// added to metrics.proto without an encoder update fails here.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "gtrace.pb.h"
#include "inject/metrics/metrics_fields.h"

namespace gt {
namespace {

std::map<std::string, std::set<std::string>>& Checked() {
  static std::map<std::string, std::set<std::string>> checked;
  return checked;
}

void ExpectField(const google::protobuf::Descriptor* d, const std::string& name, uint32_t number) {
  const google::protobuf::FieldDescriptor* f = d->FindFieldByName(name);
  ASSERT_NE(f, nullptr) << d->name() << "." << name << " is not in the schema";
  EXPECT_EQ(static_cast<uint32_t>(f->number()), number) << d->name() << "." << name;
  Checked()[d->name()].insert(name);
}

void ExpectAllChecked(const google::protobuf::Descriptor* d) {
  for (int i = 0; i < d->field_count(); ++i) {
    EXPECT_TRUE(Checked()[d->name()].count(d->field(i)->name()))
        << d->name() << "." << d->field(i)->name() << " has no constant";
  }
}

#define EXPECT_FIELD(Message, name, constant) ExpectField(schema::Message::descriptor(), name, constant)

TEST(MetricsFields, ChunkFieldsMatchDescriptor) {
  namespace c = field::chunk;
  EXPECT_FIELD(Chunk, "gpu_metrics_config", c::kGpuMetricsConfig);
  EXPECT_FIELD(Chunk, "gpu_metrics_devices", c::kGpuMetricsDevices);
  EXPECT_FIELD(Chunk, "gpu_metrics_samples", c::kGpuMetricsSamples);
  EXPECT_FIELD(Chunk, "gpu_metrics_losses", c::kGpuMetricsLosses);
  EXPECT_FIELD(Chunk, "range_metrics_configs", c::kRangeMetricsConfigs);
  EXPECT_FIELD(Chunk, "range_metrics_results", c::kRangeMetricsResults);
  const google::protobuf::Descriptor* chunk = schema::Chunk::descriptor();
  for (int i = 0; i < chunk->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* f = chunk->field(i);
    if (f->number() < 100 || f->number() > 119)
      continue;
    EXPECT_TRUE(Checked()["Chunk"].count(f->name())) << "Chunk." << f->name() << " (GPU metrics range) has no constant";
  }
}

TEST(MetricsFields, MessageFieldsMatchDescriptor) {
  {
    namespace f = field::gpu_metrics_config;
    EXPECT_FIELD(GpuMetricsConfig, "devices", f::kDevices);
    EXPECT_FIELD(GpuMetricsConfig, "sampling_interval_ns", f::kSamplingIntervalNs);
    EXPECT_FIELD(GpuMetricsConfig, "set_name", f::kSetName);
    EXPECT_FIELD(GpuMetricsConfig, "ranges", f::kRanges);
    EXPECT_FIELD(GpuMetricsConfig, "local_rank", f::kLocalRank);
    EXPECT_FIELD(GpuMetricsConfig, "local_world_size", f::kLocalWorldSize);
    EXPECT_FIELD(GpuMetricsConfig, "visible_devices", f::kVisibleDevices);
    EXPECT_FIELD(GpuMetricsConfig, "owned_device_ids", f::kOwnedDeviceIds);
    EXPECT_FIELD(GpuMetricsConfig, "owner_rule", f::kOwnerRule);
    EXPECT_FIELD(GpuMetricsConfig, "frequency_hz", f::kFrequencyHz);
    EXPECT_FIELD(GpuMetricsConfig, "cupti_path", f::kCuptiPath);
    ExpectAllChecked(schema::GpuMetricsConfig::descriptor());
  }
  {
    namespace f = field::gpu_metric;
    EXPECT_FIELD(GpuMetric, "index", f::kIndex);
    EXPECT_FIELD(GpuMetric, "key", f::kKey);
    EXPECT_FIELD(GpuMetric, "cupti_name", f::kCuptiName);
    EXPECT_FIELD(GpuMetric, "label", f::kLabel);
    EXPECT_FIELD(GpuMetric, "export_unit", f::kExportUnit);
    EXPECT_FIELD(GpuMetric, "export_scale", f::kExportScale);
    ExpectAllChecked(schema::GpuMetric::descriptor());
  }
  {
    namespace f = field::gpu_metric_rejection;
    EXPECT_FIELD(GpuMetricRejection, "key", f::kKey);
    EXPECT_FIELD(GpuMetricRejection, "cupti_name", f::kCuptiName);
    EXPECT_FIELD(GpuMetricRejection, "reason", f::kReason);
    ExpectAllChecked(schema::GpuMetricRejection::descriptor());
  }
  {
    namespace f = field::gpu_metrics_device;
    EXPECT_FIELD(GpuMetricsDevice, "device_id", f::kDeviceId);
    EXPECT_FIELD(GpuMetricsDevice, "uuid", f::kUuid);
    EXPECT_FIELD(GpuMetricsDevice, "name", f::kName);
    EXPECT_FIELD(GpuMetricsDevice, "chip_name", f::kChipName);
    EXPECT_FIELD(GpuMetricsDevice, "pci_bus_id", f::kPciBusId);
    EXPECT_FIELD(GpuMetricsDevice, "state", f::kState);
    EXPECT_FIELD(GpuMetricsDevice, "reason", f::kReason);
    EXPECT_FIELD(GpuMetricsDevice, "set_name", f::kSetName);
    EXPECT_FIELD(GpuMetricsDevice, "metrics", f::kMetrics);
    EXPECT_FIELD(GpuMetricsDevice, "rejected", f::kRejected);
    EXPECT_FIELD(GpuMetricsDevice, "sampling_interval_ns", f::kSamplingIntervalNs);
    EXPECT_FIELD(GpuMetricsDevice, "trigger_mode", f::kTriggerMode);
    EXPECT_FIELD(GpuMetricsDevice, "sampling_interval_raw", f::kSamplingIntervalRaw);
    EXPECT_FIELD(GpuMetricsDevice, "hardware_buffer_bytes", f::kHardwareBufferBytes);
    EXPECT_FIELD(GpuMetricsDevice, "max_samples", f::kMaxSamples);
    EXPECT_FIELD(GpuMetricsDevice, "clock_offset_ns", f::kClockOffsetNs);
    EXPECT_FIELD(GpuMetricsDevice, "ts_ns", f::kTsNs);
    EXPECT_FIELD(GpuMetricsDevice, "passes", f::kPasses);
    EXPECT_FIELD(GpuMetricsDevice, "sampler_tid", f::kSamplerTid);
    ExpectAllChecked(schema::GpuMetricsDevice::descriptor());
  }
  {
    namespace f = field::gpu_metrics_sample;
    EXPECT_FIELD(GpuMetricsSample, "device_id", f::kDeviceId);
    EXPECT_FIELD(GpuMetricsSample, "end_delta_ns", f::kEndDeltaNs);
    EXPECT_FIELD(GpuMetricsSample, "duration_ns", f::kDurationNs);
    EXPECT_FIELD(GpuMetricsSample, "values", f::kValues);
    ExpectAllChecked(schema::GpuMetricsSample::descriptor());
    // The encoder writes the values packed (proto3's default for repeated scalars).
    EXPECT_TRUE(schema::GpuMetricsSample::descriptor()->FindFieldByName("values")->is_packed());
  }
  {
    namespace f = field::gpu_metrics_loss;
    EXPECT_FIELD(GpuMetricsLoss, "device_id", f::kDeviceId);
    EXPECT_FIELD(GpuMetricsLoss, "ts_ns", f::kTsNs);
    EXPECT_FIELD(GpuMetricsLoss, "dropped_samples", f::kDroppedSamples);
    EXPECT_FIELD(GpuMetricsLoss, "hw_buffer_overflows", f::kHwBufferOverflows);
    EXPECT_FIELD(GpuMetricsLoss, "decode_errors", f::kDecodeErrors);
    ExpectAllChecked(schema::GpuMetricsLoss::descriptor());
  }
  {
    namespace f = field::range_metrics_config;
    EXPECT_FIELD(RangeMetricsConfig, "device_id", f::kDeviceId);
    EXPECT_FIELD(RangeMetricsConfig, "context_id", f::kContextId);
    EXPECT_FIELD(RangeMetricsConfig, "mode", f::kMode);
    EXPECT_FIELD(RangeMetricsConfig, "nvtx_message", f::kNvtxMessage);
    EXPECT_FIELD(RangeMetricsConfig, "nvtx_domain", f::kNvtxDomain);
    EXPECT_FIELD(RangeMetricsConfig, "chip_name", f::kChipName);
    EXPECT_FIELD(RangeMetricsConfig, "metrics", f::kMetrics);
    EXPECT_FIELD(RangeMetricsConfig, "rejected", f::kRejected);
    EXPECT_FIELD(RangeMetricsConfig, "reason", f::kReason);
    EXPECT_FIELD(RangeMetricsConfig, "max_ranges_per_pass", f::kMaxRangesPerPass);
    ExpectAllChecked(schema::RangeMetricsConfig::descriptor());
  }
  {
    namespace f = field::range_metrics_result;
    EXPECT_FIELD(RangeMetricsResult, "device_id", f::kDeviceId);
    EXPECT_FIELD(RangeMetricsResult, "context_id", f::kContextId);
    EXPECT_FIELD(RangeMetricsResult, "mode", f::kMode);
    EXPECT_FIELD(RangeMetricsResult, "range_name", f::kRangeName);
    EXPECT_FIELD(RangeMetricsResult, "range_index", f::kRangeIndex);
    EXPECT_FIELD(RangeMetricsResult, "pass_id", f::kPassId);
    EXPECT_FIELD(RangeMetricsResult, "pass_start_ns", f::kPassStartNs);
    EXPECT_FIELD(RangeMetricsResult, "pass_end_ns", f::kPassEndNs);
    EXPECT_FIELD(RangeMetricsResult, "tid", f::kTid);
    EXPECT_FIELD(RangeMetricsResult, "values", f::kValues);
    EXPECT_FIELD(RangeMetricsResult, "ranges_dropped", f::kRangesDropped);
    ExpectAllChecked(schema::RangeMetricsResult::descriptor());
  }
}

TEST(MetricsFields, EnumsMatchDescriptor) {
  namespace e = field::enums;
  EXPECT_EQ(e::kGpuMetricsSampling, static_cast<uint32_t>(schema::GPU_METRICS_STATE_SAMPLING));
  EXPECT_EQ(e::kGpuMetricsNotOwned, static_cast<uint32_t>(schema::GPU_METRICS_STATE_NOT_OWNED));
  EXPECT_EQ(e::kGpuMetricsUnavailable, static_cast<uint32_t>(schema::GPU_METRICS_STATE_UNAVAILABLE));
  EXPECT_EQ(e::kGpuMetricsFailed, static_cast<uint32_t>(schema::GPU_METRICS_STATE_FAILED));
  EXPECT_EQ(e::kGpuMetricsStopped, static_cast<uint32_t>(schema::GPU_METRICS_STATE_STOPPED));
  EXPECT_EQ(e::kRangeModeNvtx, static_cast<uint32_t>(schema::RANGE_METRICS_MODE_NVTX));
  EXPECT_EQ(e::kRangeModeKernel, static_cast<uint32_t>(schema::RANGE_METRICS_MODE_KERNEL));
}

}  // namespace
}  // namespace gt
