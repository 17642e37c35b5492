#include "tools/viewers/progress.h"

#include <algorithm>

namespace gt::viewers {
namespace {

std::string Count(uint64_t n) {
  char buf[32];
  if (n >= 10'000'000) {
    std::snprintf(buf, sizeof(buf), "%.1fM", static_cast<double>(n) / 1e6);
  } else if (n >= 10'000) {
    std::snprintf(buf, sizeof(buf), "%.1fk", static_cast<double>(n) / 1e3);
  } else {
    std::snprintf(buf, sizeof(buf), "%llu", static_cast<unsigned long long>(n));
  }
  return buf;
}

}  // namespace

void Progress::Update(uint64_t done) {
  if (!enabled_)
    return;
  // Checking the clock for every event would cost more than the export of a small event.
  if ((++calls_ & 1023) != 0)
    return;
  auto now = std::chrono::steady_clock::now();
  if (drew_ && now - last_ < std::chrono::milliseconds(250))
    return;
  last_ = now;
  Draw(done);
}

void Progress::Draw(uint64_t done) {
  uint64_t shown = std::min(done, total_);
  int percent = total_ == 0 ? 100 : static_cast<int>(shown * 100 / total_);
  std::fprintf(out_, "\rgtrace: %s: %3d%% (%s/%s events)", label_.c_str(), percent, Count(shown).c_str(),
               Count(total_).c_str());
  std::fflush(out_);
  drew_ = true;
}

void Progress::Finish() {
  if (!enabled_ || !drew_)
    return;
  Draw(total_);
  std::fputc('\n', out_);
  std::fflush(out_);
}

}  // namespace gt::viewers
