// nvtx_threads: a multi-threaded C++ program that uses every NVTX feature gtrace records, with
// fixed counts and durations so tests can assert the exported rows exactly.
//
//   nvtx_threads [--threads N] [--iterations M] [--work-us U] [--hold-ms H]
//
// What it emits (N workers, M iterations, defaults N=4, M=10, U=1000):
//   main thread ("main" via nvtxNameOsThreadA):
//     categories 1 "Compute" and 2 "IO" named in the default domain; category 7 "Setup" in "sample";
//     domain "sample" created; registered strings "registered-range" and "registered-mark" in it;
//     push/pop "setup" (ASCII, 1 instance) containing nested "init-a" (Ex: color 0xFF00FF00,
//       category 1, int64 payload -42) and "init-w" (wide string "init-w-ü");
//     marks "mark-ascii", "mark-w" (wide), "mark-payload" (Ex: double payload 2.5);
//     payload pushes: "p-u64" (uint64 7), "p-u32" (uint32 8), "p-i32" (int32 -9), "p-float" (1.5f);
//     domain push "registered-range" (registered string, category 7) ending with a domain pop,
//     domain mark "registered-mark"; domain mark "domain-mark" (ASCII, extended payload with
//     schema "sample.schema" of 16 bytes {uint64 a = 11, int32 b = -3, int32 c = 4});
//     start/end range "cross-thread" started on main, ended on worker 0;
//     start/end range "main-se" (start and end on main);
//     domain "sample" destroyed at the end.
//   each worker thread w ("worker-w" via nvtxNameOsThreadA of its own tid):
//     M x push "iteration" { push "work" (busy U microseconds) pop } pop
//     1 x domain push "worker-domain-range" in "sample", pop
//   Then optionally sleeps H ms (so a signal can be sent while the process is alive).
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtPayload.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

uint32_t Tid() { return static_cast<uint32_t>(syscall(SYS_gettid)); }

void BusyMicros(int us) {
  auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
  while (std::chrono::steady_clock::now() < end) {
  }
}

nvtxEventAttributes_t Attr() {
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  return a;
}

struct SamplePayload {
  uint64_t a;
  int32_t b;
  int32_t c;
};

}  // namespace

int main(int argc, char** argv) {
  int threads = 4, iterations = 10, work_us = 1000, hold_ms = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    int v = std::atoi(argv[i + 1]);
    if (flag == "--threads") threads = v;
    else if (flag == "--iterations") iterations = v;
    else if (flag == "--work-us") work_us = v;
    else if (flag == "--hold-ms") hold_ms = v;
    else {
      std::fprintf(stderr, "usage: nvtx_threads [--threads N] [--iterations M] [--work-us U] [--hold-ms H]\n");
      return 2;
    }
  }

  nvtxNameOsThreadA(Tid(), "main");
  nvtxNameCategoryA(1, "Compute");
  nvtxNameCategoryA(2, "IO");
  nvtxDomainHandle_t domain = nvtxDomainCreateA("sample");
  nvtxDomainNameCategoryA(domain, 7, "Setup");
  nvtxStringHandle_t reg_range = nvtxDomainRegisterStringA(domain, "registered-range");
  nvtxStringHandle_t reg_mark = nvtxDomainRegisterStringA(domain, "registered-mark");

  nvtxRangePushA("setup");
  {
    nvtxEventAttributes_t a = Attr();
    a.colorType = NVTX_COLOR_ARGB;
    a.color = 0xFF00FF00u;
    a.category = 1;
    a.payloadType = NVTX_PAYLOAD_TYPE_INT64;
    a.payload.llValue = -42;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = "init-a";
    nvtxRangePushEx(&a);
    BusyMicros(work_us);
    nvtxRangePop();
    nvtxRangePushW(L"init-w-\u00fc");
    BusyMicros(work_us);
    nvtxRangePop();
  }
  nvtxRangePop();

  nvtxMarkA("mark-ascii");
  nvtxMarkW(L"mark-w");
  {
    nvtxEventAttributes_t a = Attr();
    a.payloadType = NVTX_PAYLOAD_TYPE_DOUBLE;
    a.payload.dValue = 2.5;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = "mark-payload";
    nvtxMarkEx(&a);
  }
  struct {
    const char* name;
    int type;
  } payload_ranges[] = {{"p-u64", NVTX_PAYLOAD_TYPE_UNSIGNED_INT64},
                        {"p-u32", NVTX_PAYLOAD_TYPE_UNSIGNED_INT32},
                        {"p-i32", NVTX_PAYLOAD_TYPE_INT32},
                        {"p-float", NVTX_PAYLOAD_TYPE_FLOAT}};
  for (auto& pr : payload_ranges) {
    nvtxEventAttributes_t a = Attr();
    a.payloadType = pr.type;
    if (pr.type == NVTX_PAYLOAD_TYPE_UNSIGNED_INT64) a.payload.ullValue = 7;
    if (pr.type == NVTX_PAYLOAD_TYPE_UNSIGNED_INT32) a.payload.uiValue = 8;
    if (pr.type == NVTX_PAYLOAD_TYPE_INT32) a.payload.iValue = -9;
    if (pr.type == NVTX_PAYLOAD_TYPE_FLOAT) a.payload.fValue = 1.5f;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = pr.name;
    nvtxRangePushEx(&a);
    nvtxRangePop();
  }
  {
    nvtxEventAttributes_t a = Attr();
    a.category = 7;
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = reg_range;
    nvtxDomainRangePushEx(domain, &a);
    BusyMicros(work_us);
    nvtxDomainRangePop(domain);
    nvtxEventAttributes_t m = Attr();
    m.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    m.message.registered = reg_mark;
    nvtxDomainMarkEx(domain, &m);
  }
  {
    // Extended payload with a registered static schema.
    nvtxPayloadSchemaEntry_t entries[] = {
        {0, NVTX_PAYLOAD_ENTRY_TYPE_UINT64, "a", nullptr, 0, 0, nullptr, nullptr},
        {0, NVTX_PAYLOAD_ENTRY_TYPE_INT32, "b", "signed", 0, 8, nullptr, nullptr},
        {0, NVTX_PAYLOAD_ENTRY_TYPE_INT32, "c", nullptr, 0, 12, nullptr, nullptr},
    };
    nvtxPayloadSchemaAttr_t sa{};
    sa.fieldMask = NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NAME | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_TYPE |
                   NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_ENTRIES | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NUM_ENTRIES |
                   NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_STATIC_SIZE | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_SCHEMA_ID;
    sa.name = "sample.schema";
    sa.type = NVTX_PAYLOAD_SCHEMA_TYPE_STATIC;
    sa.entries = entries;
    sa.numEntries = 3;
    sa.payloadStaticSize = sizeof(SamplePayload);
    sa.schemaId = NVTX_PAYLOAD_SCHEMA_ID_STATIC_START + 5;
    uint64_t schema_id = nvtxPayloadSchemaRegister(domain, &sa);
    SamplePayload payload{11, -3, 4};
    nvtxPayloadData_t pd{schema_id, sizeof(payload), &payload};
    nvtxEventAttributes_t a = Attr();
    a.payloadType = NVTX_PAYLOAD_TYPE_EXT;
    a.reserved0 = 1;
    a.payload.ullValue = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(&pd));
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = "domain-mark";
    nvtxDomainMarkEx(domain, &a);
  }

  nvtxRangeId_t cross = nvtxRangeStartA("cross-thread");
  nvtxRangeId_t main_se = nvtxRangeStartA("main-se");
  BusyMicros(work_us);
  nvtxRangeEnd(main_se);

  std::atomic<bool> cross_ended{false};
  std::vector<std::thread> workers;
  for (int w = 0; w < threads; ++w) {
    workers.emplace_back([=, &cross_ended] {
      std::string name = "worker-" + std::to_string(w);
      nvtxNameOsThreadA(Tid(), name.c_str());
      for (int i = 0; i < iterations; ++i) {
        nvtxRangePushA("iteration");
        nvtxRangePushA("work");
        BusyMicros(work_us);
        nvtxRangePop();
        nvtxRangePop();
      }
      nvtxEventAttributes_t a = Attr();
      a.messageType = NVTX_MESSAGE_TYPE_ASCII;
      a.message.ascii = "worker-domain-range";
      nvtxDomainRangePushEx(domain, &a);
      nvtxDomainRangePop(domain);
      if (w == 0) {
        nvtxRangeEnd(cross);
        cross_ended = true;
      }
    });
  }
  for (auto& t : workers) t.join();
  if (!cross_ended) nvtxRangeEnd(cross);
  nvtxDomainDestroy(domain);
  if (hold_ms > 0) {
    // Tests that signal a holding process wait for this line rather than guessing a start-up time.
    std::printf("nvtx_threads: holding %d ms\n", hold_ms);
    std::fflush(stdout);
    std::this_thread::sleep_for(std::chrono::milliseconds(hold_ms));
  }
  std::printf("nvtx_threads: %d threads x %d iterations done\n", threads, iterations);
  return 0;
}
