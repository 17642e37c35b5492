#include "tools/export/session_plan.h"

namespace gt::exporter {

void ClockPairFit::Add(uint64_t mono_ns, uint64_t realtime_ns) {
  int64_t mono = static_cast<int64_t>(mono_ns);
  int64_t diff = static_cast<int64_t>(realtime_ns - mono_ns);
  if (pairs == 0) {
    first_mono_ns = last_mono_ns = mono;
    y0_ns = diff;
  } else if (mono - last_mono_ns < 900000000) {
    return;
  }
  last_mono_ns = mono;
  double x = static_cast<double>(mono - first_mono_ns) / 1e9;
  double y = static_cast<double>(diff - y0_ns);
  ++pairs;
  sx += x;
  sy += y;
  sxx += x * x;
  sxy += x * y;
}

bool ClockPairFit::DriftPpb(int64_t* ppb) const {
  if (pairs < 3 || last_mono_ns - first_mono_ns < 2000000000)
    return false;
  double n = static_cast<double>(pairs);
  double var = sxx - sx * sx / n;
  if (var <= 0)
    return false;
  double slope = (sxy - sx * sy / n) / var;  // ns of (realtime - mono) per s
  *ppb = static_cast<int64_t>(slope >= 0 ? slope + 0.5 : slope - 0.5);
  return true;
}

}  // namespace gt::exporter
