// Reads the GPU-metrics frames (15-18) of a raw capture (metrics-<pid>.gtcap, written by
// inject/rawcap/metrics_capture.cc; docs/capture.md) on top of capture_reader.h. Used by the fake
// profiler's replay (fake_metrics_replay.cc, a TEST DOUBLE) and by the replay tests. Header-only.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "tests/fakes/capture_reader.h"

namespace fake {

struct PmConfigFrame {
  gt::rawcap::MetricsPmConfig head{};
  std::vector<std::string> names;
  std::vector<uint8_t> config_image, availability_image;
};

struct PmSampleEntry {
  gt::rawcap::MetricsSample info{};
  std::vector<double> values;
};

struct PmDataFrame {
  gt::rawcap::MetricsPmData head{};
  std::vector<uint8_t> image;
  std::vector<PmSampleEntry> samples;
};

struct RangeConfigFrame {
  gt::rawcap::MetricsRangeConfig head{};
  std::vector<std::string> names;
  std::vector<uint8_t> config_image;
};

struct RangeEntry {
  gt::rawcap::MetricsRange info{};
  std::vector<double> values;
};

struct RangeDataFrame {
  gt::rawcap::MetricsRangeData head{};
  std::vector<uint8_t> image;
  std::vector<RangeEntry> ranges;
};

struct MetricsCaptureFile {
  CaptureFile file;
  std::vector<PmConfigFrame> pm_configs;
  std::vector<PmDataFrame> pm_data;  // file order = decode order
  std::vector<RangeConfigFrame> range_configs;
  std::vector<RangeDataFrame> range_data;  // evaluation order
};

namespace detail {

struct Cursor {
  const std::vector<uint8_t>& p;
  size_t at = 0;
  bool ok = true;
  bool Take(void* dst, size_t n) {
    if (!ok || p.size() - at < n)
      return ok = false;
    std::memcpy(dst, p.data() + at, n);
    at += n;
    return true;
  }
  std::vector<uint8_t> Bytes(uint64_t n) {
    std::vector<uint8_t> out;
    if (!ok || p.size() - at < n) {
      ok = false;
      return out;
    }
    out.assign(p.begin() + static_cast<ptrdiff_t>(at), p.begin() + static_cast<ptrdiff_t>(at + n));
    at += n;
    return out;
  }
  std::vector<std::string> Names(uint32_t bytes) {
    std::vector<uint8_t> text = Bytes(bytes);
    std::vector<std::string> out;
    std::string cur;
    for (uint8_t c : text) {
      if (c == '\n') {
        out.push_back(cur);
        cur.clear();
      } else {
        cur += static_cast<char>(c);
      }
    }
    return out;
  }
  std::vector<double> Doubles(uint32_t n) {
    std::vector<double> v(n);
    Take(v.data(), n * sizeof(double));
    return v;
  }
};

}  // namespace detail

// False with *error for an unreadable file or a malformed metrics frame.
inline bool ReadMetricsCapture(const std::string& path, MetricsCaptureFile* out, std::string* error) {
  if (!ReadCaptureFile(path, &out->file, error))
    return false;
  namespace rc = gt::rawcap;
  for (const CaptureFrame& f : out->file.frames) {
    detail::Cursor c{f.payload};
    if (f.type == rc::kFrameMetricsPmConfig) {
      PmConfigFrame x;
      c.Take(&x.head, sizeof(x.head));
      x.names = c.Names(x.head.names_bytes);
      x.config_image = c.Bytes(x.head.config_bytes);
      x.availability_image = c.Bytes(x.head.availability_bytes);
      if (c.ok && x.names.size() != x.head.metric_count)
        c.ok = false;
      if (c.ok)
        out->pm_configs.push_back(std::move(x));
    } else if (f.type == rc::kFrameMetricsPmData) {
      PmDataFrame x;
      c.Take(&x.head, sizeof(x.head));
      x.image = c.Bytes(x.head.image_bytes);
      for (uint32_t i = 0; c.ok && i < x.head.sample_count; ++i) {
        PmSampleEntry e;
        c.Take(&e.info, sizeof(e.info));
        e.values = c.Doubles(x.head.metric_count);
        x.samples.push_back(std::move(e));
      }
      if (c.ok)
        out->pm_data.push_back(std::move(x));
    } else if (f.type == rc::kFrameMetricsRangeConfig) {
      RangeConfigFrame x;
      c.Take(&x.head, sizeof(x.head));
      x.names = c.Names(x.head.names_bytes);
      x.config_image = c.Bytes(x.head.config_bytes);
      if (c.ok && x.names.size() != x.head.metric_count)
        c.ok = false;
      if (c.ok)
        out->range_configs.push_back(std::move(x));
    } else if (f.type == rc::kFrameMetricsRangeData) {
      RangeDataFrame x;
      c.Take(&x.head, sizeof(x.head));
      x.image = c.Bytes(x.head.image_bytes);
      for (uint32_t i = 0; c.ok && i < x.head.range_count; ++i) {
        RangeEntry e;
        c.Take(&e.info, sizeof(e.info));
        e.values = c.Doubles(x.head.metric_count);
        x.ranges.push_back(std::move(e));
      }
      if (c.ok)
        out->range_data.push_back(std::move(x));
    } else {
      continue;
    }
    if (!c.ok || c.at != f.payload.size()) {
      *error = path + ": malformed GPU-metrics frame of type " + std::to_string(f.type) + " (seq " +
               std::to_string(f.seq) + ")";
      return false;
    }
  }
  return true;
}

}  // namespace fake
