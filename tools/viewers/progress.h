// Progress: a one-line "gtrace: export perfetto: 42% (1.2M/2.9M events)" that rewrites itself on a
// terminal. Off when not enabled (the CLI enables it only when stderr is a terminal), so logs and
// pipes stay clean. Redraws at most 4 times a second.
//
// Used by the exporting thread; borrows `out`.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace gt::viewers {

class Progress {
 public:
  Progress(std::string label, uint64_t total, bool enabled, FILE* out = stderr)
      : label_(std::move(label)), total_(total), enabled_(enabled), out_(out) {}
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void Update(uint64_t done);
  void Finish();  // final 100% line and a newline (if anything was drawn)
  bool drew() const { return drew_; }

 private:
  void Draw(uint64_t done);
  std::string label_;
  uint64_t total_;
  bool enabled_;
  FILE* out_;
  bool drew_ = false;
  uint64_t calls_ = 0;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace gt::viewers
