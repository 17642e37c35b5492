// The clock-alignment estimator on synthetic anchors with known offsets and drifts.
#include "tools/export/clock_align.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cmath>
#include <cstdint>
#include <random>

namespace gt::exporter {
namespace {

// Domain d's observation of an instance ending at true time T: T - (offset_d + drift_d * T) + noise,
// so the correction that aligns it is +offset_d + drift_d * T (relative to domain 0 with 0, 0).
struct Planted {
  int64_t offset_ns;
  int64_t drift_ppb;
  int64_t Error(int64_t t) const { return offset_ns + t / 1000 * drift_ppb / 1000000; }
};

AlignInput Make(const std::vector<Planted>& domains,
                uint32_t procs_per_domain,
                uint32_t instances,
                int64_t spacing_ns,
                int64_t noise_ns,
                uint64_t seed,
                std::vector<std::vector<uint32_t>> groups = {}) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> noise(0, noise_ns);
  AlignInput in;
  in.domains = static_cast<uint32_t>(domains.size());
  in.processes = in.domains * procs_per_domain;
  if (groups.empty()) {
    groups.push_back({});
    for (uint32_t d = 0; d < in.domains; ++d)
      groups[0].push_back(d);
  }
  uint32_t k = 0;
  for (const auto& group : groups) {
    for (uint32_t i = 0; i < instances; ++i, ++k) {
      int64_t t = 1000000000 + static_cast<int64_t>(i) * spacing_ns;
      for (uint32_t d : group) {
        for (uint32_t p = 0; p < procs_per_domain; ++p) {
          in.anchors.push_back({d, d * procs_per_domain + p, k, t - domains[d].Error(t) + noise(rng)});
        }
      }
    }
  }
  return in;
}

TEST(ClockAlign, RecoversOffsetsAndDrifts) {
  std::vector<Planted> planted = {{0, 0}, {5000000, 20000}, {-3200000, -7000}, {150000, 0}};
  AlignInput in = Make(planted, 4, 600, 15000000, 2000, 1);  // 9 s of collectives, 2 us end skew
  AlignResult r = EstimateAlignment(in);
  EXPECT_EQ(r.domains[0].method, "reference");
  EXPECT_TRUE(r.domains[0].correction.is_zero());
  for (uint32_t d = 1; d < planted.size(); ++d) {
    EXPECT_EQ(r.domains[d].method, "collectives") << d;
    EXPECT_TRUE(r.domains[d].drift_estimated) << d;
    for (int64_t t : {int64_t{1000000000}, int64_t{5000000000}, int64_t{10000000000}}) {
      // The correction is a function of the observed (unaligned) time.
      int64_t observed = t - planted[d].Error(t);
      EXPECT_NEAR(r.domains[d].correction.At(observed), planted[d].Error(t), 500) << "domain " << d << " t " << t;
    }
    EXPECT_LT(r.domains[d].residual_rms_ns, 1500) << d;
    EXPECT_LT(r.domains[d].stderr_ns, 100) << d;
  }
  for (const ProcessResidual& p : r.processes) {
    EXPECT_EQ(p.anchors, 600u);
    EXPECT_LT(p.max_abs_ns, 2500);
  }
}

TEST(ClockAlign, OutliersAreDroppedAndCounted) {
  std::vector<Planted> planted = {{0, 0}, {2000000, 0}};
  AlignInput in = Make(planted, 2, 400, 10000000, 1000, 2);
  for (size_t i = 0; i < in.anchors.size(); i += 97)
    in.anchors[i].t_ns += 3000000;  // 1 % late by 3 ms
  AlignResult r = EstimateAlignment(in);
  EXPECT_NEAR(r.domains[1].correction.At(1000000000), 2000000, 500);
  EXPECT_GT(r.domains[0].outliers + r.domains[1].outliers, 10u);
  // Without the outlier pass the 3 ms hits would move the mean by ~15 us: the pass matters.
}

TEST(ClockAlign, ChainsThroughSharedDomainsAndFallsBackToClockPairs) {
  // 0-1 share one communicator, 1-2 another: 2 is aligned to 0 through 1. 3 shares nothing.
  std::vector<Planted> planted = {{0, 0}, {1000000, 0}, {-2500000, 0}, {7000000, 0}};
  AlignInput in = Make(planted, 2, 200, 10000000, 1000, 3, {{0, 1}, {1, 2}});
  in.clock_pair.resize(4);
  in.clock_pair[3] = ClockCorrection{123, 456, 0};
  AlignResult r = EstimateAlignment(in);
  EXPECT_EQ(r.domains[2].method, "collectives");
  EXPECT_EQ(r.domains[2].aligned_to, 0u);
  EXPECT_NEAR(r.domains[2].correction.At(1000000000 + 2500000), -2500000, 500);
  EXPECT_EQ(r.domains[3].method, "clock-pairs");
  EXPECT_EQ(r.domains[3].correction.offset_ns, 123);
  in.clock_pair[3].reset();
  r = EstimateAlignment(in);
  EXPECT_EQ(r.domains[3].method, "clock-pairs");
  EXPECT_TRUE(r.domains[3].correction.is_zero());
}

TEST(ClockAlign, ShortSpanFitsNoDrift) {
  std::vector<Planted> planted = {{0, 0}, {400000, 0}};
  AlignInput in = Make(planted, 1, 50, 1000000, 500, 4);  // 50 ms of collectives
  AlignResult r = EstimateAlignment(in);
  EXPECT_FALSE(r.domains[1].drift_estimated);
  EXPECT_EQ(r.domains[1].correction.drift_ppb, 0);
  EXPECT_NEAR(r.domains[1].correction.offset_ns, 400000, 500);
}

TEST(ClockAlign, SqlExpressionEqualsTheIntegerFormula) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(":memory:", &db), SQLITE_OK);
  for (ClockCorrection c : {ClockCorrection{-1234567, 17345, 5000000000}, ClockCorrection{99, -99999, -7},
                            ClockCorrection{0, 100000, 123456789012}}) {
    for (int64_t t : {int64_t{0}, int64_t{1}, int64_t{999999}, int64_t{-5000001}, int64_t{7340111222333},
                      int64_t{86400000000000}}) {
      std::string sql = "SELECT " + c.SqlCorrected("(" + std::to_string(t) + ")");
      sqlite3_stmt* st = nullptr;
      ASSERT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr), SQLITE_OK) << sql;
      ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
      EXPECT_EQ(sqlite3_column_type(st, 0), SQLITE_INTEGER);
      EXPECT_EQ(sqlite3_column_int64(st, 0), c.Apply(t)) << sql;
      sqlite3_finalize(st);
    }
  }
  sqlite3_close(db);
}

}  // namespace
}  // namespace gt::exporter
