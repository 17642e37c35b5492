// MetricsCapture: raw-capture mode for GPU metrics (GTRACE_RAW_CAPTURE_DIR=DIR, the switch of the
// CUPTI and NCCL captures). Saves, exactly as CUPTI filled them, the PM-sampling counter-data images
// gtrace decodes and the range profiler's counter-data images, with their set-up (chip, metric
// names, config image, counter-availability image) and what CUPTI answered about each image, into
// DIR/metrics-<pid>.gtcap (frames 15-18 of inject/rawcap/capture_format.h, docs/capture.md).
//
// Threads: every call comes from gtrace's metrics thread (PmSampler set-up and decodes, the range
// profiler's evaluation in Pump), never from an application thread: the images are written off the
// hot path, after CUPTI's own decode. A mutex still guards the file (cheap; a later caller on another
// thread stays correct). Start and Finish run on the metrics thread too. Owned by nobody: allocated
// once, never freed. A forked child has no metrics thread, so it never writes.
//
// Fail-soft: a directory or file that cannot be created switches this capture off (the caller
// prints one line); a write error stops writing (a cut frame at the end, which readers drop); the
// file is bounded at kMaxFileBytes (further images are counted as dropped in the end frame).
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "inject/rawcap/capture_format.h"

namespace gt::rawcap {

class MetricsCapture {
 public:
  static constexpr uint64_t kMaxFileBytes = 2ull << 20;  // "well under 5 MiB per GPU kind" (issue 12)

  // The capture of this process, or nullptr (off, not started, or failed).
  static MetricsCapture* Instance();
  // Metrics thread, before any profiler set-up. `info`: "key=value\n" lines for the info frame.
  // *requested tells whether GTRACE_RAW_CAPTURE_DIR is set; false with *error when it could not start.
  static bool StartFromEnv(const std::string& info, bool* requested, std::string* error);

  void WritePmConfig(const MetricsPmConfig& head,
                     const std::vector<std::string>& names,
                     const std::vector<uint8_t>& config_image,
                     const std::vector<uint8_t>& availability_image);
  // `samples`: head.sample_count entries, each MetricsSample followed by head.metric_count doubles.
  void WritePmData(const MetricsPmData& head, const uint8_t* image, const std::vector<uint8_t>& samples);
  void WriteRangeConfig(const MetricsRangeConfig& head,
                        const std::vector<std::string>& names,
                        const std::vector<uint8_t>& config_image);
  // `ranges`: head.range_count entries, each MetricsRange followed by head.metric_count doubles.
  void WriteRangeData(const MetricsRangeData& head, const uint8_t* image, const std::vector<uint8_t>& ranges);
  // The end frame (CaptureEnd: buffers = images written, buffer_bytes = their bytes,
  // buffers_dropped = images not written), then close. Metrics thread, when it stops.
  void Finish();
  const std::string& path() const { return path_; }

  // Copies `text` into a fixed field, cut and NUL-terminated.
  static void CopyText(char* dst, size_t cap, const std::string& text);

 private:
  MetricsCapture() = default;
  bool Open(const std::string& dir, std::string* error);
  // Locked by the caller.
  bool Frame(uint32_t type, const std::vector<std::pair<const void*, size_t>>& parts);
  void Image(uint32_t type,
             const void* head,
             size_t head_bytes,
             const uint8_t* image,
             uint64_t image_bytes,
             const std::vector<uint8_t>& tail);

  std::mutex mu_;  // guards everything below (a leaf: no other lock is taken while it is held)
  int fd_ = -1;
  std::string path_;
  uint64_t seq_ = 0;
  uint64_t file_bytes_ = 0;
  uint64_t images_ = 0, image_bytes_ = 0, images_dropped_ = 0;
  bool failed_ = false, finished_ = false;
};

}  // namespace gt::rawcap
