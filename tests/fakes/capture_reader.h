// Reads a raw capture written by libgtrace.so's capture mode (inject/rawcap/capture_format.h,
// docs/capture.md). Used by the fake CUPTI's replay (fake_replay.cc) and the replay tests.
// Header-only: the fake library and the tests compile it themselves.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "inject/rawcap/capture_format.h"

namespace fake {

struct CaptureFrame {
  uint32_t type = 0;
  uint64_t seq = 0;
  std::vector<uint8_t> payload;
};

struct CaptureFile {
  uint32_t version = 0;
  std::vector<CaptureFrame> frames;  // file order
  bool has_end = false;              // a kFrameEnd was read (the process finished its capture)
  bool cut = false;                  // the file ends inside a frame (kept: every complete frame)
  std::map<std::string, std::string> info;
  gt::rawcap::CaptureEnd end{};
};

// False with *error for a file that is not a capture or has an unknown version.
inline bool ReadCaptureFile(const std::string& path, CaptureFile* out, std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = "cannot open " + path;
    return false;
  }
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() < gt::rawcap::kCaptureHeaderBytes ||
      std::memcmp(bytes.data(), gt::rawcap::kCaptureMagic, sizeof(gt::rawcap::kCaptureMagic)) != 0) {
    *error = path + ": not a gtrace raw capture (bad magic)";
    return false;
  }
  uint32_t header_bytes = 0;
  std::memcpy(&out->version, bytes.data() + 8, 4);
  std::memcpy(&header_bytes, bytes.data() + 12, 4);
  if (out->version != gt::rawcap::kCaptureVersion) {
    *error = path + ": capture format version " + std::to_string(out->version) + ", this reader knows " +
             std::to_string(gt::rawcap::kCaptureVersion);
    return false;
  }
  size_t pos = header_bytes;
  while (pos < bytes.size()) {
    if (bytes.size() - pos < gt::rawcap::kFrameHeaderBytes) {
      out->cut = true;
      break;
    }
    CaptureFrame f;
    uint32_t payload = 0;
    std::memcpy(&f.type, bytes.data() + pos, 4);
    std::memcpy(&payload, bytes.data() + pos + 4, 4);
    std::memcpy(&f.seq, bytes.data() + pos + 8, 8);
    pos += gt::rawcap::kFrameHeaderBytes;
    if (bytes.size() - pos < payload) {
      out->cut = true;
      break;
    }
    f.payload.assign(bytes.begin() + static_cast<ptrdiff_t>(pos),
                     bytes.begin() + static_cast<ptrdiff_t>(pos + payload));
    pos += payload;
    if (f.type == gt::rawcap::kFrameInfo) {
      std::string text(f.payload.begin(), f.payload.end());
      size_t at = 0;
      while (at < text.size()) {
        size_t nl = text.find('\n', at);
        if (nl == std::string::npos)
          nl = text.size();
        std::string line = text.substr(at, nl - at);
        size_t eq = line.find('=');
        if (eq != std::string::npos)
          out->info[line.substr(0, eq)] = line.substr(eq + 1);
        at = nl + 1;
      }
    } else if (f.type == gt::rawcap::kFrameEnd && f.payload.size() >= sizeof(gt::rawcap::CaptureEnd)) {
      std::memcpy(&out->end, f.payload.data(), sizeof(out->end));
      out->has_end = true;
    }
    out->frames.push_back(std::move(f));
  }
  return true;
}

// Counts of one frame type.
inline size_t CountFrames(const CaptureFile& c, uint32_t type) {
  return static_cast<size_t>(
      std::count_if(c.frames.begin(), c.frames.end(), [&](const CaptureFrame& f) { return f.type == type; }));
}

}  // namespace fake
