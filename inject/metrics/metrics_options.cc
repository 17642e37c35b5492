#include "inject/metrics/metrics_options.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "collector/process_info.h"

namespace gt::metrics {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

// Leading decimal integer ("4(x2)" -> 4, SLURM_TASKS_PER_NODE style); -1 when none.
int32_t LeadingInt(const char* text) {
  if (text == nullptr || *text < '0' || *text > '9')
    return -1;
  int64_t v = 0;
  for (const char* p = text; *p >= '0' && *p <= '9' && v < 1000000; ++p)
    v = v * 10 + (*p - '0');
  return static_cast<int32_t>(v);
}

}  // namespace

bool ParseDevices(std::string_view text, DeviceSelection* selection, std::vector<uint32_t>* ids, std::string* error) {
  text = Trim(text);
  ids->clear();
  if (text == "none") {
    *selection = DeviceSelection::kNone;
  } else if (text == "all") {
    *selection = DeviceSelection::kAll;
  } else if (text == "cuda-visible") {
    *selection = DeviceSelection::kCudaVisible;
  } else {
    std::string_view rest = text;
    while (true) {
      size_t comma = rest.find(',');
      std::string_view item = Trim(rest.substr(0, comma));
      uint64_t id = 0;
      if (!ParseUint64(item, &id) || id > 255) {
        *error = "'" + std::string(text) + "' is not none, all, cuda-visible or a list of device ids (e.g. 0,2)";
        return false;
      }
      ids->push_back(static_cast<uint32_t>(id));
      if (comma == std::string_view::npos)
        break;
      rest.remove_prefix(comma + 1);
    }
    std::sort(ids->begin(), ids->end());
    ids->erase(std::unique(ids->begin(), ids->end()), ids->end());
    *selection = DeviceSelection::kList;
  }
  return true;
}

bool ParseFrequency(std::string_view text, uint32_t* hz, std::string* error) {
  uint64_t v = 0;
  if (!ParseUint64(Trim(text), &v) || v < kMinFrequencyHz || v > kMaxFrequencyHz) {
    *error = "'" + std::string(text) + "' is not a sampling frequency in Hz from 10 to 200000";
    return false;
  }
  *hz = static_cast<uint32_t>(v);
  return true;
}

bool ParseRanges(std::string_view text, MetricsOptions* out, std::string* error) {
  text = Trim(text);
  out->ranges_text = std::string(text);
  if (text.empty() || text == "none") {
    out->range_mode = RangeMode::kOff;
    return true;
  }
  if (text == "kernel") {
    out->range_mode = RangeMode::kKernel;
    return true;
  }
  if (text.substr(0, 5) == "nvtx:") {
    std::string why;
    if (!ParseNvtxCapture(text.substr(5), &out->nvtx_message, &out->nvtx_domain, &out->nvtx_any_domain, &why)) {
      *error = why;
      return false;
    }
    out->range_mode = RangeMode::kNvtx;
    return true;
  }
  *error = "'" + std::string(text) + "' is not nvtx:RANGE[@DOMAIN], kernel or none";
  return false;
}

MetricsOptions ReadMetricsOptions(EnvGetter getenv_fn, std::vector<std::string>* warnings) {
  MetricsOptions o;
  std::string error;
  if (const char* v = getenv_fn("GTRACE_GPU_METRICS_DEVICES"); v != nullptr) {
    if (ParseDevices(v, &o.devices, &o.device_ids, &error)) {
      o.devices_text = std::string(Trim(v));
    } else {
      warnings->push_back("GTRACE_GPU_METRICS_DEVICES: " + error + "; GPU metrics off");
      o.devices = DeviceSelection::kNone;
    }
  }
  if (const char* v = getenv_fn("GTRACE_GPU_METRICS_FREQUENCY");
      v != nullptr && !ParseFrequency(v, &o.frequency_hz, &error)) {
    warnings->push_back("GTRACE_GPU_METRICS_FREQUENCY: " + error + "; using 10000");
    o.frequency_hz = kDefaultFrequencyHz;
  }
  if (const char* v = getenv_fn("GTRACE_GPU_METRICS_SET"); v != nullptr && !Trim(v).empty()) {
    o.set = std::string(Trim(v));
  }
  if (const char* v = getenv_fn("GTRACE_GPU_METRICS_RANGES"); v != nullptr && !ParseRanges(v, &o, &error)) {
    warnings->push_back("GTRACE_GPU_METRICS_RANGES: " + error + "; range profiler off");
    o.range_mode = RangeMode::kOff;
  }
  return o;
}

LocalRank DetectLocalRank(EnvGetter getenv_fn) {
  LocalRank r;
  RankInfo info = DetectRank(getenv_fn);
  r.local_rank = info.local_rank;
  r.source = info.source;
  for (const char* var : {"LOCAL_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "PMIX_LOCAL_SIZE",
                          "SLURM_NTASKS_PER_NODE", "SLURM_TASKS_PER_NODE"}) {
    int32_t v = LeadingInt(getenv_fn(var));
    if (v > 0) {
      r.local_world_size = v;
      r.source += std::string(r.source.empty() ? "" : ", ") + var;
      break;
    }
  }
  return r;
}

std::vector<uint32_t> OwnedDevices(const MetricsOptions& options,
                                   const LocalRank& rank,
                                   uint32_t visible,
                                   std::string* rule) {
  std::vector<uint32_t> candidates;
  if (options.devices == DeviceSelection::kAll || options.devices == DeviceSelection::kCudaVisible) {
    for (uint32_t d = 0; d < visible; ++d)
      candidates.push_back(d);
  } else if (options.devices == DeviceSelection::kList) {
    for (uint32_t d : options.device_ids) {
      if (d < visible)
        candidates.push_back(d);
    }
  }
  if (rank.local_rank < 0) {
    *rule = "no local rank: this process samples every requested device it sees";
    return candidates;
  }
  std::vector<uint32_t> owned;
  const uint32_t l = static_cast<uint32_t>(rank.local_rank);
  const int32_t w = rank.local_world_size;
  if (w > 0 && visible >= static_cast<uint32_t>(w)) {
    for (uint32_t d : candidates) {
      if (d % static_cast<uint32_t>(w) == l % static_cast<uint32_t>(w))
        owned.push_back(d);
    }
    *rule = "local rank " + std::to_string(l) + " of " + std::to_string(w) + " owns the devices d with d % " +
            std::to_string(w) + " == " + std::to_string(l % static_cast<uint32_t>(w));
  } else if (visible > 0) {
    uint32_t mine = l % visible;
    for (uint32_t d : candidates) {
      if (d == mine)
        owned.push_back(d);
    }
    *rule = "local rank " + std::to_string(l) + " sees " + std::to_string(visible) + " device(s)" +
            (w > 0 ? " for " + std::to_string(w) + " local ranks" : std::string(", local rank count unknown")) +
            ": it owns device " + std::to_string(mine) + " (local rank % visible devices)";
  } else {
    *rule = "no visible device";
  }
  return owned;
}

bool TryLockGpu(const std::string& uuid_hex, std::string* holder) {
  std::string dir = "/dev/shm";
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || ::access(dir.c_str(), W_OK) != 0) {
    const char* tmp = getenv("TMPDIR");
    dir = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  }
  std::string path = dir + "/gtrace-gpu-metrics-" + uuid_hex + ".lock";
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0)
    return true;  // no lock file possible: CUPTI's own exclusivity still applies
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    char buf[32] = {};
    ssize_t n = ::pread(fd, buf, sizeof(buf) - 1, 0);
    std::string pid = n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string("?");
    while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' '))
      pid.pop_back();
    *holder = "pid " + pid + " (" + path + ")";
    ::close(fd);
    return false;
  }
  // Held until the process exits (the fd is never closed; close-on-exec drops it across exec).
  std::string me = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) == 0) {
    ssize_t w = ::pwrite(fd, me.data(), me.size(), 0);
    (void)w;
  }
  return true;
}

}  // namespace gt::metrics
