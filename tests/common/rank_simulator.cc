#include "tests/common/rank_simulator.h"

#include <algorithm>
#include <fstream>

#include "collector/schema_fields.h"
#include "inject/nccl/nccl_fields.h"
#include "tests/common/synthetic_stream.h"

namespace gt::test {
namespace {

constexpr int64_t kEpochRealtimeNs = 1760000000000000000;  // true time 0 on a perfect wall clock
constexpr int64_t kFirstStepNs = 100000000;                // S_0 (true ns)
constexpr int64_t kApiLeadNs = 40000;                      // the host calls NCCL this long before the GPU reaches it
constexpr int64_t kProxyLagNs = 3000;                      // the proxy sees a channel's GPU timestamp this much later
constexpr int64_t kLaunchLeadNs = 20000;
constexpr uint32_t kChannels = 2;
constexpr uint32_t kComputeStream = 7, kCommStream = 13;

constexpr uint32_t kCollApi = 512, kColl = 2, kKernelCh = 64;  // ncclProfile* bits

uint64_t SplitMix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

const char* const kComputeKernels[] = {
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel",
    "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl>(int, T2, T3)",
    "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float>(T4 *, const T2 *, int)",
    "flash_fwd_kernel",
    "flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel",
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float>>(T3)",
    "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_nn",
    "void at::native::elementwise_kernel<128, 2>(int, T3)",
};
constexpr char kNcclKernel[] = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";

struct Host {
  int64_t mono_base, ntp, drift_ppb;
  int64_t Mono(int64_t t) const { return mono_base + t + t / 1000 * drift_ppb / 1000000; }
  // NTP slews CLOCK_REALTIME and CLOCK_MONOTONIC alike: both run at the host's rate.
  int64_t Real(int64_t t) const { return kEpochRealtimeNs + ntp + t + t / 1000 * drift_ppb / 1000000; }
};

// One collective instance: each rank's GPU entry and end.
struct Instance {
  std::vector<int64_t> entry, end;
  uint64_t seq = 0;
  uint64_t count = 0;
};

struct Step {
  int64_t start = 0, next = 0;
  std::vector<int64_t> compute_start, compute_ns;
  std::vector<Instance> colls;  // buckets, then the final all-reduce
};

}  // namespace

int64_t SimHostClockError(const SimConfig& c, uint32_t host, int64_t t) {
  int64_t ntp = host < c.ntp_offset_ns.size() ? c.ntp_offset_ns[host] : 0;
  int64_t drift = host < c.drift_ppb.size() ? c.drift_ppb[host] : 0;
  return ntp + t / 1000 * drift / 1000000;
}

void SimulateRanks(const SimConfig& c, const std::string& dir, SimTruth* truth) {
  const uint32_t n = c.ranks;
  const uint32_t hosts = (n + c.ranks_per_host - 1) / c.ranks_per_host;
  std::vector<Host> host(hosts);
  for (uint32_t h = 0; h < hosts; ++h) {
    host[h].mono_base = 1000000000000 + static_cast<int64_t>(h) * 77777777777;
    host[h].ntp = h < c.ntp_offset_ns.size() ? c.ntp_offset_ns[h] : 0;
    host[h].drift_ppb = h < c.drift_ppb.size() ? c.drift_ppb[h] : 0;
  }
  auto imb = [&](uint32_t r) { return r < c.imbalance.size() ? c.imbalance[r] : 1.0; };
  auto jitter = [&](uint32_t r, uint64_t k) {
    return c.end_jitter_ns > 0 ? static_cast<int64_t>(SplitMix(c.seed * 1000003 + r * 7919 + k * 104729) %
                                                      static_cast<uint64_t>(c.end_jitter_ns + 1))
                               : 0;
  };

  // The global timeline.
  std::vector<Step> steps(c.steps);
  int64_t s_start = kFirstStepNs;
  uint64_t k_global = 0, seq = 0;
  for (uint32_t i = 0; i < c.steps; ++i) {
    Step& st = steps[i];
    st.start = s_start;
    st.compute_start.resize(n);
    st.compute_ns.resize(n);
    std::vector<int64_t> comm_free(n, 0);  // when the comm stream of rank r is free
    for (uint32_t r = 0; r < n; ++r) {
      int64_t gap = c.host_gap_ns + (static_cast<int32_t>(r) == c.straggler_rank ? c.straggler_delay_ns : 0);
      st.compute_start[r] = s_start + gap;
      st.compute_ns[r] = static_cast<int64_t>(static_cast<double>(c.compute_ns) * imb(r));
    }
    for (uint32_t b = 0; b <= c.buckets; ++b) {
      bool final = b == c.buckets;
      Instance in;
      in.entry.resize(n);
      in.end.resize(n);
      in.seq = ++seq;
      in.count = final ? 1 : 25u << 20;
      int64_t last = INT64_MIN;
      for (uint32_t r = 0; r < n; ++r) {
        int64_t a = st.compute_start[r], cn = st.compute_ns[r];
        int64_t planned = final ? a + cn : a + cn / 2 + cn / 2 * (b + 1) / (c.buckets + 1);
        in.entry[r] = std::max(planned, comm_free[r]);
        last = std::max(last, in.entry[r]);
      }
      int64_t end = last + (final ? c.final_ns : c.bucket_ns);
      for (uint32_t r = 0; r < n; ++r) {
        in.end[r] = end + jitter(r, k_global);
        comm_free[r] = in.end[r];
      }
      ++k_global;
      st.colls.push_back(std::move(in));
    }
    int64_t final_end = 0;
    for (int64_t e : st.colls.back().end)
      final_end = std::max(final_end, e);
    st.next = final_end + c.step_turnaround_ns;
    s_start = st.next;
  }

  // Ground truth.
  truth->paths.clear();
  truth->host_of_rank.assign(n, 0);
  truth->first_kernel_true_ns.assign(n, std::vector<int64_t>(c.steps));
  truth->epoch_realtime_ns = kEpochRealtimeNs;
  truth->compute_ns.assign(n, 0);
  truth->busy_ns.assign(n, 0);
  truth->comm_ns.assign(n, 0);
  truth->overlap_ns.assign(n, 0);
  truth->wait_caused_ns.assign(n, 0);
  truth->kernels = truth->nccl_records = truth->records = 0;
  int64_t w0 = steps.front().start;
  int64_t w1 = steps.back().next - 10000;  // the last NVTX pop
  truth->window_ns = w1 - w0;
  for (const Step& st : steps) {
    for (uint32_t r = 0; r < n; ++r) {
      int64_t a = st.compute_start[r], b = a + st.compute_ns[r];
      truth->compute_ns[r] += b - a;
      for (const Instance& in : st.colls) {
        truth->comm_ns[r] += in.end[r] - in.entry[r];
        truth->overlap_ns[r] += std::max<int64_t>(0, std::min(b, in.end[r]) - std::max(a, in.entry[r]));
      }
    }
    for (const Instance& in : st.colls) {
      auto last = std::max_element(in.entry.begin(), in.entry.end());
      int64_t caused = 0;
      for (int64_t e : in.entry)
        caused += *last - e;
      truth->wait_caused_ns[static_cast<size_t>(last - in.entry.begin())] += caused;
    }
  }
  double sum_c = 0, max_c = 0, sum_busy = 0;
  for (uint32_t r = 0; r < n; ++r) {
    truth->busy_ns[r] = truth->compute_ns[r] + truth->comm_ns[r] - truth->overlap_ns[r];
    sum_c += static_cast<double>(truth->compute_ns[r]);
    max_c = std::max(max_c, static_cast<double>(truth->compute_ns[r]));
    sum_busy += static_cast<double>(truth->busy_ns[r]);
  }
  double mean_c = sum_c / n, mean_busy = sum_busy / n, w = static_cast<double>(truth->window_ns);
  truth->load_balance = mean_c / max_c;
  truth->communication = max_c / mean_busy;
  truth->orchestration = mean_busy / w;
  truth->parallel = mean_c / w;

  // One stream per rank.
  for (uint32_t r = 0; r < n; ++r) {
    uint32_t h = r / c.ranks_per_host;
    truth->host_of_rank[r] = h;
    const Host& hc = host[h];
    uint32_t pid = 20000 + r * 10, proxy_tid = pid + 1;
    int64_t t_start = 1000000 + static_cast<int64_t>(r) * 1000;  // stream start, true time
    SyntheticStream s(pid, static_cast<uint64_t>(hc.Mono(t_start)), static_cast<uint64_t>(hc.Real(t_start)),
                      "node" + std::to_string(h), "boot-" + std::to_string(h));
    s.info().rank.rank = static_cast<int32_t>(r);
    s.info().rank.local_rank = static_cast<int32_t>(r % c.ranks_per_host);
    s.info().rank.world_size = static_cast<int32_t>(n);
    s.info().rank.source = "SLURM_PROCID";
    s.config().trace = "nvtx,cuda,nccl";
    auto mono = [&](int64_t t) { return static_cast<uint64_t>(hc.Mono(t)); };
    auto gpu = [&](int64_t t) { return static_cast<uint64_t>(hc.Real(t)); };

    s.BeginChunk(1, pid, mono(t_start));
    s.Thread(pid, "python");
    NcclCommSpec comm;
    comm.comm_hash = c.comm_hash;
    comm.n_nodes = static_cast<int32_t>(hosts);
    comm.n_ranks = static_cast<int32_t>(n);
    comm.rank = static_cast<int32_t>(r);
    comm.init_ts_ns = mono(t_start + 10000);
    comm.init_tid = pid;
    s.NcclComm(comm);
    s.EndChunk();
    s.BeginChunk(2, proxy_tid, mono(t_start));
    s.Thread(proxy_tid, "python");
    s.EndChunk();
    // CUPTI's machine description, recorded at the start whatever the capture window: one GPU per
    // local rank (CUDA ordinal = local rank, as torchrun's cuda:LOCAL_RANK), with a UUID unique per
    // (host, GPU); one context whose NULL stream carries compute, NCCL on a non-blocking stream.
    uint32_t device = r % c.ranks_per_host;
    s.BeginChunk(0, 0, 0);
    DeviceSpec dev;
    dev.device_id = device;
    dev.uuid = std::string("\x5e\x1a\x00gtrace-sim-", 14) + static_cast<char>(h) + static_cast<char>(device);
    dev.uuid[2] = static_cast<char>(h >> 8);
    s.Device(dev);
    ContextSpec ctx;
    ctx.device_id = device;
    ctx.null_stream_id = kComputeStream;
    s.Context(ctx);
    StreamSpec comm_stream;
    comm_stream.stream_id = kCommStream;
    s.Stream(comm_stream);
    s.EndChunk();

    uint64_t event_id = 0;
    uint32_t correlation = 0;
    int64_t next_snapshot = t_start + 1000000000;
    for (uint32_t i = 0; i < c.steps; ++i) {
      const Step& st = steps[i];
      while (next_snapshot <= st.start) {
        s.BeginChunk(0, 0, 0);
        s.ClockSnapshot(mono(next_snapshot), static_cast<uint64_t>(hc.Real(next_snapshot)));
        s.EndChunk();
        next_snapshot += 1000000000;
      }
      // Host thread: the step range and NCCL's API/enqueue events.
      s.BeginChunk(1, pid, mono(st.start));
      if (!c.step_range.empty()) {
        NvtxSpec push;
        push.kind = field::enums::kNvtxPush;
        push.ts_ns = mono(st.start);
        push.text = c.step_range;
        s.Nvtx(push);
        ++truth->records;
      }
      std::vector<std::pair<uint64_t, uint64_t>> coll_ids;  // (coll event id, seq)
      for (const Instance& in : st.colls) {
        int64_t api = in.entry[r] - kApiLeadNs;
        NcclSpec e;
        e.kind = nccl::field::kind::kStart;
        e.ts_ns = mono(api);
        e.event_id = ++event_id;
        e.type = kCollApi;
        e.comm_index = 1;
        e.func = "AllReduce";
        e.datatype = "ncclFloat32";
        e.count = in.count;
        e.stream = 0x5500;
        s.Nccl(e);
        uint64_t api_id = e.event_id;
        NcclSpec coll = e;
        coll.ts_ns = mono(api + 1000);
        coll.event_id = ++event_id;
        coll.type = kColl;
        coll.parent_id = api_id;
        coll.algo = "RING";
        coll.proto = "LL";
        coll.seq_number = in.seq;
        coll.n_channels = kChannels;
        coll.stream = 0;
        coll.rank = static_cast<int32_t>(r);
        s.Nccl(coll);
        NcclSpec stop;
        stop.kind = nccl::field::kind::kStop;
        stop.ts_ns = mono(api + 4000);
        stop.event_id = coll.event_id;
        s.Nccl(stop);
        stop.ts_ns = mono(api + 5000);
        stop.event_id = api_id;
        s.Nccl(stop);
        coll_ids.emplace_back(coll.event_id, in.seq);
        truth->nccl_records += 4;
      }
      if (!c.step_range.empty()) {
        NvtxSpec pop;
        pop.kind = field::enums::kNvtxPop;
        pop.ts_ns = mono(st.next - 10000);
        s.Nvtx(pop);
        ++truth->records;
      }
      s.EndChunk();
      // Proxy thread: kernel channels with their GPU timestamps.
      s.BeginChunk(2, proxy_tid, mono(st.start));
      for (size_t k = 0; k < st.colls.size(); ++k) {
        const Instance& in = st.colls[k];
        for (uint32_t ch = 0; ch < kChannels; ++ch) {
          NcclSpec e;
          e.kind = nccl::field::kind::kStart;
          e.ts_ns = mono(in.entry[r] + kProxyLagNs);
          e.event_id = ++event_id;
          e.type = kKernelCh;
          e.parent_id = coll_ids[k].first;
          e.channel_id = ch;
          e.gpu_timer_ns = gpu(in.entry[r]);
          s.Nccl(e);
          NcclSpec stop;
          stop.kind = nccl::field::kind::kStop;
          stop.ts_ns = mono(in.end[r] + kProxyLagNs);
          stop.event_id = e.event_id;
          stop.gpu_timer_ns = gpu(in.end[r]);
          s.Nccl(stop);
          truth->nccl_records += 2;
        }
      }
      s.EndChunk();
      // CUPTI activity: compute and NCCL kernels (and their launches).
      s.BeginChunk(0, 0, 0);
      int64_t a = st.compute_start[r], cn = st.compute_ns[r];
      truth->first_kernel_true_ns[r][i] = a;
      uint32_t kn = std::max<uint32_t>(1, c.kernels_per_step);
      for (uint32_t j = 0; j < kn; ++j) {
        int64_t k0 = a + cn * j / kn, k1 = a + cn * (j + 1) / kn;
        KernelSpec k;
        k.start_ns = mono(k0);
        k.duration_ns = static_cast<uint64_t>(hc.Mono(k1) - hc.Mono(k0));
        k.device_id = device;
        k.stream_id = kComputeStream;
        k.correlation_id = ++correlation;
        k.name = kComputeKernels[(j * 7 + i) % (sizeof(kComputeKernels) / sizeof(kComputeKernels[0]))];
        s.Kernel(k);
        if (c.cuda_api) {
          ApiSpec api;
          api.start_ns = mono(k0 - kLaunchLeadNs);
          api.duration_ns = 3000;
          api.tid = pid;
          api.correlation_id = k.correlation_id;
          s.Api(api);
          ++truth->records;
        }
        ++truth->kernels;
      }
      for (const Instance& in : st.colls) {
        KernelSpec k;
        k.start_ns = mono(in.entry[r]);
        k.duration_ns = static_cast<uint64_t>(hc.Mono(in.end[r]) - hc.Mono(in.entry[r]));
        k.device_id = device;
        k.stream_id = kCommStream;
        k.correlation_id = ++correlation;
        k.name = kNcclKernel;
        s.Kernel(k);
        ++truth->kernels;
      }
      s.EndChunk();
    }
    s.Close();
    std::string path = dir + "/rank-" + std::to_string(r) + ".gtrace";
    s.WriteTo(path);
    truth->paths.push_back(path);
  }
  truth->records += truth->kernels + truth->nccl_records;
}

}  // namespace gt::test
