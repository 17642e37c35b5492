#include "tools/export/clock_align.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <numeric>

namespace gt::exporter {
namespace {

constexpr int kMaxIterations = 200;
constexpr int kOutlierPasses[] = {4, 12};  // iterations after which outliers are re-flagged
constexpr double kOutlierSigmas = 6.0;
constexpr double kOutlierFloorNs = 200.0;  // never call something within 200 ns an outlier
constexpr uint32_t kMinDriftInstances = 8;

double Median(std::vector<double>* v) {
  if (v->empty())
    return 0;
  size_t mid = v->size() / 2;
  std::nth_element(v->begin(), v->begin() + static_cast<std::ptrdiff_t>(mid), v->end());
  double hi = (*v)[mid];
  if (v->size() % 2 == 1)
    return hi;
  double lo = *std::max_element(v->begin(), v->begin() + static_cast<std::ptrdiff_t>(mid));
  return (lo + hi) / 2;
}

struct UnionFind {
  std::vector<uint32_t> parent;
  explicit UnionFind(uint32_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0u); }
  uint32_t Find(uint32_t x) {
    while (parent[x] != x)
      x = parent[x] = parent[parent[x]];
    return x;
  }
  void Join(uint32_t a, uint32_t b) {
    a = Find(a);
    b = Find(b);
    if (a != b)
      parent[std::max(a, b)] = std::min(a, b);
  }
};

// Linear model of one domain during the fit: c(t) = a + b (t - m), t relative to the origin.
struct Fit {
  double a = 0, b = 0, m = 0;
  double At(double t) const { return a + b * (t - m); }
};

// b's correction composed after a's: t -> t + a(t) -> ... + b(t + a(t)) ~ a(t) + b(t).
ClockCorrection Combine(const ClockCorrection& a, const ClockCorrection& b) {
  ClockCorrection c = a;
  c.offset_ns += b.At(a.ref_ns);
  c.drift_ppb += b.drift_ppb;
  return c;
}

}  // namespace

std::string ClockCorrection::SqlCorrected(const std::string& x) const {
  if (is_zero())
    return x;
  std::string d = "(" + x + " - (" + std::to_string(ref_ns) + "))";
  std::string s = "(" + x + " + (" + std::to_string(offset_ns) + ")";
  if (drift_ppb != 0) {
    std::string b = "(" + std::to_string(drift_ppb) + ")";
    s += " + (" + d + " / 1000000) * " + b + " / 1000 + ((" + d + " % 1000000) * " + b + ") / 1000000000";
  }
  return s + ")";
}

AlignResult EstimateAlignment(const AlignInput& in) {
  AlignResult out;
  out.domains.resize(in.domains);
  out.processes.resize(in.processes);
  if (in.domains == 0)
    return out;
  for (uint32_t d = 0; d < in.domains; ++d)
    out.domains[d].aligned_to = d;

  // Anchors grouped by instance.
  const std::vector<AlignAnchor>& an = in.anchors;
  std::vector<uint32_t> order(an.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
    return an[x].instance != an[y].instance ? an[x].instance < an[y].instance
           : an[x].domain != an[y].domain   ? an[x].domain < an[y].domain
                                            : x < y;
  });
  int64_t origin = INT64_MAX;
  for (const AlignAnchor& a : an)
    origin = std::min(origin, a.t_ns);
  std::vector<double> t(an.size());
  for (size_t i = 0; i < an.size(); ++i)
    t[i] = static_cast<double>(an[i].t_ns - origin);
  struct Range {
    size_t begin, end;
    bool shared;  // observed by two or more domains
  };
  std::vector<Range> inst;
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    bool shared = false;
    while (j < order.size() && an[order[j]].instance == an[order[i]].instance) {
      shared |= an[order[j]].domain != an[order[i]].domain;
      ++j;
    }
    inst.push_back({i, j, shared});
    i = j;
  }

  // Groups of domains connected by shared instances; each fitted against its own reference.
  UnionFind uf(in.domains);
  for (const Range& r : inst) {
    for (size_t i = r.begin + 1; i < r.end; ++i)
      uf.Join(an[order[r.begin]].domain, an[order[i]].domain);
  }
  std::vector<bool> has_shared(in.domains, false);
  for (const Range& r : inst) {
    if (!r.shared)
      continue;
    for (size_t i = r.begin; i < r.end; ++i)
      has_shared[an[order[i]].domain] = true;
  }
  std::vector<uint32_t> group_ref(in.domains, UINT32_MAX);  // by union-find root
  if (has_shared[in.reference_domain])
    group_ref[uf.Find(in.reference_domain)] = in.reference_domain;
  for (uint32_t d = 0; d < in.domains; ++d) {
    if (has_shared[d] && group_ref[uf.Find(d)] == UINT32_MAX)
      group_ref[uf.Find(d)] = d;
  }
  auto ref_of = [&](uint32_t d) { return has_shared[d] ? group_ref[uf.Find(d)] : d; };

  // Start values: breadth first from each reference, the median of the per-instance differences
  // of domain means against the domain it was reached from.
  std::vector<Fit> fit(in.domains);
  std::vector<bool> visited(in.domains, false);
  // Per instance, each domain's mean observation (anchors are sorted by instance, then domain).
  struct DomainMean {
    uint32_t domain;
    double mean;
  };
  std::vector<DomainMean> means;
  std::vector<size_t> means_begin(inst.size() + 1, 0);
  std::vector<std::vector<uint32_t>> dom_instances(in.domains);  // shared instances per domain
  for (uint32_t k = 0; k < inst.size(); ++k) {
    means_begin[k] = means.size();
    for (size_t i = inst[k].begin; i < inst[k].end;) {
      size_t j = i;
      double sum = 0;
      while (j < inst[k].end && an[order[j]].domain == an[order[i]].domain)
        sum += t[order[j++]];
      means.push_back({an[order[i]].domain, sum / static_cast<double>(j - i)});
      if (inst[k].shared)
        dom_instances[an[order[i]].domain].push_back(k);
      i = j;
    }
  }
  means_begin[inst.size()] = means.size();
  for (uint32_t root = 0; root < in.domains; ++root) {
    if (!has_shared[root] || ref_of(root) != root || visited[root])
      continue;
    std::vector<uint32_t> queue{root};
    visited[root] = true;
    for (size_t q = 0; q < queue.size(); ++q) {
      uint32_t p = queue[q];
      std::vector<std::pair<uint32_t, double>> diffs;  // (domain, difference)
      for (uint32_t k : dom_instances[p]) {
        double mp = 0;
        for (size_t i = means_begin[k]; i < means_begin[k + 1]; ++i) {
          if (means[i].domain == p)
            mp = means[i].mean;
        }
        for (size_t i = means_begin[k]; i < means_begin[k + 1]; ++i) {
          if (!visited[means[i].domain])
            diffs.emplace_back(means[i].domain, mp + fit[p].a - means[i].mean);
        }
      }
      std::sort(diffs.begin(), diffs.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
      for (size_t i = 0; i < diffs.size();) {
        size_t j = i;
        std::vector<double> v;
        while (j < diffs.size() && diffs[j].first == diffs[i].first)
          v.push_back(diffs[j++].second);
        uint32_t d = diffs[i].first;
        fit[d].a = Median(&v);
        visited[d] = true;
        queue.push_back(d);
        i = j;
      }
    }
  }
  // Domain centres (mean anchor time in shared instances) and spans.
  std::vector<double> tmin(in.domains, 1e300), tmax(in.domains, -1e300), tsum(in.domains, 0);
  std::vector<uint64_t> tcount(in.domains, 0);
  for (const Range& r : inst) {
    if (!r.shared)
      continue;
    for (size_t i = r.begin; i < r.end; ++i) {
      uint32_t d = an[order[i]].domain;
      double x = t[order[i]];
      tmin[d] = std::min(tmin[d], x);
      tmax[d] = std::max(tmax[d], x);
      tsum[d] += x;
      ++tcount[d];
    }
  }
  for (uint32_t d = 0; d < in.domains; ++d) {
    if (tcount[d] > 0)
      fit[d].m = tsum[d] / static_cast<double>(tcount[d]);
  }
  std::vector<bool> drift_ok(in.domains, false);
  for (uint32_t d = 0; d < in.domains; ++d) {
    drift_ok[d] = tcount[d] > 0 && tmax[d] - tmin[d] >= static_cast<double>(kMinDriftSpanNs) &&
                  dom_instances[d].size() >= kMinDriftInstances;
  }

  // Alternating least squares.
  std::vector<double> T(inst.size(), 0);
  std::vector<bool> outlier(an.size(), false);
  auto instance_times = [&]() {
    for (size_t k = 0; k < inst.size(); ++k) {
      double sum = 0;
      uint32_t n = 0;
      for (size_t i = inst[k].begin; i < inst[k].end; ++i) {
        uint32_t a = order[i];
        if (outlier[a] && inst[k].end - inst[k].begin > 1)
          continue;
        sum += t[a] + fit[an[a].domain].At(t[a]);
        ++n;
      }
      T[k] = n > 0 ? sum / n : 0;
    }
  };
  uint32_t iterations = 0;
  int next_outlier_pass = 0;
  for (int it = 0; it < kMaxIterations; ++it) {
    ++iterations;
    instance_times();
    // Per domain sums for y = T - t against x = t - m.
    std::vector<double> sn(in.domains, 0), sx(in.domains, 0), sy(in.domains, 0), sxx(in.domains, 0), sxy(in.domains, 0);
    for (size_t k = 0; k < inst.size(); ++k) {
      if (!inst[k].shared)
        continue;
      for (size_t i = inst[k].begin; i < inst[k].end; ++i) {
        uint32_t a = order[i];
        if (outlier[a])
          continue;
        uint32_t d = an[a].domain;
        double x = t[a] - fit[d].m, y = T[k] - t[a];
        sn[d] += 1;
        sx[d] += x;
        sy[d] += y;
        sxx[d] += x * x;
        sxy[d] += x * y;
      }
    }
    double change = 0;
    for (uint32_t d = 0; d < in.domains; ++d) {
      if (!has_shared[d] || ref_of(d) == d || sn[d] == 0)
        continue;
      double b = 0;
      double var = sxx[d] - sx[d] * sx[d] / sn[d];
      if (drift_ok[d] && var > 0)
        b = (sxy[d] - sx[d] * sy[d] / sn[d]) / var;
      b = std::clamp(b, -1e-4, 1e-4);
      double a = (sy[d] - b * sx[d]) / sn[d];
      double span = tmax[d] - tmin[d];
      change = std::max(change, std::abs(a - fit[d].a) + std::abs(b - fit[d].b) * span);
      fit[d].a = a;
      fit[d].b = b;
    }
    bool outlier_pass = next_outlier_pass < 2 && it == kOutlierPasses[next_outlier_pass];
    if (outlier_pass) {
      ++next_outlier_pass;
      instance_times();
      std::vector<std::vector<double>> res(in.domains);
      for (size_t k = 0; k < inst.size(); ++k) {
        if (!inst[k].shared)
          continue;
        for (size_t i = inst[k].begin; i < inst[k].end; ++i) {
          uint32_t a = order[i];
          res[an[a].domain].push_back(std::abs(t[a] + fit[an[a].domain].At(t[a]) - T[k]));
        }
      }
      std::vector<double> limit(in.domains);
      for (uint32_t d = 0; d < in.domains; ++d) {
        limit[d] = std::max(kOutlierFloorNs, kOutlierSigmas * 1.4826 * Median(&res[d]));
      }
      for (size_t k = 0; k < inst.size(); ++k) {
        if (!inst[k].shared)
          continue;
        for (size_t i = inst[k].begin; i < inst[k].end; ++i) {
          uint32_t a = order[i];
          uint32_t d = an[a].domain;
          outlier[a] = std::abs(t[a] + fit[d].At(t[a]) - T[k]) > limit[d];
        }
      }
      continue;
    }
    if (change < 0.5 && next_outlier_pass >= 2)
      break;
  }
  out.iterations = iterations;

  // Residuals, with the final instance times.
  instance_times();
  std::vector<double> dsq(in.domains, 0), psq(in.processes, 0);
  for (size_t k = 0; k < inst.size(); ++k) {
    for (size_t i = inst[k].begin; i < inst[k].end; ++i) {
      uint32_t a = order[i];
      const AlignAnchor& x = an[a];
      double r = t[a] + fit[x.domain].At(t[a]) - T[k];
      if (outlier[a]) {
        ++out.domains[x.domain].outliers;
        continue;
      }
      if (inst[k].shared) {
        dsq[x.domain] += r * r;
        ++out.domains[x.domain].anchors;
      }
      if (x.process < in.processes) {
        ProcessResidual& p = out.processes[x.process];
        ++p.anchors;
        psq[x.process] += r * r;
        p.max_abs_ns = std::max(p.max_abs_ns, static_cast<int64_t>(std::llround(std::abs(r))));
      }
    }
  }
  for (uint32_t p = 0; p < in.processes; ++p) {
    ProcessResidual& r = out.processes[p];
    if (r.anchors > 0)
      r.rms_ns = std::llround(std::sqrt(psq[p] / static_cast<double>(r.anchors)));
  }

  for (uint32_t d = 0; d < in.domains; ++d) {
    DomainAlignment& o = out.domains[d];
    o.instances = dom_instances[d].size();
    if (o.anchors > 0) {
      double rms = std::sqrt(dsq[d] / static_cast<double>(o.anchors));
      o.residual_rms_ns = std::llround(rms);
      o.stderr_ns = std::llround(rms / std::sqrt(static_cast<double>(std::max<uint64_t>(o.instances, 1))));
    }
    if (d == in.reference_domain) {
      o.method = "reference";
      continue;
    }
    uint32_t ref = ref_of(d);
    ClockCorrection c;
    if (has_shared[d] && ref != d) {
      // Fitted relative to `ref`; as an integer correction centred on the domain's anchors.
      c.ref_ns = origin + std::llround(fit[d].m);
      c.offset_ns = std::llround(fit[d].a);
      c.drift_ppb = std::llround(fit[d].b * 1e9);
      o.method = "collectives";
      o.aligned_to = ref;
      o.drift_estimated = drift_ok[d];
    }
    // A group without the reference domain rests on its own reference's clock pairs: the start
    // pair mapping (NTP), plus a correction when the caller has one.
    uint32_t base = has_shared[d] ? ref : d;
    if (base != in.reference_domain) {
      if (o.method != "collectives") o.method = "clock-pairs";
      const std::optional<ClockCorrection>* bp = base < in.clock_pair.size() ? &in.clock_pair[base] : nullptr;
      if (bp != nullptr && bp->has_value()) c = o.method == "collectives" ? Combine(c, **bp) : **bp;
    }
    o.correction = c;
  }
  return out;
}

}  // namespace gt::exporter
