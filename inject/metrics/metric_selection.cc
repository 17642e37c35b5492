#include "inject/metrics/metric_selection.h"

#include <cstring>

namespace gt::metrics {
namespace {

CUpti_ProfilerType TypeOf(ProfilerKind kind) {
  return kind == ProfilerKind::kPmSampling ? CUPTI_PROFILER_TYPE_PM_SAMPLING : CUPTI_PROFILER_TYPE_RANGE_PROFILER;
}

// One candidate alone on a fresh object: 0 on acceptance with one pass, else the reason.
std::string TryAlone(const ProfilerApi& api,
                     const std::string& chip,
                     const uint8_t* availability,
                     ProfilerKind kind,
                     const std::string& name) {
  HostObject host;
  CUptiResult r = host.Init(&api, chip, availability, kind);
  if (r != CUPTI_SUCCESS)
    return api.ResultName(r) + " from cuptiProfilerHostInitialize";
  r = host.AddMetrics({name.c_str()});
  if (r != CUPTI_SUCCESS)
    return api.ResultName(r) + " from cuptiProfilerHostConfigAddMetrics";
  std::vector<uint8_t> image;
  size_t passes = 0;
  r = host.ConfigImage(&image, &passes);
  if (r != CUPTI_SUCCESS)
    return api.ResultName(r) + " building the config image";
  if (passes != 1)
    return "needs " + std::to_string(passes) + " passes (gtrace collects single-pass metrics only)";
  return {};
}

// CUPTI's dimension unit of an accepted metric ("percent" -> "%"), for custom metrics.
std::string DimUnit(const ProfilerApi& api, const std::string& chip, ProfilerKind kind, const std::string& name) {
  if (api.HostGetMetricProperties == nullptr)
    return {};
  HostObject host;
  if (host.Init(&api, chip, nullptr, kind) != CUPTI_SUCCESS)
    return {};
  CUpti_Profiler_Host_GetMetricProperties_Params p{};
  p.structSize = CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE;
  p.pHostObject = host.get();
  p.pMetricName = name.c_str();
  if (api.HostGetMetricProperties(&p) != CUPTI_SUCCESS || p.pDimUnit == nullptr)
    return {};
  if (std::strcmp(p.pDimUnit, "percent") == 0)
    return "%";
  return p.pDimUnit;
}

}  // namespace

std::vector<const char*> Selection::CuptiNames() const {
  std::vector<const char*> names;
  names.reserve(metrics.size());
  for (const SelectedMetric& m : metrics)
    names.push_back(m.cupti_name.c_str());
  return names;
}

CUptiResult HostObject::Init(const ProfilerApi* api,
                             const std::string& chip,
                             const uint8_t* availability,
                             ProfilerKind kind) {
  Reset();
  api_ = api;
  if (api == nullptr || !api->host_ok)
    return CUPTI_ERROR_NOT_SUPPORTED;
  CUpti_Profiler_Host_Initialize_Params p{};
  p.structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE;
  p.profilerType = TypeOf(kind);
  p.pChipName = chip.c_str();
  p.pCounterAvailabilityImage = availability;
  CUptiResult r = api->HostInitialize(&p);
  if (r == CUPTI_SUCCESS)
    object_ = p.pHostObject;
  return r;
}

CUptiResult HostObject::AddMetrics(const std::vector<const char*>& names) {
  if (object_ == nullptr)
    return CUPTI_ERROR_NOT_INITIALIZED;
  CUpti_Profiler_Host_ConfigAddMetrics_Params p{};
  p.structSize = CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE;
  p.pHostObject = object_;
  p.ppMetricNames = const_cast<const char**>(names.data());
  p.numMetrics = names.size();
  return api_->HostConfigAddMetrics(&p);
}

CUptiResult HostObject::ConfigImage(std::vector<uint8_t>* image, size_t* passes) {
  if (object_ == nullptr)
    return CUPTI_ERROR_NOT_INITIALIZED;
  CUpti_Profiler_Host_GetConfigImageSize_Params s{};
  s.structSize = CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE;
  s.pHostObject = object_;
  CUptiResult r = api_->HostGetConfigImageSize(&s);
  if (r != CUPTI_SUCCESS)
    return r;
  image->assign(s.configImageSize, 0);
  CUpti_Profiler_Host_GetConfigImage_Params g{};
  g.structSize = CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE;
  g.pHostObject = object_;
  g.configImageSize = image->size();
  g.pConfigImage = image->data();
  if ((r = api_->HostGetConfigImage(&g)) != CUPTI_SUCCESS)
    return r;
  CUpti_Profiler_Host_GetNumOfPasses_Params n{};
  n.structSize = CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE;
  n.configImageSize = image->size();
  n.pConfigImage = image->data();
  if ((r = api_->HostGetNumOfPasses(&n)) != CUPTI_SUCCESS)
    return r;
  *passes = n.numOfPasses;
  return CUPTI_SUCCESS;
}

CUptiResult HostObject::Evaluate(const uint8_t* counter_data,
                                 size_t counter_data_size,
                                 size_t index,
                                 const std::vector<const char*>& names,
                                 double* values) {
  if (object_ == nullptr)
    return CUPTI_ERROR_NOT_INITIALIZED;
  CUpti_Profiler_Host_EvaluateToGpuValues_Params p{};
  p.structSize = CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE;
  p.pHostObject = object_;
  p.pCounterDataImage = counter_data;
  p.counterDataImageSize = counter_data_size;
  p.rangeIndex = index;
  p.ppMetricNames = const_cast<const char**>(names.data());
  p.numMetrics = names.size();
  p.pMetricValues = values;
  return api_->HostEvaluateToGpuValues(&p);
}

void HostObject::Reset() {
  if (object_ != nullptr && api_ != nullptr) {
    CUpti_Profiler_Host_Deinitialize_Params p{};
    p.structSize = CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE;
    p.pHostObject = object_;
    api_->HostDeinitialize(&p);
  }
  object_ = nullptr;
}

static bool Fits(const ProfilerApi& api,
                 const std::string& chip,
                 const uint8_t* availability,
                 ProfilerKind kind,
                 const std::vector<const char*>& names,
                 std::vector<uint8_t>* image,
                 std::string* why) {
  HostObject host;
  CUptiResult r = host.Init(&api, chip, availability, kind);
  if (r == CUPTI_SUCCESS)
    r = host.AddMetrics(names);
  size_t passes = 0;
  if (r == CUPTI_SUCCESS)
    r = host.ConfigImage(image, &passes);
  if (r != CUPTI_SUCCESS) {
    *why = api.ResultName(r) + " for the set";
    return false;
  }
  if (passes != 1) {
    *why = "the set would need " + std::to_string(passes) + " passes";
    return false;
  }
  return true;
}

Selection SelectMetrics(const ProfilerApi& api,
                        const std::string& chip,
                        const uint8_t* availability,
                        ProfilerKind kind,
                        const std::vector<MetricRequest>& requests,
                        const std::atomic<bool>* cancel) {
  Selection sel;
  auto cancelled = [&] {
    if (cancel == nullptr || !cancel->load(std::memory_order_acquire))
      return false;
    sel = Selection();
    sel.error = kSelectionCancelled;
    return true;
  };
  if (!api.host_ok) {
    sel.error = "this libcupti has no Profiler Host API (CUDA 12.6 or newer is needed)";
    return sel;
  }
  {
    HostObject probe;
    CUptiResult r = probe.Init(&api, chip, availability, kind);
    if (r != CUPTI_SUCCESS) {
      sel.error = "cuptiProfilerHostInitialize(" + chip + ") failed with " + api.ResultName(r) +
                  (r == CUPTI_ERROR_INVALID_CHIP_NAME ? " (a chip this CUPTI does not know: use a newer CUDA)" : "");
      return sel;
    }
  }
  // 1. Each candidate alone: the ones the chip accepts in one pass are viable.
  std::vector<std::vector<std::string>> viable(requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    for (const std::string& candidate : requests[i].candidates) {
      if (cancelled())
        return sel;
      std::string why = TryAlone(api, chip, availability, kind, candidate);
      if (why.empty()) {
        viable[i].push_back(candidate);
      } else {
        sel.rejected.push_back({requests[i].key, candidate, why});
      }
    }
  }
  // 2. Greedy in priority order: a metric joins with its first viable candidate that keeps the set
  //    at one pass; failing that, one earlier metric may switch to another of its viable candidates
  //    (the chips differ in which counter combinations share a pass).
  struct Choice {
    size_t request;
    size_t candidate;  // index into viable[request]
  };
  std::vector<Choice> chosen;
  auto names_of = [&](const std::vector<Choice>& set) {
    std::vector<const char*> names;
    for (const Choice& c : set)
      names.push_back(viable[c.request][c.candidate].c_str());
    return names;
  };
  std::vector<uint8_t> image;
  std::string why;
  for (size_t i = 0; i < requests.size(); ++i) {
    if (cancelled())
      return sel;
    if (viable[i].empty())
      continue;
    bool placed = false;
    std::string last_why;
    for (size_t c = 0; c < viable[i].size() && !placed; ++c) {
      std::vector<Choice> trial = chosen;
      trial.push_back({i, c});
      if (Fits(api, chip, availability, kind, names_of(trial), &image, &why)) {
        chosen = std::move(trial);
        placed = true;
      } else {
        last_why = why;
      }
    }
    for (size_t j = chosen.size(); j-- > 0 && !placed;) {
      for (size_t alt = 0; alt < viable[chosen[j].request].size() && !placed; ++alt) {
        if (alt == chosen[j].candidate)
          continue;
        for (size_t c = 0; c < viable[i].size() && !placed; ++c) {
          std::vector<Choice> trial = chosen;
          trial[j].candidate = alt;
          trial.push_back({i, c});
          if (Fits(api, chip, availability, kind, names_of(trial), &image, &why)) {
            chosen = std::move(trial);
            placed = true;
          }
        }
      }
    }
    if (!placed) {
      sel.rejected.push_back({requests[i].key, viable[i].front(),
                              "does not fit in one pass with the metrics before it (" + last_why + ")"});
    }
  }
  for (const Choice& c : chosen) {
    SelectedMetric m{requests[c.request], viable[c.request][c.candidate]};
    if (m.request.export_unit.empty())
      m.request.export_unit = DimUnit(api, chip, kind, m.cupti_name);
    sel.metrics.push_back(std::move(m));
  }
  // 3. The final set's config image.
  if (cancelled())
    return sel;
  if (!sel.metrics.empty()) {
    if (Fits(api, chip, availability, kind, sel.CuptiNames(), &image, &why)) {
      sel.config_image = std::move(image);
      sel.passes = 1;
    } else {
      sel.error = "the selected set failed to build a config image: " + why;
      sel.metrics.clear();
    }
  }
  if (sel.metrics.empty() && sel.error.empty())
    sel.error = "no metric of the set can be collected on " + chip;
  return sel;
}

}  // namespace gt::metrics
