// cuda_training: bytes on disk of CUDA kernel and API records for a training-like run, in the compact
// encoding (issue 16) and in the full-message encoding streams had before, from the same input.
//
// The input is real CUPTI record layouts (CUpti_ActivityKernel10, CUpti_ActivityAPI from CUDA 13.0's
// headers) with synthetic values: LAUNCHES kernel launches from CONFIGS distinct launch
// configurations on 3 streams, each launched by a cudaLaunchKernel call, a cudaMemcpyAsync after
// every 10th launch and a cudaStreamSynchronize every 100 (the "step"); the CPU issues a launch every
// ~5 us, each stream runs its kernels back to back (5-120 us each), the step's sync waits for them.
// Records reach the decoder in CUPTI-sized buffers (8 MiB), as the drain thread sees them.
//
//   cuda_training OUT_PREFIX [--launches N] [--configs C] [--tick-ghz F] [--rounds R] [--only compact|full]
// writes OUT_PREFIX-compact.gtrace and OUT_PREFIX-full.gtrace (read them with bench/stream_sizes;
// also the kernel-heavy input of the export benchmark)
// and prints the drain thread's CPU time per record for each encoding (R alternating rounds,
// median). --tick-ghz scales every time by F (F ticks per ns, as a TSC stream stores them).
#include <cupti.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "collector/chunk_builder.h"
#include "collector/string_interner.h"
#include "inject/cupti/activity_decoder.h"
#include "tests/common/synthetic_stream.h"

namespace {

struct Buffers {
  std::vector<std::vector<uint8_t>> bytes;
  std::vector<std::vector<size_t>> offsets;
  template <typename T>
  void Add(const T& record) {
    if (bytes.empty() || bytes.back().size() + sizeof(T) > (8u << 20)) {
      bytes.emplace_back();
      bytes.back().reserve(8u << 20);
      offsets.emplace_back();
    }
    std::vector<uint8_t>& b = bytes.back();
    size_t at = b.size();
    offsets.back().push_back(at);
    b.resize(at + ((sizeof(T) + 7) & ~size_t{7}), 0);
    std::memcpy(b.data() + at, &record, sizeof(T));
  }
};
const std::vector<size_t>* g_offsets = nullptr;

CUptiResult CUPTIAPI NextRecord(uint8_t* buffer, size_t, CUpti_Activity** record) {
  // Records are visited in order: remember the index instead of searching.
  static size_t next = 0;
  if (*record == nullptr) next = 0;
  if (next >= g_offsets->size()) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  *record = reinterpret_cast<CUpti_Activity*>(buffer + (*g_offsets)[next++]);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI CallbackName(CUpti_CallbackDomain, uint32_t cbid, const char** name) {
  switch (cbid) {
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000: *name = "cudaLaunchKernel_v7000"; return CUPTI_SUCCESS;
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020: *name = "cudaMemcpyAsync_v3020"; return CUPTI_SUCCESS;
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020:
      *name = "cudaStreamSynchronize_v3020";
      return CUPTI_SUCCESS;
    default: return CUPTI_ERROR_INVALID_PARAMETER;
  }
}

CUpti_ActivityAPI Api(uint32_t cbid, uint64_t start, uint64_t end, uint32_t corr) {
  CUpti_ActivityAPI r;
  std::memset(&r, 0, sizeof(r));
  r.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  r.cbid = cbid;
  r.start = start;
  r.end = end;
  r.processId = 4242;
  r.threadId = 4243;
  r.correlationId = corr;
  return r;
}

// The training run, one CUPTI buffer at a time (the whole run need not fit in memory).
class Training {
 public:
  Training(long launches, int configs, double tick_per_ns)
      : launches_(launches), configs_(configs), tick_per_ns_(tick_per_ns) {}
  bool done() const { return i_ >= launches_; }
  // Fills `b` (cleared first) with the next records, up to 8 MiB.
  void Next(Buffers* b) {
    b->bytes.clear();
    b->offsets.clear();
    if (i_ == 0) Describe(b);
    // Add opens a second buffer when a record no longer fits the first (records are < 1 KiB).
    while (!done() && (b->bytes.empty() || b->bytes[0].size() < (8u << 20) - 1024)) Launch(b);
  }

 private:
  // The device, context and streams, as CUPTI reports them before the first kernel.
  static void Describe(Buffers* b) {
    CUpti_ActivityDevice5 d;
    std::memset(&d, 0, sizeof(d));
    d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
    d.id = 0;
    d.name = "NVIDIA H100 80GB HBM3";
    d.globalMemorySize = 85031714816ull;
    d.numMultiprocessors = 132;
    d.coreClockRate = 1980000;
    d.computeCapabilityMajor = 9;
    d.numThreadsPerWarp = 32;
    d.uuid.bytes[0] = 0x5a;
    d.isCudaVisible = 1;
    b->Add(d);
    CUpti_ActivityContext3 c;
    std::memset(&c, 0, sizeof(c));
    c.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
    c.contextId = 1;
    c.deviceId = 0;
    c.computeApiKind = CUPTI_ACTIVITY_COMPUTE_API_CUDA;
    c.nullStreamId = 7;
    b->Add(c);
    for (uint32_t id : {7u, 13u, 14u, 15u}) {
      CUpti_ActivityStream st;
      std::memset(&st, 0, sizeof(st));
      st.kind = CUPTI_ACTIVITY_KIND_STREAM;
      st.contextId = 1;
      st.streamId = id;
      st.flag = id == 7 ? CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NULL : CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NON_BLOCKING;
      b->Add(st);
    }
  }
  uint64_t T(double ns) const { return static_cast<uint64_t>(ns * tick_per_ns_); }
  double Jitter(uint64_t range) {
    seed_ = seed_ * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<double>((seed_ >> 33) % range);
  }
  void Launch(Buffers* b) {
    static const char* const kNames[] = {
        "_ZN7cutlass6KernelINS_4gemm6kernel4GemmEEEvNT_6ParamsE", "_Z14softmax_kernelPfPKfi",
        "_Z16layernorm_kernelPfPKfS1_S1_i", "_Z20elementwise_kernel_add", "_Z13gelu_kernelPfi",
        "_Z18flash_attn_fwd_kernel", "_Z18flash_attn_bwd_kernel", "_Z12adam_kernelPfS_S_S_fi"};
    long i = i_++;
    int c = static_cast<int>((i * 7) % configs_);
    double api_end = t_ + 2500 + Jitter(1500);
    b->Add(Api(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, T(t_), T(api_end), correlation_));
    int s = c % 3;
    double start = std::max(t_ + 3000 + Jitter(1000), stream_free_[s] + 1000 + Jitter(500));
    double dur = 5000 + 6000.0 * c + Jitter(1 + 500 * static_cast<uint64_t>(c + 1));
    stream_free_[s] = start + dur;
    CUpti_ActivityKernel10 k;
    std::memset(&k, 0, sizeof(k));
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.start = T(start);
    k.end = T(start + dur);
    k.deviceId = 0;
    k.contextId = 1;
    k.streamId = 13 + static_cast<uint32_t>(s);
    k.correlationId = correlation_++;
    k.gridId = grid_id_++;
    k.name = kNames[c % 8];
    k.gridX = 108 * (1 + c % 4);
    k.gridY = 1 + c / 8;
    k.gridZ = 1;
    k.blockX = 128 << (c % 3);
    k.blockY = 1;
    k.blockZ = 1;
    k.registersPerThread = static_cast<uint16_t>(32 + 8 * (c % 5));
    k.staticSharedMemory = 4096 * (c % 3);
    k.dynamicSharedMemory = 16384 * (c % 2);
    k.localMemoryTotal_v2 = 95813632;
    k.sharedMemoryExecuted = 65536;
    k.sharedMemoryConfig = 4;
    k.channelID = 3;
    k.channelType = CUPTI_CHANNEL_TYPE_COMPUTE;
    b->Add(k);
    t_ = api_end + 1500 + Jitter(1000);
    if (i % 10 == 9) {
      double end = t_ + 3000 + Jitter(1000);
      b->Add(Api(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, T(t_), T(end), correlation_++));
      t_ = end + 1000;
    }
    if (i % 100 == 99) {  // end of step: wait for every stream
      double end = std::max({t_ + 2000, stream_free_[0], stream_free_[1], stream_free_[2]}) + 1500 + Jitter(500);
      b->Add(Api(CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, T(t_), T(end), correlation_++));
      t_ = end + 2000;
    }
  }

  long launches_;
  int configs_;
  double tick_per_ns_;
  long i_ = 0;
  uint64_t seed_ = 12345;
  double t_ = 1.7e12;  // ns, a CLOCK_MONOTONIC value 28 minutes after boot
  double stream_free_[3] = {0, 0, 0};
  uint32_t correlation_ = 1;
  int64_t grid_id_ = 1;
};

uint64_t ThreadCpuNs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// Decodes the run as the drain thread does (one process-level chunk per buffer) and appends the chunk
// bytes to `out` (when not null) or to the file `f`; *cpu_ns: the decoder's CPU time only.
void Encode(long launches, int configs, double ghz, bool legacy, std::string* out, FILE* f, uint64_t* cpu_ns,
            uint64_t* records, uint64_t* bytes) {
  gt::cupti::CuptiApi api;
  api.ActivityGetNextRecord = &NextRecord;
  api.GetCallbackName = &CallbackName;
  gt::StringInterner interner;
  gt::ChunkBuilder chunk(&interner);
  gt::cupti::ActivityDecoder decoder(&api);
  decoder.SetLegacyEncodingForTesting(legacy);
  decoder.BeginSession(1);
  Training run(launches, configs, ghz);
  Buffers b;
  *cpu_ns = 0;
  *bytes = 0;
  while (!run.done()) {
    run.Next(&b);
    for (size_t i = 0; i < b.bytes.size(); ++i) {
      g_offsets = &b.offsets[i];
      uint64_t t0 = ThreadCpuNs();
      chunk.Begin(0, 0, 0);
      decoder.DecodeBuffer(b.bytes[i].data(), b.bytes[i].size(), &chunk);
      chunk.End();
      *cpu_ns += ThreadCpuNs() - t0;
      *bytes += chunk.output()->size();
      if (out != nullptr) out->append(*chunk.output());
      if (f != nullptr) std::fwrite(chunk.output()->data(), 1, chunk.output()->size(), f);
      chunk.output()->clear();
    }
  }
  *records = decoder.records_decoded();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: cuda_training OUT_PREFIX [--launches N] [--configs C] [--tick-ghz F] [--rounds R] [--only compact|full]\n");
    return 2;
  }
  long launches = 1000000;
  int configs = 20, rounds = 3;
  double ghz = 1.0;
  const char* only = nullptr;
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string f = argv[i];
    if (f == "--launches") launches = std::atol(argv[i + 1]);
    if (f == "--configs") configs = std::atoi(argv[i + 1]);
    if (f == "--tick-ghz") ghz = std::atof(argv[i + 1]);
    if (f == "--rounds") rounds = std::atoi(argv[i + 1]);
    if (f == "--only") only = argv[i + 1];
  }
  if (launches <= 0 || configs <= 0 || rounds <= 0 || ghz <= 0) {
    std::fprintf(stderr, "cuda_training: bad arguments\n");
    return 2;
  }
  const char* names[2] = {"compact", "full"};
  std::vector<double> ns[2];
  uint64_t records = 0;
  for (int r = 0; r < rounds; ++r) {
    for (int legacy = 0; legacy < 2; ++legacy) {  // alternating: compact, full, compact, full, ...
      if (only != nullptr && only != std::string(names[legacy])) continue;
      // The last round writes the files (header, chunks, end-of-stream chunk).
      FILE* f = nullptr;
      gt::test::SyntheticStream s(4242, 1000000000, 1700000000000000000ull);
      std::string path = std::string(argv[1]) + "-" + names[legacy] + ".gtrace";
      if (r == rounds - 1) {
        f = std::fopen(path.c_str(), "wb");
        if (f == nullptr) {
          std::perror(path.c_str());
          return 1;
        }
        std::string pre = s.Preamble();
        std::fwrite(pre.data(), 1, pre.size(), f);
      }
      uint64_t cpu = 0, bytes = 0;
      Encode(launches, configs, ghz, legacy == 1, nullptr, f, &cpu, &records, &bytes);
      ns[legacy].push_back(static_cast<double>(cpu) / static_cast<double>(records));
      if (f != nullptr) {
        s.Close();
        std::string end = s.TakeChunks();
        std::fwrite(end.data(), 1, end.size(), f);
        std::fclose(f);
        std::vector<double> sorted = ns[legacy];
        std::sort(sorted.begin(), sorted.end());
        std::printf("%s: %s, %llu chunk bytes, drain-thread CPU %.1f ns per CUPTI record (median of %d; rounds:",
                    names[legacy], path.c_str(), static_cast<unsigned long long>(bytes), sorted[sorted.size() / 2],
                    rounds);
        for (double v : ns[legacy]) std::printf(" %.1f", v);
        std::printf(")\n");
      }
    }
  }
  std::printf("records: %llu (launches %ld, configs %d, tick-ghz %.2f)\n", static_cast<unsigned long long>(records),
              launches, configs, ghz);
  return 0;
}
