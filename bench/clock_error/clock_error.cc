// clock_error: how far a TSC timestamp converted offline lands from CLOCK_MONOTONIC read at the
// same instant, over a long run. Uses the recorder's own code (collector/clock.h: ReadTicks,
// ReadClockPair; a calibration pair every --pair-interval-ms, as the drain thread writes one every
// second) and the exporter's own conversion (tools/stream/tick_clock.h, piecewise-linear).
//
//   clock_error [--seconds S] [--sample-us U] [--pair-interval-ms P] [--max-bracket-ns B]
//
// Every U us it takes a probe: ticks, CLOCK_MONOTONIC, ticks back to back (the probe's instant is
// the middle of the tick bracket; the bracket width bounds how well "the same instant" is known).
// At the end it converts every probe's ticks with the pairs and prints the error against the
// CLOCK_MONOTONIC reading: max |error|, p99, p50, mean, and the widest probe bracket in ns.
// Also the error of a single-segment conversion (first and last pair only) for comparison.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "collector/clock.h"
#include "collector/clock_source.h"
#include "tools/stream/tick_clock.h"

namespace {
struct Probe {
  uint64_t ticks;
  uint64_t mono_ns;
  uint64_t width_ticks;
};
}  // namespace

int main(int argc, char** argv) {
  long seconds = 600, sample_us = 1000, pair_ms = 1000;
  double max_bracket_ns = 200;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string f = argv[i];
    long v = std::atol(argv[i + 1]);
    if (f == "--seconds") seconds = v;
    else if (f == "--sample-us") sample_us = v;
    else if (f == "--pair-interval-ms") pair_ms = v;
    else if (f == "--max-bracket-ns") max_bracket_ns = static_cast<double>(v);
  }
  std::string warning;
  if (!gt::SelectStreamClock(gt::ClockChoice::kTsc, gt::ProbeTickCounter(), &warning)) {
    std::fprintf(stderr, "clock_error: no usable tick counter here: %s\n", warning.c_str());
    return 77;
  }
  std::vector<gt::stream::TickPair> pairs;
  std::vector<Probe> probes;
  probes.reserve(static_cast<size_t>(seconds) * 1000000 / static_cast<size_t>(sample_us) + 16);
  auto take_pair = [&pairs] {
    gt::ClockPair p = gt::ReadClockPair();
    pairs.push_back({p.stream_ns, p.monotonic_ns});
  };
  take_pair();
  uint64_t start = gt::NowNs();
  uint64_t end = start + static_cast<uint64_t>(seconds) * 1000000000ull;
  uint64_t next_pair = start + static_cast<uint64_t>(pair_ms) * 1000000ull;
  while (true) {
    // Warm both reads first: right after a sleep the first clock_gettime runs cold (cache, vDSO
    // page) and lands late in its bracket, a bias of the probe, not of the conversion.
    (void)gt::ReadTicks();
    (void)gt::NowNs();
    uint64_t a = gt::ReadTicks();
    uint64_t m = gt::NowNs();
    uint64_t b = gt::ReadTicks();
    probes.push_back({a + (b - a) / 2, m, b - a});
    if (m >= end) break;
    if (m >= next_pair) {
      take_pair();
      next_pair += static_cast<uint64_t>(pair_ms) * 1000000ull;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(sample_us));
  }
  take_pair();
  gt::stream::TickClock piecewise;
  piecewise.Build(pairs);
  gt::stream::TickClock single;
  single.Build({pairs.front(), pairs.back()});
  double ticks_per_ns = piecewise.ticks_per_second() / 1e9;
  // Probes whose bracket is wider than --max-bracket-ns (the thread was preempted between the
  // reads) say nothing about the conversion: they are counted and left out.
  auto report = [&](const char* name, const gt::stream::TickClock& c) {
    std::vector<double> err;
    err.reserve(probes.size());
    double sum = 0;
    size_t wide = 0;
    for (const Probe& p : probes) {
      if (static_cast<double>(p.width_ticks) > max_bracket_ns * ticks_per_ns) {
        ++wide;
        continue;
      }
      double e = static_cast<double>(static_cast<int64_t>(c.ToNs(p.ticks) - p.mono_ns));
      err.push_back(std::fabs(e));
      sum += e;
    }
    std::sort(err.begin(), err.end());
    std::printf("%s: probes=%zu (left out, bracket wider than %.0f ns: %zu) max_abs_error_ns=%.0f p99_abs_error_ns=%.0f p50_abs_error_ns=%.0f mean_error_ns=%.1f\n",
                name, err.size(), max_bracket_ns, wide, err.back(), err[err.size() * 99 / 100], err[err.size() / 2],
                sum / static_cast<double>(err.size()));
  };
  uint64_t widest = 0;
  for (const Probe& p : probes) widest = std::max(widest, p.width_ticks);
  std::printf("seconds=%ld sample_us=%ld pair_interval_ms=%ld pairs=%zu tick_mhz=%.3f widest_probe_bracket_ns=%.0f\n",
              seconds, sample_us, pair_ms, pairs.size(), piecewise.ticks_per_second() / 1e6,
              static_cast<double>(widest) / ticks_per_ns);
  report("piecewise", piecewise);
  report("single_segment", single);
  return 0;
}
