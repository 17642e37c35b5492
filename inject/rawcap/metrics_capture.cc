// MetricsCapture: the GPU-metrics raw-capture file of one process. See metrics_capture.h.
#include "inject/rawcap/metrics_capture.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

namespace gt::rawcap {
namespace {

std::atomic<MetricsCapture*> g_metrics_capture{nullptr};

std::string JoinNames(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& n : names)
    text += n + "\n";
  return text;
}

}  // namespace

MetricsCapture* MetricsCapture::Instance() {
  return g_metrics_capture.load(std::memory_order_acquire);
}

void MetricsCapture::CopyText(char* dst, size_t cap, const std::string& text) {
  size_t n = text.size() < cap - 1 ? text.size() : cap - 1;
  std::memcpy(dst, text.data(), n);
  std::memset(dst + n, 0, cap - n);
}

bool MetricsCapture::StartFromEnv(const std::string& info, bool* requested, std::string* error) {
  const char* dir = getenv("GTRACE_RAW_CAPTURE_DIR");
  *requested = dir != nullptr && *dir != '\0';
  if (!*requested || Instance() != nullptr)
    return true;
  auto* c = new MetricsCapture();
  if (!c->Open(dir, error)) {
    delete c;
    return false;
  }
  std::lock_guard<std::mutex> lock(c->mu_);
  if (!c->Frame(kFrameInfo, {{info.data(), info.size()}})) {
    *error = "cannot write " + c->path_;
    return false;  // leaked on purpose: nothing refers to it
  }
  g_metrics_capture.store(c, std::memory_order_release);
  return true;
}

bool MetricsCapture::Open(const std::string& dir, std::string* error) {
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    *error = "cannot create GTRACE_RAW_CAPTURE_DIR '" + dir + "': " + strerror(errno);
    return false;
  }
  path_ = dir + "/metrics-" + std::to_string(::getpid()) + ".gtcap";
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);  // never overwrite
  if (fd_ < 0) {
    *error = "cannot create " + path_ + ": " + strerror(errno);
    return false;
  }
  uint8_t header[kCaptureHeaderBytes];
  std::memcpy(header, kCaptureMagic, 8);
  std::memcpy(header + 8, &kCaptureVersion, 4);
  std::memcpy(header + 12, &kCaptureHeaderBytes, 4);
  if (::write(fd_, header, sizeof(header)) != static_cast<ssize_t>(sizeof(header))) {
    *error = "cannot write " + path_;
    ::close(fd_);
    ::unlink(path_.c_str());
    fd_ = -1;
    return false;
  }
  file_bytes_ = sizeof(header);
  return true;
}

bool MetricsCapture::Frame(uint32_t type, const std::vector<std::pair<const void*, size_t>>& parts) {
  if (fd_ < 0 || failed_ || finished_)
    return false;
  size_t payload = 0;
  for (const auto& p : parts)
    payload += p.second;
  uint8_t head[kFrameHeaderBytes];
  uint32_t payload32 = static_cast<uint32_t>(payload);
  uint64_t seq = ++seq_;
  std::memcpy(head, &type, 4);
  std::memcpy(head + 4, &payload32, 4);
  std::memcpy(head + 8, &seq, 8);
  std::vector<std::pair<const void*, size_t>> all = {{head, sizeof(head)}};
  all.insert(all.end(), parts.begin(), parts.end());
  for (const auto& [data, bytes] : all) {
    const uint8_t* p = static_cast<const uint8_t*>(data);
    size_t left = bytes;
    while (left > 0) {
      ssize_t n = ::write(fd_, p, left);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0) {
        failed_ = true;  // a cut frame at the end: readers stop there
        return false;
      }
      p += n;
      left -= static_cast<size_t>(n);
    }
  }
  file_bytes_ += sizeof(head) + payload;
  return true;
}

void MetricsCapture::WritePmConfig(const MetricsPmConfig& head,
                                   const std::vector<std::string>& names,
                                   const std::vector<uint8_t>& config_image,
                                   const std::vector<uint8_t>& availability_image) {
  std::string text = JoinNames(names);
  MetricsPmConfig h = head;
  h.metric_count = static_cast<uint32_t>(names.size());
  h.names_bytes = static_cast<uint32_t>(text.size());
  h.config_bytes = static_cast<uint32_t>(config_image.size());
  h.availability_bytes = static_cast<uint32_t>(availability_image.size());
  std::lock_guard<std::mutex> lock(mu_);
  Frame(kFrameMetricsPmConfig, {{&h, sizeof(h)},
                                {text.data(), text.size()},
                                {config_image.data(), config_image.size()},
                                {availability_image.data(), availability_image.size()}});
}

void MetricsCapture::WriteRangeConfig(const MetricsRangeConfig& head,
                                      const std::vector<std::string>& names,
                                      const std::vector<uint8_t>& config_image) {
  std::string text = JoinNames(names);
  MetricsRangeConfig h = head;
  h.metric_count = static_cast<uint32_t>(names.size());
  h.names_bytes = static_cast<uint32_t>(text.size());
  h.config_bytes = static_cast<uint32_t>(config_image.size());
  std::lock_guard<std::mutex> lock(mu_);
  Frame(kFrameMetricsRangeConfig,
        {{&h, sizeof(h)}, {text.data(), text.size()}, {config_image.data(), config_image.size()}});
}

void MetricsCapture::Image(uint32_t type,
                           const void* head,
                           size_t head_bytes,
                           const uint8_t* image,
                           uint64_t image_bytes,
                           const std::vector<uint8_t>& tail) {
  std::lock_guard<std::mutex> lock(mu_);
  if (finished_)
    return;
  uint64_t bytes = kFrameHeaderBytes + head_bytes + image_bytes + tail.size();
  if (failed_ || fd_ < 0 || file_bytes_ + bytes > kMaxFileBytes ||
      !Frame(type, {{head, head_bytes}, {image, image_bytes}, {tail.data(), tail.size()}})) {
    ++images_dropped_;
    return;
  }
  ++images_;
  image_bytes_ += image_bytes;
}

void MetricsCapture::WritePmData(const MetricsPmData& head, const uint8_t* image, const std::vector<uint8_t>& samples) {
  Image(kFrameMetricsPmData, &head, sizeof(head), image, head.image_bytes, samples);
}

void MetricsCapture::WriteRangeData(const MetricsRangeData& head,
                                    const uint8_t* image,
                                    const std::vector<uint8_t>& ranges) {
  Image(kFrameMetricsRangeData, &head, sizeof(head), image, head.image_bytes, ranges);
}

void MetricsCapture::Finish() {
  std::lock_guard<std::mutex> lock(mu_);
  if (finished_)
    return;
  CaptureEnd end{};
  end.buffers = images_;
  end.buffer_bytes = image_bytes_;
  end.buffers_dropped = images_dropped_;
  Frame(kFrameEnd, {{&end, sizeof(end)}});
  finished_ = true;
  if (fd_ >= 0)
    ::close(fd_);
  fd_ = -1;
}

}  // namespace gt::rawcap
