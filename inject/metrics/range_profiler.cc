#include "inject/metrics/range_profiler.h"

#include <cstring>

#include "collector/clock.h"
#include "collector/schema_fields.h"
#include "collector/session.h"
#include "inject/metrics/metrics_fields.h"
#include "inject/metrics/pm_sampler.h"
#include "inject/rawcap/metrics_capture.h"

namespace gt::metrics {

std::atomic<bool> g_range_armed{false};

namespace {

template <typename P>
P Params(size_t size) {
  P p;
  std::memset(&p, 0, sizeof(p));
  p.structSize = size;
  return p;
}

bool WideEquals(const wchar_t* w, const std::string& s) {
  size_t i = 0;
  for (; i < s.size(); ++i) {
    if (w[i] == 0 || static_cast<uint32_t>(w[i]) != static_cast<unsigned char>(s[i]))
      return false;
  }
  return w[i] == 0;
}

}  // namespace

struct RangeProfiler::Context {
  std::mutex mu;  // serialises this context's CUPTI calls (lock order: Context::mu, then mu_)
  void* cu_context = nullptr;
  uint32_t device_id = 0;
  uint32_t context_id = 0;
  bool kernel_mode = false;
  bool failed = false;
  CUpti_RangeProfiler_Object* object = nullptr;
  std::shared_ptr<ChipSelection> chip;
  std::vector<uint8_t> image;
  // Pass in progress.
  bool in_pass = false;
  uint64_t pass_id = 0;
  uint64_t pass_start_ns = 0;
  std::string range_name;
  uint32_t range_tid = 0;
  uint32_t range_domain = 0;
  int range_depth = -1;
  bool config_captured = false;  // metrics thread (raw capture: the config frame was written)
};

RangeProfiler::RangeProfiler() = default;
RangeProfiler::~RangeProfiler() = default;

void RangeProfiler::Prepare(const ProfilerApi* api,
                            const DriverApi* driver,
                            const MetricsOptions& options,
                            const std::vector<MetricRequest>& requests,
                            const std::vector<uint32_t>& devices,
                            const std::atomic<bool>* exiting) {
  api_ = api;
  driver_ = driver;
  options_ = options;
  auto is_exiting = [&] { return exiting != nullptr && exiting->load(std::memory_order_acquire); };
  for (uint32_t d : devices) {
    if (is_exiting())
      return;
    auto chip = Params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
    chip.deviceIndex = d;
    if (api->DeviceGetChipName(&chip) != CUPTI_SUCCESS || chip.pChipName == nullptr)
      continue;
    std::string name = chip.pChipName;
    std::shared_ptr<ChipSelection> sel;
    {
      std::lock_guard<std::mutex> lock(mu_);
      device_chip_[d] = name;
      if (chips_.count(name) != 0)
        continue;
    }
    sel = std::make_shared<ChipSelection>();
    sel->selection = SelectMetrics(*api, name, nullptr, ProfilerKind::kRangeProfiler, requests, exiting);
    if (is_exiting())
      return;  // cancelled half-way: arm nothing
    sel->names = sel->selection.CuptiNames();
    std::lock_guard<std::mutex> lock(mu_);
    chips_[name] = sel;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = 0; i < kRangeHandoffBuffers; ++i)
      free_buffers_.emplace_back();
    if (options.range_mode == RangeMode::kKernel)
      kernel_devices_ = devices;
  }
  if (options.range_mode == RangeMode::kNvtx)
    g_range_armed.store(true, std::memory_order_release);
}

bool RangeProfiler::Matches(const char* domain_name, const char* text, const wchar_t* wide) const {
  if (!options_.nvtx_any_domain) {
    bool is_default = domain_name == nullptr;
    if (options_.nvtx_domain.empty() ? !is_default : (is_default || options_.nvtx_domain != domain_name))
      return false;
  }
  if (text != nullptr)
    return options_.nvtx_message == text;
  return wide != nullptr && WideEquals(wide, options_.nvtx_message);
}

RangeProfiler::Context* RangeProfiler::ContextFor(void* cu_context, uint32_t device_id, bool kernel_mode) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& c : contexts_) {
    if (c->cu_context == cu_context)
      return c.get();
  }
  auto it = device_chip_.find(device_id);
  if (it == device_chip_.end())
    return nullptr;  // not prepared (yet)
  auto chip = chips_.find(it->second);
  if (chip == chips_.end())
    return nullptr;
  auto c = std::make_unique<Context>();
  c->cu_context = cu_context;
  c->device_id = device_id;
  c->kernel_mode = kernel_mode;
  c->chip = chip->second;
  contexts_.push_back(std::move(c));
  return contexts_.back().get();
}

void RangeProfiler::Fail(Context* c, const std::string& why) {
  c->failed = true;
  RangeConfigInfo info;
  info.device_id = c->device_id;
  info.context_id = c->context_id;
  info.mode = c->kernel_mode ? field::enums::kRangeModeKernel : field::enums::kRangeModeNvtx;
  info.nvtx_message = options_.nvtx_message;
  info.nvtx_domain = options_.nvtx_any_domain ? "*" : options_.nvtx_domain;
  info.reason = why;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = device_chip_.find(c->device_id);
    if (it != device_chip_.end())
      info.chip = it->second;
    configs_.push_back(std::move(info));
  }
  ReportDiagnostic(field::enums::kSeverityWarning, "gpu-metrics",
                   "range profiler off on device " + std::to_string(c->device_id) + ": " + why);
}

bool RangeProfiler::EnableContext(Context* c, bool kernel_mode) {
  const Selection& sel = c->chip->selection;
  if (!sel.ok()) {
    Fail(c, "no metric list: " + sel.error);
    return false;
  }
  if (api_->GetContextId != nullptr) {
    api_->GetContextId(static_cast<CUcontext>(c->cu_context), &c->context_id);
  }
  auto enable = Params<CUpti_RangeProfiler_Enable_Params>(CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
  enable.ctx = static_cast<CUcontext>(c->cu_context);
  CUptiResult r = api_->RangeEnable(&enable);
  if (r != CUPTI_SUCCESS) {
    std::string why = UnavailableReason(r, "cuptiRangeProfilerEnable");
    Fail(c, why.empty() ? "cuptiRangeProfilerEnable failed with " + api_->ResultName(r) : why);
    return false;
  }
  c->object = enable.pRangeProfilerObject;
  auto size =
      Params<CUpti_RangeProfiler_GetCounterDataSize_Params>(CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
  size.pRangeProfilerObject = c->object;
  size.pMetricNames = const_cast<const char**>(c->chip->names.data());
  size.numMetrics = c->chip->names.size();
  size.maxNumOfRanges = kernel_mode ? kMaxRangesPerPass : 1;
  size.maxNumRangeTreeNodes = static_cast<uint32_t>(size.maxNumOfRanges);
  if ((r = api_->RangeGetCounterDataSize(&size)) != CUPTI_SUCCESS) {
    Fail(c, "cuptiRangeProfilerGetCounterDataSize failed with " + api_->ResultName(r));
    return false;
  }
  c->image.assign(size.counterDataSize, 0);
  RangeConfigInfo info;
  info.device_id = c->device_id;
  info.context_id = c->context_id;
  info.mode = kernel_mode ? field::enums::kRangeModeKernel : field::enums::kRangeModeNvtx;
  info.nvtx_message = kernel_mode ? "" : options_.nvtx_message;
  info.nvtx_domain = kernel_mode ? "" : (options_.nvtx_any_domain ? "*" : options_.nvtx_domain);
  info.metrics = sel.metrics;
  info.rejected = sel.rejected;
  info.max_ranges_per_pass = static_cast<uint32_t>(size.maxNumOfRanges);
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = device_chip_.find(c->device_id);
    if (it != device_chip_.end())
      info.chip = it->second;
    configs_.push_back(std::move(info));
  }
  return true;
}

bool RangeProfiler::StartPass(Context* c) {
  auto init = Params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(
      CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
  init.pRangeProfilerObject = c->object;
  init.counterDataSize = c->image.size();
  init.pCounterData = c->image.data();
  CUptiResult r = api_->RangeCounterDataImageInitialize(&init);
  if (r == CUPTI_SUCCESS) {
    auto cfg = Params<CUpti_RangeProfiler_SetConfig_Params>(CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
    cfg.pRangeProfilerObject = c->object;
    cfg.configSize = c->chip->selection.config_image.size();
    cfg.pConfig = c->chip->selection.config_image.data();
    cfg.counterDataImageSize = c->image.size();
    cfg.pCounterDataImage = c->image.data();
    cfg.range = c->kernel_mode ? CUPTI_AutoRange : CUPTI_UserRange;
    cfg.replayMode = c->kernel_mode ? CUPTI_KernelReplay : CUPTI_UserReplay;
    cfg.maxRangesPerPass = c->kernel_mode ? kMaxRangesPerPass : 1;
    cfg.numNestingLevels = 1;
    cfg.minNestingLevel = 1;
    cfg.passIndex = 0;
    cfg.targetNestingLevel = 1;
    r = api_->RangeSetConfig(&cfg);
  }
  if (r == CUPTI_SUCCESS) {
    auto start = Params<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
    start.pRangeProfilerObject = c->object;
    r = api_->RangeStart(&start);
  }
  if (r != CUPTI_SUCCESS) {
    Fail(c, "starting a range-profiler pass failed with " + api_->ResultName(r));
    return false;
  }
  c->in_pass = true;
  {
    std::lock_guard<std::mutex> lock(mu_);
    c->pass_id = next_pass_++;
  }
  c->pass_start_ns = StreamNow();
  return true;
}

void RangeProfiler::EndPass(Context* c, uint64_t end_ns) {
  c->in_pass = false;
  auto stop = Params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
  stop.pRangeProfilerObject = c->object;
  CUptiResult r = api_->RangeStop(&stop);
  auto decode = Params<CUpti_RangeProfiler_DecodeData_Params>(CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
  decode.pRangeProfilerObject = c->object;
  if (r == CUPTI_SUCCESS)
    r = api_->RangeDecodeData(&decode);
  if (r != CUPTI_SUCCESS) {
    Fail(c, "ending a range-profiler pass failed with " + api_->ResultName(r));
    return;
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (free_buffers_.empty()) {
    ++dropped_;  // every handoff buffer is waiting for the metrics thread
    return;
  }
  Pending p;
  p.image = std::move(free_buffers_.back());
  free_buffers_.pop_back();
  p.image.assign(c->image.begin(), c->image.end());
  p.context = c;
  p.name = c->range_name;
  p.pass_id = c->pass_id;
  p.start_ns = c->pass_start_ns;
  p.end_ns = end_ns;
  p.tid = c->range_tid;
  p.dropped = decode.numOfRangeDropped;
  pending_.push_back(std::move(p));
}

void RangeProfiler::OnNvtxPush(const char* domain_name,
                               const char* text,
                               const wchar_t* wide,
                               uint32_t domain_id,
                               uint32_t tid,
                               int depth) {
  // Acquire: pairs with Prepare's release store, so options_, api_ and driver_ are visible here (the
  // hook's own check was relaxed).
  if (!g_range_armed.load(std::memory_order_acquire))
    return;
  if (inert_.load(std::memory_order_acquire) || !Matches(domain_name, text, wide))
    return;
  if (driver_ == nullptr || !driver_->ok)
    return;
  CUcontext ctx = nullptr;
  CUdevice dev = 0;
  if (driver_->CtxGetCurrent(&ctx) != CUDA_SUCCESS || ctx == nullptr)
    return;  // no CUDA context on this thread
  if (driver_->CtxGetDevice(&dev) != CUDA_SUCCESS)
    return;
  Context* c = ContextFor(ctx, static_cast<uint32_t>(dev), false);
  if (c == nullptr)
    return;
  std::lock_guard<std::mutex> lock(c->mu);
  if (c->failed || c->in_pass)
    return;  // a profiled range is already open on this context
  if (c->object == nullptr && !EnableContext(c, false))
    return;
  if (!StartPass(c))
    return;
  open_nvtx_passes_.fetch_add(1, std::memory_order_relaxed);
  c->range_name = options_.nvtx_message;
  c->range_tid = tid;
  c->range_domain = domain_id;
  c->range_depth = depth;
  auto push = Params<CUpti_RangeProfiler_PushRange_Params>(CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE);
  push.pRangeProfilerObject = c->object;
  push.pRangeName = c->range_name.c_str();
  CUptiResult r = api_->RangePushRange(&push);
  if (r != CUPTI_SUCCESS) {
    EndPass(c, StreamNow());
    open_nvtx_passes_.fetch_sub(1, std::memory_order_relaxed);
    Fail(c, "cuptiRangeProfilerPushRange failed with " + api_->ResultName(r));
  }
}

void RangeProfiler::OnNvtxPop(uint32_t tid, uint32_t domain_id, int depth) {
  if (open_nvtx_passes_.load(std::memory_order_relaxed) == 0 || inert_.load(std::memory_order_acquire))
    return;
  std::vector<Context*> candidates;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& c : contexts_) {
      if (!c->kernel_mode)
        candidates.push_back(c.get());
    }
  }
  for (Context* c : candidates) {
    std::lock_guard<std::mutex> lock(c->mu);
    if (!c->in_pass || c->range_tid != tid || c->range_domain != domain_id || c->range_depth != depth)
      continue;
    auto pop = Params<CUpti_RangeProfiler_PopRange_Params>(CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE);
    pop.pRangeProfilerObject = c->object;
    api_->RangePopRange(&pop);
    EndPass(c, StreamNow());
    open_nvtx_passes_.fetch_sub(1, std::memory_order_relaxed);
    return;
  }
}

void RangeProfiler::Evaluate(Pending* p) {
  Context* c = p->context;
  const ChipSelection& chip = *c->chip;
  auto info =
      Params<CUpti_RangeProfiler_GetCounterDataInfo_Params>(CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
  info.pCounterDataImage = p->image.data();
  info.counterDataImageSize = p->image.size();
  CUptiResult info_result = api_->RangeGetCounterDataInfo(&info);
  std::string chip_name;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = device_chip_.find(c->device_id);
    if (it != device_chip_.end())
      chip_name = it->second;
  }
  // Raw capture (metrics thread, capture mode only): the image as DecodeData left it, CUPTI's answers
  // about it and the evaluated values, written once this pass is evaluated.
  rawcap::MetricsCapture* cap = rawcap::MetricsCapture::Instance();
  std::vector<uint8_t> captured;
  uint32_t captured_ranges = 0;
  auto write_capture = [&] {
    if (cap == nullptr)
      return;
    if (!c->config_captured) {
      c->config_captured = true;
      rawcap::MetricsRangeConfig head{};
      head.device = c->device_id;
      head.context_id = c->context_id;
      head.mode = c->kernel_mode ? field::enums::kRangeModeKernel : field::enums::kRangeModeNvtx;
      head.max_ranges = c->kernel_mode ? kMaxRangesPerPass : 1;
      head.counter_data_bytes = p->image.size();
      head.passes = static_cast<uint32_t>(chip.selection.passes);
      rawcap::MetricsCapture::CopyText(head.chip, sizeof(head.chip), chip_name);
      std::vector<std::string> names(chip.names.begin(), chip.names.end());
      cap->WriteRangeConfig(head, names, chip.selection.config_image);
    }
    rawcap::MetricsRangeData head{};
    head.device = c->device_id;
    head.context_id = c->context_id;
    head.mode = c->kernel_mode ? field::enums::kRangeModeKernel : field::enums::kRangeModeNvtx;
    head.info_result = static_cast<uint32_t>(info_result);
    head.pass_id = p->pass_id;
    head.pass_start_ns = p->start_ns;
    head.pass_end_ns = p->end_ns;
    head.total_ranges = info_result == CUPTI_SUCCESS ? info.numTotalRanges : 0;
    head.ranges_dropped = p->dropped;
    head.image_bytes = p->image.size();
    head.metric_count = static_cast<uint32_t>(chip.names.size());
    head.range_count = captured_ranges;
    rawcap::MetricsCapture::CopyText(head.nvtx_name, sizeof(head.nvtx_name), p->name);
    cap->WriteRangeData(head, p->image.data(), captured);
  };
  if (info_result != CUPTI_SUCCESS) {
    write_capture();
    return;
  }
  HostObject host;
  if (host.Init(api_, chip_name, nullptr, ProfilerKind::kRangeProfiler) != CUPTI_SUCCESS ||
      host.AddMetrics(chip.names) != CUPTI_SUCCESS) {
    write_capture();
    return;
  }
  std::vector<RangeResult> out;
  for (size_t i = 0; i < info.numTotalRanges; ++i) {
    RangeResult r;
    r.device_id = c->device_id;
    r.context_id = c->context_id;
    r.mode = c->kernel_mode ? field::enums::kRangeModeKernel : field::enums::kRangeModeNvtx;
    auto ri = Params<CUpti_RangeProfiler_CounterData_GetRangeInfo_Params>(
        CUpti_RangeProfiler_CounterData_GetRangeInfo_Params_STRUCT_SIZE);
    ri.pCounterDataImage = p->image.data();
    ri.counterDataImageSize = p->image.size();
    ri.rangeIndex = i;
    ri.rangeDelimiter = "/";
    CUptiResult range_result = api_->RangeGetRangeInfo(&ri);
    if (range_result == CUPTI_SUCCESS && ri.rangeName != nullptr)
      r.range_name = ri.rangeName;
    if (r.range_name.empty())
      r.range_name = c->kernel_mode ? std::to_string(i) : p->name;
    r.range_index = static_cast<uint32_t>(i);
    r.pass_id = p->pass_id;
    r.pass_start_ns = p->start_ns;
    r.pass_end_ns = p->end_ns;
    r.tid = p->tid;
    r.values.assign(chip.names.size(), 0.0);
    CUptiResult eval_result = host.Evaluate(p->image.data(), p->image.size(), i, chip.names, r.values.data());
    if (cap != nullptr) {
      rawcap::MetricsRange mr{};
      mr.info_result = static_cast<uint32_t>(range_result);
      mr.eval_result = static_cast<uint32_t>(eval_result);
      rawcap::MetricsCapture::CopyText(mr.name, sizeof(mr.name),
                                       range_result == CUPTI_SUCCESS && ri.rangeName != nullptr ? ri.rangeName : "");
      size_t at = captured.size();
      captured.resize(at + sizeof(mr) + r.values.size() * sizeof(double), 0);
      std::memcpy(captured.data() + at, &mr, sizeof(mr));
      if (eval_result == CUPTI_SUCCESS)
        std::memcpy(captured.data() + at + sizeof(mr), r.values.data(), r.values.size() * sizeof(double));
      ++captured_ranges;
    }
    if (eval_result != CUPTI_SUCCESS)
      continue;
    if (i == 0)
      r.ranges_dropped = p->dropped;
    out.push_back(std::move(r));
  }
  write_capture();
  std::lock_guard<std::mutex> lock(mu_);
  for (RangeResult& r : out) {
    if (results_.size() >= kMaxPendingResults) {
      ++dropped_;
      continue;
    }
    results_.push_back(std::move(r));
  }
}

void RangeProfiler::Pump(uint64_t now_ns, bool final) {
  if (inert_.load(std::memory_order_acquire) || api_ == nullptr)
    return;
  // Kernel mode: enable each device's primary context once it is active; rotate passes.
  std::vector<uint32_t> devices;
  {
    std::lock_guard<std::mutex> lock(mu_);
    devices = kernel_devices_;
  }
  for (uint32_t d : devices) {
    if (final || driver_ == nullptr || !driver_->ok)
      break;
    CUdevice dev = 0;
    unsigned int flags = 0;
    int active = 0;
    if (driver_->DeviceGet(&dev, static_cast<int>(d)) != CUDA_SUCCESS ||
        driver_->DevicePrimaryCtxGetState(dev, &flags, &active) != CUDA_SUCCESS || !active ||
        driver_->DevicePrimaryCtxRetain == nullptr) {
      continue;
    }
    CUcontext ctx = nullptr;
    if (driver_->DevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS || ctx == nullptr)
      continue;
    bool known = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto& c : contexts_)
        known = known || c->cu_context == ctx;
    }
    if (known) {
      driver_->DevicePrimaryCtxRelease(dev);  // keep one reference only (taken below, the first time)
      continue;
    }
    Context* c = ContextFor(ctx, d, true);
    if (c == nullptr) {
      driver_->DevicePrimaryCtxRelease(dev);
      continue;
    }
    std::lock_guard<std::mutex> lock(c->mu);
    if (EnableContext(c, true))
      StartPass(c);
  }
  std::vector<Context*> rotate;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& c : contexts_) {
      if (c->kernel_mode)
        rotate.push_back(c.get());
    }
  }
  for (Context* c : rotate) {
    std::lock_guard<std::mutex> lock(c->mu);
    if (c->failed || !c->in_pass)
      continue;
    if (!final && now_ns - c->pass_start_ns < kKernelPassNs)
      continue;
    EndPass(c, now_ns);
    if (!final && !c->failed)
      StartPass(c);
  }
  // Evaluate what the passes handed over (outside every lock but the handoff queue's).
  while (true) {
    Pending p;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (pending_.empty())
        break;
      p = std::move(pending_.front());
      pending_.pop_front();
    }
    Evaluate(&p);
    std::lock_guard<std::mutex> lock(mu_);
    free_buffers_.push_back(std::move(p.image));
  }
}

void RangeProfiler::Take(std::vector<RangeConfigInfo>* configs, std::vector<RangeResult>* results, uint64_t* dropped) {
  std::lock_guard<std::mutex> lock(mu_);
  configs->swap(configs_);
  configs_.clear();
  results->swap(results_);
  results_.clear();
  *dropped = dropped_;
}

}  // namespace gt::metrics
