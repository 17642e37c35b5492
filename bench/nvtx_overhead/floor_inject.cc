// floor_inject: the floor an NVTX recorder cannot beat, for bench/nvtx_overhead. A minimal NVTX
// injection library (loaded through NVTX_INJECTION64_PATH, like libgtrace.so) whose hooks take one
// timestamp and store a 16-byte record into a thread-local array: no session, no file, no drain
// thread, nothing decoded. Built twice from this file, with the same compiler and flags as gtrace:
//   libgt_floor_rdtsc.so      (GT_FLOOR_RDTSC=1: rdtsc / cntvct_el0)
//   libgt_floor_monotonic.so  (GT_FLOOR_RDTSC=0: clock_gettime(CLOCK_MONOTONIC), vDSO)
// The array wraps (records are overwritten, never read): the cost measured is taking the time and
// writing the record. Application threads only; each touches its own memory only.
#include <nvtx3/nvToolsExt.h>

#include <cstdint>
#include <cstdlib>
#include <ctime>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace {

struct Record {  // 16 bytes: time + kind + the message pointer's low bits
  uint64_t ts;
  uint32_t kind;
  uint32_t aux;
};
static_assert(sizeof(Record) == 16);

constexpr uint32_t kRecords = 1u << 18;  // 4 MiB per thread

struct ThreadArray {
  Record* records;
  uint32_t next;
};
thread_local ThreadArray t_array = {nullptr, 0};

inline uint64_t Now() {
#if GT_FLOOR_RDTSC && defined(__x86_64__)
  return __rdtsc();
#elif GT_FLOOR_RDTSC && defined(__aarch64__)
  uint64_t v;
  asm volatile("mrs %0, cntvct_el0" : "=r"(v));
  return v;
#else
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
#endif
}

__attribute__((noinline)) Record* Allocate() {
  t_array.records = static_cast<Record*>(calloc(kRecords, sizeof(Record)));
  return t_array.records;
}

inline void Put(uint32_t kind, const void* p) {
  uint64_t ts = Now();
  Record* r = t_array.records;
  if (__builtin_expect(r == nullptr, 0)) {
    r = Allocate();
    if (r == nullptr) return;
  }
  uint32_t i = t_array.next;
  t_array.next = (i + 1) & (kRecords - 1);
  r[i] = Record{ts, kind, static_cast<uint32_t>(reinterpret_cast<uintptr_t>(p))};
}

thread_local uint64_t t_next_range = 1;

void MarkA(const char* m) { Put(1, m); }
nvtxRangeId_t RangeStartA(const char* m) {
  nvtxRangeId_t id = t_next_range++;
  Put(2, m);
  return id;
}
void RangeEnd(nvtxRangeId_t id) { Put(3, reinterpret_cast<const void*>(id)); }
int RangePushA(const char* m) {
  Put(4, m);
  return 0;
}
int RangePop() {
  Put(5, nullptr);
  return 0;
}

template <typename Fn>
void Set(NvtxFunctionTable t, unsigned int n, unsigned int cbid, Fn fn) {
  if (t == nullptr || cbid >= n || t[cbid] == nullptr) return;
  *t[cbid] = reinterpret_cast<NvtxFunctionPointer>(fn);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get) {
  if (get == nullptr) return 0;
  const auto* cb = static_cast<const NvtxExportTableCallbacks*>(get(NVTX_ETID_CALLBACKS));
  if (cb == nullptr || cb->GetModuleFunctionTable == nullptr) return 0;
  NvtxFunctionTable t = nullptr;
  unsigned int n = 0;
  if (cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &t, &n) == 0 || t == nullptr) return 0;
  Set(t, n, NVTX_CBID_CORE_MarkA, &MarkA);
  Set(t, n, NVTX_CBID_CORE_RangeStartA, &RangeStartA);
  Set(t, n, NVTX_CBID_CORE_RangeEnd, &RangeEnd);
  Set(t, n, NVTX_CBID_CORE_RangePushA, &RangePushA);
  Set(t, n, NVTX_CBID_CORE_RangePop, &RangePop);
  return 1;
}
