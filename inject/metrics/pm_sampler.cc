#include "inject/metrics/pm_sampler.h"

#include <time.h>

#include <cmath>
#include <cstring>

#include "inject/metrics/metrics_fields.h"
#include "inject/rawcap/metrics_capture.h"

namespace gt::metrics {
namespace {

template <typename P>
P Params(size_t size) {
  P p;
  std::memset(&p, 0, sizeof(p));
  p.structSize = size;
  return p;
}

}  // namespace

std::string UnavailableReason(CUptiResult r, const std::string& call) {
  auto from = [&](const char* code) { return std::string(" (") + code + " from " + call + ")"; };
  switch (r) {
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
      return "no permission to use the GPU performance counters" +
             from(r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES ? "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"
                                                           : "CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES") +
             ": run as root or with CAP_SYS_ADMIN (containers: --cap-add SYS_ADMIN), or load the NVIDIA driver with "
             "NVreg_RestrictProfilingToAdminUsers=0 (RmProfilingAdminOnly in /proc/driver/nvidia/params shows the "
             "setting)";
    case CUPTI_ERROR_HARDWARE_BUSY:
    case CUPTI_ERROR_INVALID_OPERATION:
    case CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED:
      return "the GPU performance counters are held by another profiler (DCGM profiling, Nsight Compute, Nsight "
             "Systems --gpu-metrics-devices, or another process sampling this GPU)" +
             from(r == CUPTI_ERROR_HARDWARE_BUSY       ? "CUPTI_ERROR_HARDWARE_BUSY"
                  : r == CUPTI_ERROR_INVALID_OPERATION ? "CUPTI_ERROR_INVALID_OPERATION"
                                                       : "CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED") +
             ": pause DCGM with `dcgmi profile --pause` (resume with `dcgmi profile --resume`) or stop the other "
             "profiler";
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
      return "PM sampling is not supported on a virtual GPU without profiling enabled" +
             from("CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED");
    case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
      return "PM sampling is not supported with confidential computing" +
             from("CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED");
    case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
      return "PM sampling is not supported on CMP devices" + from("CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED");
    case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
      return "PM sampling is not supported on a MIG instance" + from("CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED");
    case CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED:
      return "PM sampling is not supported with SLI" + from("CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED");
    case CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED:
      return "PM sampling is not supported on WSL" + from("CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED");
    case CUPTI_ERROR_NOT_SUPPORTED:
      return "PM sampling is not supported on this device" + from("CUPTI_ERROR_NOT_SUPPORTED");
    case CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED:
      return "PM sampling is not supported on this device" + from("CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED");
    default:
      return {};
  }
}

bool NeedsSysclkTrigger(const std::string& chip) {
  return chip == "GA100" || chip.rfind("TU", 0) == 0 || chip.rfind("GV", 0) == 0;
}

bool PmSampler::Setup(const std::vector<MetricRequest>& requests, uint64_t interval_ns, DeviceInfo* info) {
  auto fail = [&](CUptiResult r, const std::string& call) {
    std::string unavailable = UnavailableReason(r, call);
    info->state = unavailable.empty() ? field::enums::kGpuMetricsFailed : field::enums::kGpuMetricsUnavailable;
    info->reason = unavailable.empty() ? call + " failed with " + api_->ResultName(r) : unavailable;
    Disable();
    return false;
  };
  // Chip name and counter availability (the runtime view: counters another client reserved are
  // marked unavailable in the image, so the selection below takes them into account).
  auto chip = Params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
  chip.deviceIndex = device_id_;
  CUptiResult r = api_->DeviceGetChipName(&chip);
  if (r != CUPTI_SUCCESS || chip.pChipName == nullptr)
    return fail(r, "cuptiDeviceGetChipName");
  info->chip = chip.pChipName;
  auto avail = Params<CUpti_PmSampling_GetCounterAvailability_Params>(
      CUpti_PmSampling_GetCounterAvailability_Params_STRUCT_SIZE);
  avail.deviceIndex = device_id_;
  if ((r = api_->PmGetCounterAvailability(&avail)) != CUPTI_SUCCESS) {
    return fail(r, "cuptiPmSamplingGetCounterAvailability");
  }
  std::vector<uint8_t> availability(avail.counterAvailabilityImageSize);
  avail.pCounterAvailabilityImage = availability.data();
  if ((r = api_->PmGetCounterAvailability(&avail)) != CUPTI_SUCCESS) {
    return fail(r, "cuptiPmSamplingGetCounterAvailability");
  }
  Selection sel = SelectMetrics(*api_, info->chip, availability.empty() ? nullptr : availability.data(),
                                ProfilerKind::kPmSampling, requests);
  info->rejected = sel.rejected;
  if (!sel.ok()) {
    info->state = field::enums::kGpuMetricsFailed;
    info->reason = "no metric set for " + info->chip + ": " + sel.error;
    return false;
  }
  if (sel.metrics.size() > kMaxMetricsPerSet) {
    for (size_t i = kMaxMetricsPerSet; i < sel.metrics.size(); ++i) {
      info->rejected.push_back({sel.metrics[i].request.key, sel.metrics[i].cupti_name,
                                "more than " + std::to_string(kMaxMetricsPerSet) + " metrics in one set"});
    }
    sel.metrics.resize(kMaxMetricsPerSet);
    // The config image must describe exactly the kept metrics.
    HostObject h;
    size_t passes = 0;
    if (h.Init(api_, info->chip, availability.data(), ProfilerKind::kPmSampling) != CUPTI_SUCCESS ||
        h.AddMetrics(sel.CuptiNames()) != CUPTI_SUCCESS || h.ConfigImage(&sel.config_image, &passes) != CUPTI_SUCCESS) {
      return fail(CUPTI_ERROR_UNKNOWN, "building the config image of the first 32 metrics");
    }
  }
  info->metrics = sel.metrics;
  info->passes = static_cast<uint32_t>(sel.passes);
  config_image_ = std::move(sel.config_image);
  name_storage_.clear();
  for (const SelectedMetric& m : sel.metrics)
    name_storage_.push_back(m.cupti_name);
  names_.clear();
  for (const std::string& n : name_storage_)
    names_.push_back(n.c_str());
  values_.assign(names_.size(), 0.0);
  if ((r = host_.Init(api_, info->chip, availability.data(), ProfilerKind::kPmSampling)) != CUPTI_SUCCESS) {
    return fail(r, "cuptiProfilerHostInitialize");
  }
  if ((r = host_.AddMetrics(names_)) != CUPTI_SUCCESS)
    return fail(r, "cuptiProfilerHostConfigAddMetrics");

  auto enable = Params<CUpti_PmSampling_Enable_Params>(CUpti_PmSampling_Enable_Params_STRUCT_SIZE);
  enable.deviceIndex = device_id_;
  if ((r = api_->PmEnable(&enable)) != CUPTI_SUCCESS)
    return fail(r, "cuptiPmSamplingEnable");
  object_ = enable.pPmSamplingObject;

  auto config = Params<CUpti_PmSampling_SetConfig_Params>(CUpti_PmSampling_SetConfig_Params_STRUCT_SIZE);
  config.pPmSamplingObject = object_;
  config.configSize = config_image_.size();
  config.pConfig = config_image_.data();
  config.hardwareBufferSize = kHardwareBufferBytes;
  bool sysclk = NeedsSysclkTrigger(info->chip);
  auto set_trigger = [&](bool use_sysclk) {
    config.triggerMode = use_sysclk ? CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_SYSCLK_INTERVAL
                                    : CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL;
    config.samplingInterval = use_sysclk ? interval_ns * (kAssumedSysClockHz / 1000000) / 1000 : interval_ns;
    if (config.samplingInterval == 0)
      config.samplingInterval = 1;
    // Turing cannot keep the latest records; elsewhere the newest samples win over old ones.
    config.hwBufferAppendMode = info->chip.rfind("TU", 0) == 0
                                    ? CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_OLDEST
                                    : CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_LATEST;
  };
  set_trigger(sysclk);
  r = api_->PmSetConfig(&config);
  if (r != CUPTI_SUCCESS && !sysclk && UnavailableReason(r, "").empty()) {
    set_trigger(true);  // a chip without the time trigger
    r = api_->PmSetConfig(&config);
  }
  if (r != CUPTI_SUCCESS)
    return fail(r, "cuptiPmSamplingSetConfig");
  info->trigger_mode = static_cast<uint32_t>(config.triggerMode);
  info->interval_ns = interval_ns;
  info->interval_raw = config.samplingInterval;
  info->hw_buffer_bytes = config.hardwareBufferSize;

  auto size =
      Params<CUpti_PmSampling_GetCounterDataSize_Params>(CUpti_PmSampling_GetCounterDataSize_Params_STRUCT_SIZE);
  size.pPmSamplingObject = object_;
  size.pMetricNames = names_.data();
  size.numMetrics = names_.size();
  size.maxSamples = kMaxSamplesPerDecode;
  if ((r = api_->PmGetCounterDataSize(&size)) != CUPTI_SUCCESS)
    return fail(r, "cuptiPmSamplingGetCounterDataSize");
  counter_data_.assign(size.counterDataSize, 0);
  info->max_samples = kMaxSamplesPerDecode;
  if ((r = ResetImage()) != CUPTI_SUCCESS)
    return fail(r, "cuptiPmSamplingCounterDataImageInitialize");
  if (rawcap::MetricsCapture* cap = rawcap::MetricsCapture::Instance()) {
    rawcap::MetricsPmConfig head{};
    head.device = device_id_;
    head.trigger_mode = info->trigger_mode;
    head.interval_raw = info->interval_raw;
    head.interval_ns = interval_ns;
    head.hw_buffer_bytes = info->hw_buffer_bytes;
    head.counter_data_bytes = counter_data_.size();
    head.max_samples = kMaxSamplesPerDecode;
    head.passes = info->passes;
    rawcap::MetricsCapture::CopyText(head.chip, sizeof(head.chip), info->chip);
    cap->WritePmConfig(head, name_storage_, config_image_, availability);
  }
  return true;
}

CUptiResult PmSampler::ResetImage() {
  auto p = Params<CUpti_PmSampling_CounterDataImage_Initialize_Params>(
      CUpti_PmSampling_CounterDataImage_Initialize_Params_STRUCT_SIZE);
  p.pPmSamplingObject = object_;
  p.counterDataSize = counter_data_.size();
  p.pCounterData = counter_data_.data();
  return api_->PmCounterDataImageInitialize(&p);
}

CUptiResult PmSampler::Start() {
  if (object_ == nullptr)
    return CUPTI_ERROR_NOT_INITIALIZED;
  auto p = Params<CUpti_PmSampling_Start_Params>(CUpti_PmSampling_Start_Params_STRUCT_SIZE);
  p.pPmSamplingObject = object_;
  CUptiResult r = api_->PmStart(&p);
  if (r == CUPTI_SUCCESS) {
    running_ = true;
    discard_next_ = true;
  }
  return r;
}

CUptiResult PmSampler::Stop() {
  if (object_ == nullptr || !running_)
    return CUPTI_SUCCESS;
  auto p = Params<CUpti_PmSampling_Stop_Params>(CUpti_PmSampling_Stop_Params_STRUCT_SIZE);
  p.pPmSamplingObject = object_;
  running_ = false;
  return api_->PmStop(&p);
}

bool PmSampler::Decode(int64_t clock_offset_ns, SampleQueue* queue, DecodeStats* stats) {
  if (object_ == nullptr)
    return false;
  // Bounded: at most 64 image fills per call (64 x 1024 samples), so a stuck decoder cannot spin.
  for (int round = 0; round < 64; ++round) {
    auto d = Params<CUpti_PmSampling_DecodeData_Params>(CUpti_PmSampling_DecodeData_Params_STRUCT_SIZE);
    d.pPmSamplingObject = object_;
    d.pCounterDataImage = counter_data_.data();
    d.counterDataImageSize = counter_data_.size();
    CUptiResult r = api_->PmDecodeData(&d);
    ++stats->decode_calls;
    stats->last_result = static_cast<uint32_t>(r);
    stats->last_stop_reason = static_cast<uint32_t>(d.decodeStopReason);
    if (r == CUPTI_ERROR_OUT_OF_MEMORY) {
      // The hardware buffer overflowed (KEEP_OLDEST): what was decoded so far is still valid.
      ++stats->overflows;
    } else if (r != CUPTI_SUCCESS) {
      ++stats->decode_errors;
      ResetImage();
      return false;
    }
    if (d.overflow != 0)
      ++stats->overflows;
    auto info =
        Params<CUpti_PmSampling_GetCounterDataInfo_Params>(CUpti_PmSampling_GetCounterDataInfo_Params_STRUCT_SIZE);
    info.pCounterDataImage = counter_data_.data();
    info.counterDataImageSize = counter_data_.size();
    if (api_->PmGetCounterDataInfo(&info) != CUPTI_SUCCESS) {
      ++stats->decode_errors;
      ResetImage();
      return false;
    }
    // Raw capture (metrics thread, capture mode only): the image as CUPTI filled it, what CUPTI said
    // about each sample and what the evaluation gave, written before the image is re-initialized.
    stats->completed += info.numCompletedSamples;
    timespec eval_t0{}, eval_t1{};
    clock_gettime(CLOCK_MONOTONIC, &eval_t0);
    rawcap::MetricsCapture* cap = info.numCompletedSamples > 0 ? rawcap::MetricsCapture::Instance() : nullptr;
    std::vector<uint8_t> captured;
    for (size_t i = 0; i < info.numCompletedSamples; ++i) {
      auto si = Params<CUpti_PmSampling_CounterData_GetSampleInfo_Params>(
          CUpti_PmSampling_CounterData_GetSampleInfo_Params_STRUCT_SIZE);
      si.pPmSamplingObject = object_;
      si.pCounterDataImage = counter_data_.data();
      si.counterDataImageSize = counter_data_.size();
      si.sampleIndex = i;
      CUptiResult info_result = api_->PmGetSampleInfo(&si);
      CUptiResult eval_result = CUPTI_ERROR_UNKNOWN;
      if (info_result == CUPTI_SUCCESS) {
        eval_result = host_.Evaluate(counter_data_.data(), counter_data_.size(), i, names_, values_.data());
      }
      if (cap != nullptr) {
        rawcap::MetricsSample ms{si.startTimestamp, si.endTimestamp, static_cast<uint32_t>(info_result),
                                 static_cast<uint32_t>(eval_result)};
        size_t at = captured.size();
        captured.resize(at + sizeof(ms) + values_.size() * sizeof(double), 0);
        std::memcpy(captured.data() + at, &ms, sizeof(ms));
        if (eval_result == CUPTI_SUCCESS)
          std::memcpy(captured.data() + at + sizeof(ms), values_.data(), values_.size() * sizeof(double));
      }
      if (info_result != CUPTI_SUCCESS || eval_result != CUPTI_SUCCESS) {
        ++stats->decode_errors;
        continue;
      }
      if (discard_next_) {
        discard_next_ = false;
        continue;
      }
      if (si.endTimestamp < si.startTimestamp)
        continue;
      if (si.endTimestamp <= last_end_raw_) {
        ++stats->decode_errors;
        ++stats->stale;
        continue;
      }
      last_end_raw_ = si.endTimestamp;
      Sample s;
      s.end_ns = static_cast<uint64_t>(static_cast<int64_t>(si.endTimestamp) - clock_offset_ns);
      s.duration_ns = si.endTimestamp - si.startTimestamp;
      s.value_count = static_cast<uint32_t>(values_.size());
      for (size_t k = 0; k < values_.size(); ++k) {
        double v = values_[k];
        s.values[k] = std::isfinite(v) ? static_cast<float>(v) : 0.0f;
      }
      if (queue->Push(s))
        ++stats->samples;
    }
    clock_gettime(CLOCK_MONOTONIC, &eval_t1);
    stats->evaluate_ns += static_cast<uint64_t>((eval_t1.tv_sec - eval_t0.tv_sec) * 1000000000ll +
                                                (eval_t1.tv_nsec - eval_t0.tv_nsec));
    if (cap != nullptr) {
      rawcap::MetricsPmData head{};
      head.device = device_id_;
      head.decode_result = static_cast<uint32_t>(r);
      head.stop_reason = static_cast<uint32_t>(d.decodeStopReason);
      head.overflow = d.overflow;
      head.total_samples = info.numTotalSamples;
      head.populated_samples = info.numPopulatedSamples;
      head.completed_samples = info.numCompletedSamples;
      head.clock_offset_ns = clock_offset_ns;
      head.metric_count = static_cast<uint32_t>(values_.size());
      head.sample_count = static_cast<uint32_t>(info.numCompletedSamples);
      head.image_bytes = counter_data_.size();
      cap->WritePmData(head, counter_data_.data(), captured);
    }
    ResetImage();
    if (r == CUPTI_ERROR_OUT_OF_MEMORY ||
        d.decodeStopReason != CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL) {
      return true;  // END_OF_RECORDS (or OTHER): the hardware buffer is drained for now
    }
  }
  return true;
}

void PmSampler::Disable() {
  if (object_ != nullptr) {
    Stop();
    auto p = Params<CUpti_PmSampling_Disable_Params>(CUpti_PmSampling_Disable_Params_STRUCT_SIZE);
    p.pPmSamplingObject = object_;
    api_->PmDisable(&p);
    object_ = nullptr;
  }
  host_.Reset();
  running_ = false;
}

}  // namespace gt::metrics
