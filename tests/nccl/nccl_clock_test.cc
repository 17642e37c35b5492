// GpuClockMap (tools/export/nccl_clock.h): GPU %globaltimer -> stream clock. Synthetic clocks with
// known relations: the base alone when it is confirmed, the causal correction when the GPU timer is
// off by seconds, NTP slewing followed through snapshots, drift between windows, inconsistent bounds.
#include <gtest/gtest.h>

#include "tools/export/nccl_clock.h"

namespace {

using gt::exporter::GpuClockMap;

constexpr uint64_t kRealtimeMinusMono = 1795000000000000000ull;  // CLOCK_REALTIME - CLOCK_MONOTONIC

// A channel that ran [mono_start, mono_end] (true monotonic times), seen by the proxy `latency` later,
// with the GPU timer = realtime + skew.
void AddChannel(GpuClockMap* m, uint64_t mono_start, uint64_t mono_end, int64_t skew, uint64_t latency,
                uint64_t api_mono) {
  uint64_t g0 = mono_start + kRealtimeMinusMono + skew;
  uint64_t g1 = mono_end + kRealtimeMinusMono + skew;
  m->AddUpperBound(g0, mono_start + latency);
  m->AddUpperBound(g1, mono_end + latency);
  m->AddLowerBound(g0, api_mono);
}

TEST(GpuClock, BaseOnlyWithoutObservations) {
  GpuClockMap m;
  m.AddSnapshot(1000, 1000 + kRealtimeMinusMono);
  m.Fit();
  EXPECT_TRUE(m.windows().empty());
  EXPECT_EQ(m.ToStreamNs(5000 + kRealtimeMinusMono), 5000);
}

TEST(GpuClock, ConfirmedBaseIsKeptExactly) {
  GpuClockMap m;
  m.AddSnapshot(1000, 1000 + kRealtimeMinusMono);
  for (int i = 0; i < 10; ++i) {
    uint64_t t = 1000000 + i * 200000;
    AddChannel(&m, t, t + 100000, /*skew=*/0, /*latency=*/3000, /*api=*/t - 20000);
  }
  m.Fit();
  ASSERT_EQ(m.windows().size(), 1u);
  EXPECT_EQ(m.windows()[0].method, "base");
  EXPECT_EQ(m.windows()[0].correction_ns, 0);
  EXPECT_EQ(*m.windows()[0].upper_ns, 3000);
  EXPECT_EQ(*m.windows()[0].lower_ns, -20000);
  EXPECT_EQ(m.windows()[0].samples, 30u);
  EXPECT_EQ(m.ToStreamNs(1200000 + kRealtimeMinusMono), 1200000);
}

TEST(GpuClock, GpuTimerAheadBySecondsIsPulledToTheObservations) {
  GpuClockMap m;
  m.AddSnapshot(1000, 1000 + kRealtimeMinusMono);
  const int64_t skew = 5000000000;  // the GPU timer is 5 s ahead of CLOCK_REALTIME
  for (int i = 0; i < 10; ++i) {
    uint64_t t = 1000000 + i * 200000;
    AddChannel(&m, t, t + 100000, skew, /*latency=*/2000 + i * 100, t - 20000);
  }
  m.Fit();
  ASSERT_EQ(m.windows().size(), 1u);
  EXPECT_EQ(m.windows()[0].method, "upper-bound");
  EXPECT_EQ(m.windows()[0].correction_ns, -skew + 2000);  // error = the smallest observation latency
  uint64_t t = 1000000 + 3 * 200000;
  EXPECT_EQ(m.ToStreamNs(t + kRealtimeMinusMono + skew), static_cast<int64_t>(t) + 2000);
}

TEST(GpuClock, GpuTimerBehindIsRaisedToTheApiLowerBound) {
  GpuClockMap m;
  m.AddSnapshot(1000, 1000 + kRealtimeMinusMono);
  const int64_t skew = -3000000;  // 3 ms behind: base times precede the API calls
  for (int i = 0; i < 4; ++i) {
    uint64_t t = 2000000 + i * 200000;
    AddChannel(&m, t, t + 100000, skew, /*latency=*/500, /*api=*/t - 10000);
  }
  m.Fit();
  ASSERT_EQ(m.windows().size(), 1u);
  // U = 3 ms + 500 ns > kTrustBaseNs: the upper bound is used (within [L, U]).
  EXPECT_EQ(m.windows()[0].method, "upper-bound");
  EXPECT_EQ(m.windows()[0].correction_ns, 3000000 + 500);
  EXPECT_EQ(*m.windows()[0].lower_ns, 3000000 - 10000);
}

TEST(GpuClock, HostClockSlewIsFollowedThroughSnapshots) {
  // realtime - monotonic grows by 2 ms over 10 s (the host's realtime clock being slewed relative to
  // CLOCK_MONOTONIC); the GPU timer follows realtime. The base interpolates between snapshots, so
  // per-window corrections stay 0. A snapshot 1 ms after another (read jitter) is dropped.
  GpuClockMap m;
  auto realtime = [](uint64_t mono) { return mono + kRealtimeMinusMono + (mono - 1000000000) / 5000; };
  m.AddSnapshot(1000000000, realtime(1000000000));
  m.AddSnapshot(1001000000, realtime(1001000000) + 37);
  m.AddSnapshot(11000000000, realtime(11000000000));
  uint64_t early = 1100000000, late = 10900000000;
  m.AddUpperBound(realtime(early), early + 1000);
  m.AddUpperBound(realtime(late), late + 1000);
  m.Fit();
  ASSERT_EQ(m.windows().size(), 2u);
  EXPECT_EQ(m.windows()[0].method, "base");
  EXPECT_EQ(m.windows()[1].base_offset_ns, static_cast<int64_t>(realtime(late) - late));
  EXPECT_NEAR(static_cast<double>(m.ToStreamNs(realtime(early))), static_cast<double>(early), 1.0);
  EXPECT_NEAR(static_cast<double>(m.ToStreamNs(realtime(late))), static_cast<double>(late), 1.0);
  // A 100 us GPU span is 100 us of CLOCK_MONOTONIC minus the 200 ppm slew, to the nanosecond.
  EXPECT_NEAR(static_cast<double>(m.ToStreamNs(realtime(early) + 100000) - m.ToStreamNs(realtime(early))), 99980.0, 1.0);
}

TEST(GpuClock, DriftIsInterpolatedBetweenWindows) {
  // The GPU timer gains 10 us per second on the host (10 ppm) and starts 1 s ahead.
  GpuClockMap m;
  m.AddSnapshot(0, kRealtimeMinusMono);
  auto gpu = [](uint64_t mono) { return mono + kRealtimeMinusMono + 1000000000 + mono / 100000; };
  for (uint64_t s = 0; s < 5; ++s) {
    for (int i = 0; i < 20; ++i) {
      uint64_t t = s * 1000000000 + 1000000 + i * 40000000;
      m.AddUpperBound(gpu(t), t + 1000);
    }
  }
  m.Fit();
  ASSERT_EQ(m.windows().size(), 5u);
  for (const auto& w : m.windows()) EXPECT_EQ(w.method, "upper-bound");
  // Within the first and last window the error is the 1 us latency plus at most the drift inside a
  // window; between window centres the interpolation follows the drift.
  for (uint64_t t : {uint64_t{500000000}, uint64_t{2000000000}, uint64_t{2700000000}, uint64_t{4400000000}}) {
    int64_t err = m.ToStreamNs(gpu(t)) - static_cast<int64_t>(t);
    EXPECT_GE(err, -12000) << t;
    EXPECT_LE(err, 12000) << t;
  }
}

TEST(GpuClock, ASparseSlowWindowDoesNotOverrideAConfirmedBase) {
  // A loaded machine: one later window holds two observations that came 400 us late. With a
  // confirmed base elsewhere that is latency, not evidence of an offset: durations stay exact.
  GpuClockMap m;
  m.AddSnapshot(0, kRealtimeMinusMono);
  for (int i = 0; i < 10; ++i) {
    uint64_t t = 1000000 + i * 100000;
    AddChannel(&m, t, t + 50000, 0, 5000, t - 20000);
  }
  AddChannel(&m, 1500000000, 1500030000, 0, 400000, 1499000000);
  m.Fit();
  ASSERT_EQ(m.windows().size(), 2u);
  EXPECT_EQ(m.windows()[1].method, "base");
  EXPECT_EQ(m.ToStreamNs(1500030000 + kRealtimeMinusMono) - m.ToStreamNs(1500000000 + kRealtimeMinusMono), 30000);
  // With enough samples the same lag is evidence: the window follows its upper bound.
  GpuClockMap n;
  n.AddSnapshot(0, kRealtimeMinusMono);
  AddChannel(&n, 1000000, 1050000, 0, 5000, 980000);
  for (int i = 0; i < 10; ++i) {
    uint64_t t = 1500000000 + i * 100000;
    AddChannel(&n, t, t + 30000, 0, 400000, t - 20000);
  }
  n.Fit();
  ASSERT_EQ(n.windows().size(), 2u);
  EXPECT_EQ(n.windows()[1].method, "upper-bound");
  EXPECT_EQ(n.windows()[1].correction_ns, 400000);
}

TEST(GpuClock, InconsistentBoundsKeepTheUpperBoundAndAreCounted) {
  GpuClockMap m;
  m.AddSnapshot(0, kRealtimeMinusMono);
  m.AddUpperBound(1000000 + kRealtimeMinusMono, 1000000 + 500);   // U = 500
  m.AddLowerBound(1000000 + kRealtimeMinusMono, 1000000 + 9000);  // L = 9000 > U: impossible
  m.Fit();
  ASSERT_EQ(m.windows().size(), 1u);
  EXPECT_EQ(m.windows()[0].method, "inconsistent");
  EXPECT_EQ(m.windows()[0].correction_ns, 500);
  EXPECT_EQ(m.inconsistent_windows(), 1u);
}

TEST(GpuClock, OnlyLowerBoundsMoveTheBaseOnlyWhenViolated) {
  GpuClockMap m;
  m.AddSnapshot(0, kRealtimeMinusMono);
  m.AddLowerBound(1000000 + kRealtimeMinusMono, 1000000 - 4000);
  m.Fit();
  EXPECT_EQ(m.windows()[0].method, "no-bound");
  EXPECT_EQ(m.ToStreamNs(1000000 + kRealtimeMinusMono), 1000000);
  GpuClockMap n;
  n.AddSnapshot(0, kRealtimeMinusMono);
  n.AddLowerBound(1000000 + kRealtimeMinusMono, 1000000 + 4000);
  n.Fit();
  EXPECT_EQ(n.windows()[0].method, "lower-bound");
  EXPECT_EQ(n.ToStreamNs(1000000 + kRealtimeMinusMono), 1004000);
}

}  // namespace
