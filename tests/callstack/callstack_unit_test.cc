// Unit tests of inject/callstack/: the --cudabacktrace spec, API classes, the ring-record decoder
// (stack interning), the module map and the unwinder.
#include <gtest/gtest.h>

#include <cupti.h>
#include <dlfcn.h>
#include <gnu/libc-version.h>

#include <cstring>
#include <string>
#include <vector>

#include "collector/chunk_builder.h"
#include "collector/string_interner.h"
#include "gtrace.pb.h"
#include "inject/callstack/backtrace_spec.h"
#include "inject/callstack/module_map.h"
#include "inject/callstack/stack_capture.h"
#include "inject/callstack/stack_decoder.h"
#include "inject/callstack/unwinder.h"

namespace gt::callstack {
namespace {

TEST(BacktraceSpec, NsysSyntax) {
  BacktraceSpec s;
  std::string error;
  ASSERT_TRUE(ParseBacktraceSpec("", &s, &error));
  EXPECT_FALSE(s.any());
  ASSERT_TRUE(ParseBacktraceSpec("none", &s, &error));
  EXPECT_FALSE(s.any());
  ASSERT_TRUE(ParseBacktraceSpec("all", &s, &error));
  for (int c = kClassKernel; c < kClassCount; ++c) {
    EXPECT_TRUE(s.selected[c]);
    EXPECT_EQ(s.threshold_ns[c], 80000u);
  }
  ASSERT_TRUE(ParseBacktraceSpec("kernel:500,sync", &s, &error));
  EXPECT_TRUE(s.selected[kClassKernel]);
  EXPECT_EQ(s.threshold_ns[kClassKernel], 500u);
  EXPECT_TRUE(s.selected[kClassSync]);
  EXPECT_EQ(s.threshold_ns[kClassSync], 80000u);
  EXPECT_FALSE(s.selected[kClassMemory]);
  EXPECT_FALSE(s.selected[kClassOther]);
  ASSERT_TRUE(ParseBacktraceSpec("all:1000,memory:0", &s, &error));  // later items win
  EXPECT_EQ(s.threshold_ns[kClassKernel], 1000u);
  EXPECT_EQ(s.threshold_ns[kClassMemory], 0u);
  EXPECT_EQ(s.threshold_ns[kClassOther], 1000u);
}

TEST(BacktraceSpec, BadValuesSayWhy) {
  BacktraceSpec s;
  std::string error;
  EXPECT_FALSE(ParseBacktraceSpec("kernels", &s, &error));
  EXPECT_EQ(error, "unknown class 'kernels' (known: all, kernel, memory, sync, other, none)");
  EXPECT_FALSE(ParseBacktraceSpec("memory:1us", &s, &error));
  EXPECT_EQ(error, "'memory:1us': the threshold after ':' must be a whole number of nanoseconds");
  EXPECT_FALSE(ParseBacktraceSpec("none,kernel", &s, &error));
  EXPECT_EQ(error, "'none' cannot be combined with other classes");
  EXPECT_FALSE(s.any());
  EXPECT_FALSE(ParseBacktraceSpec("memory:", &s, &error));
}

TEST(ApiClasses, RealCallbackNames) {
  const std::pair<const char*, ApiClass> cases[] = {
      {"cudaLaunchKernel_v7000", kClassKernel},
      {"cudaLaunchKernelExC_v11060", kClassKernel},
      {"cudaGraphLaunch_v10000", kClassKernel},
      {"cuLaunchKernel", kClassKernel},
      {"cudaLaunchHostFunc_v10000", kClassOther},
      {"cudaMemcpy_v3020", kClassMemory},
      {"cudaMemcpyAsync_v3020", kClassMemory},
      {"cudaMalloc_v3020", kClassMemory},
      {"cudaFree_v3020", kClassMemory},
      {"cudaMallocHost_v3020", kClassMemory},
      {"cudaHostRegister_v4000", kClassMemory},
      {"cuMemAlloc_v2", kClassMemory},
      {"cuMemcpyHtoD_v2", kClassMemory},
      {"cudaMemsetAsync_v3020", kClassMemory},
      {"cudaDeviceSynchronize_v3020", kClassSync},
      {"cudaStreamSynchronize_v3020", kClassSync},
      {"cudaEventSynchronize_v3020", kClassSync},
      {"cudaStreamWaitEvent_v3020", kClassSync},
      {"cudaEventQuery_v3020", kClassSync},
      {"cuStreamWaitValue32_v2", kClassSync},
      {"cuCtxSynchronize", kClassSync},
      {"cudaGetDevice_v3020", kClassOther},
      {"cudaStreamCreate_v3020", kClassOther},
      {"cudaEventRecord_v3020", kClassOther},
      {"cuModuleLoadData", kClassOther},
  };
  for (const auto& [name, expected] : cases)
    EXPECT_EQ(ClassifyApi(name), expected) << name;
}

// The decoder, fed hand-built ring records.
class StackDecoderTest : public ::testing::Test {
 protected:
  static const char* Names(bool driver, uint32_t cbid) {
    return !driver && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020 ? "cudaMemcpy_v3020" : nullptr;
  }
  StackDecoderTest() : chunk_(&interner_), decoder_(&Names) {}

  void Add(uint32_t correlation, std::vector<uint64_t> frames, bool truncated = false) {
    std::vector<unsigned char> bytes(((kStackRecordFramesOffset + frames.size() * 8 + 63) / 64) * 64, 0);
    RecordHeader h{};
    h.type = kRecordCallStack;
    h.ext_slots = static_cast<uint8_t>(bytes.size() / 64 - 1);
    h.aux16 = static_cast<uint16_t>(frames.size());
    h.aux32 = correlation;
    h.ts_ns = 1000 * correlation;
    StackRecordFixed f{};
    f.duration_ns = 5000;
    f.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020;
    f.flags = truncated ? kStackTruncated : 0;
    f.return_value = correlation == 2 ? 700 : 0;
    std::memcpy(bytes.data(), &h, sizeof(h));
    std::memcpy(bytes.data() + sizeof(h), &f, sizeof(f));
    std::memcpy(bytes.data() + kStackRecordFramesOffset, frames.data(), frames.size() * 8);
    records_.push_back(std::move(bytes));
  }

  schema::Chunk Decode(uint64_t session) {
    chunk_.Begin(1, 42, 1000);
    for (const auto& r : records_) {
      RecordView v{reinterpret_cast<const RecordHeader*>(r.data()), r.data(), r.size(), 42};
      decoder_.Decode(v, session, &chunk_);
    }
    records_.clear();
    chunk_.End();
    const std::string& out = *chunk_.output();
    if (out.empty())
      return schema::Chunk();  // nothing written: the chunk was dropped
    size_t pos = 1;            // StreamFile.chunk tag
    uint64_t len = 0;
    for (int shift = 0;; shift += 7) {
      uint8_t b = static_cast<uint8_t>(out[pos++]);
      len |= uint64_t{b & 0x7fu} << shift;
      if (!(b & 0x80))
        break;
    }
    schema::Chunk c;
    EXPECT_TRUE(c.ParseFromString(out.substr(pos, len)));
    chunk_.output()->clear();
    return c;
  }

  StringInterner interner_;
  ChunkBuilder chunk_;
  StackDecoder decoder_;
  std::vector<std::vector<unsigned char>> records_;
};

TEST_F(StackDecoderTest, EachDistinctStackIsDefinedOncePerSession) {
  Add(1, {0x401000, 0x402000, 0x7f0000001234});
  Add(2, {0x401000, 0x402000, 0x7f0000001234});
  Add(3, {0x401000, 0x402008});
  Add(4, {0x401000, 0x402000, 0x7f0000001234}, /*truncated=*/true);
  schema::Chunk c = Decode(7);
  ASSERT_EQ(c.callstack_defs_size(), 3);
  EXPECT_EQ(c.callstack_defs(0).stack_id(), 1u);
  EXPECT_EQ(std::vector<uint64_t>(c.callstack_defs(0).addresses().begin(), c.callstack_defs(0).addresses().end()),
            (std::vector<uint64_t>{0x401000, 0x402000, 0x7f0000001234}));
  EXPECT_FALSE(c.callstack_defs(0).truncated());
  EXPECT_EQ(c.callstack_defs(1).stack_id(), 2u);
  EXPECT_EQ(c.callstack_defs(1).addresses_size(), 2);
  EXPECT_EQ(c.callstack_defs(2).stack_id(), 3u);
  EXPECT_TRUE(c.callstack_defs(2).truncated());
  ASSERT_EQ(c.cuda_api_backtraces_size(), 4);
  uint64_t ts = c.base_ns();
  const uint64_t stacks[] = {1, 1, 2, 3};
  for (int i = 0; i < 4; ++i) {
    const schema::CudaApiBacktrace& b = c.cuda_api_backtraces(i);
    ts += static_cast<uint64_t>(b.start_delta_ns());
    EXPECT_EQ(ts, 1000u * (i + 1));
    EXPECT_EQ(b.correlation_id(), static_cast<uint32_t>(i + 1));
    EXPECT_EQ(b.stack_id(), stacks[i]);
    EXPECT_EQ(b.duration_ns(), 5000u);
    EXPECT_EQ(b.kind(), schema::CUDA_API_KIND_RUNTIME);
    EXPECT_EQ(b.cbid(), static_cast<uint32_t>(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020));
    EXPECT_EQ(b.return_value(), i == 1 ? 700u : 0u);
    ASSERT_NE(b.name_id(), 0u);
  }
  ASSERT_EQ(c.strings_size(), 1);
  EXPECT_EQ(c.strings(0).text(), "cudaMemcpy_v3020");
  // Same session: known stacks are not defined again; a new session (forked child) starts over.
  Add(5, {0x401000, 0x402008});
  schema::Chunk again = Decode(7);
  EXPECT_EQ(again.callstack_defs_size(), 0);
  EXPECT_EQ(again.cuda_api_backtraces(0).stack_id(), 2u);
  Add(6, {0x401000, 0x402008});
  schema::Chunk child = Decode(8);
  ASSERT_EQ(child.callstack_defs_size(), 1);
  EXPECT_EQ(child.callstack_defs(0).stack_id(), 1u);
}

TEST_F(StackDecoderTest, MalformedRecordsAreSkipped) {
  Add(1, {0x401000});
  records_.back()[2] = 0;  // aux16 (frame count) = 0
  records_.back()[3] = 0;
  Add(2, {0x401000});
  records_.back()[2] = 200;  // more frames than the record holds
  schema::Chunk c = Decode(9);
  EXPECT_EQ(c.cuda_api_backtraces_size(), 0);
  EXPECT_EQ(c.callstack_defs_size(), 0);
}

__attribute__((noinline)) int Unwind(const Unwinder& u, void** frames, int n) {
  int got = u.backtrace(frames, n);
  asm volatile("" ::: "memory");
  return got;
}

TEST(Unwinder, LoadsLibunwindAndUnwindsThisThread) {
  Unwinder u;
  std::string error;
  ASSERT_TRUE(LoadUnwinder(&u, &error)) << error;
  EXPECT_NE(u.path.find("libunwind"), std::string::npos) << u.path;
  void* frames[32];
  int n = Unwind(u, frames, 32);
  ASSERT_GE(n, 3);
  // The innermost frames are in this executable (Unwind and its caller), and every frame is in a module.
  std::vector<ModuleInfo> modules = ListModules();
  ModuleInfo m;
  ASSERT_TRUE(FindModule(frames[0], &m));
  EXPECT_EQ(m.path, modules[0].path);
  ASSERT_TRUE(FindModule(frames[1], &m));
  EXPECT_EQ(m.path, modules[0].path);
  for (int i = 0; i < n; ++i)
    EXPECT_TRUE(FindModule(frames[i], &m)) << "frame " << i << " is in no module";
}

TEST(Unwinder, MissingLibraryIsAOneLineReason) {
  setenv("GTRACE_LIBUNWIND_PATH", "/nonexistent/libunwind.so.8", 1);
  Unwinder u;
  std::string error;
  EXPECT_FALSE(LoadUnwinder(&u, &error));
  unsetenv("GTRACE_LIBUNWIND_PATH");
  EXPECT_EQ(error.rfind("cannot load libunwind (/nonexistent/libunwind.so.8: ", 0), 0u) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos);
}

TEST(ModuleMap, ListsTheExecutableWithItsBuildIdAndLibraries) {
  std::vector<ModuleInfo> modules = ListModules();
  ASSERT_GE(modules.size(), 3u);
  EXPECT_TRUE(modules[0].main_executable);
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  ASSERT_GT(n, 0);
  EXPECT_EQ(modules[0].path, std::string(exe, static_cast<size_t>(n)));
  EXPECT_EQ(modules[0].build_id.size(), 20u);  // GNU ld's default sha1 build id
  ModuleInfo m;
  // A C library function no sanitizer intercepts.
  ASSERT_TRUE(FindModule(reinterpret_cast<void*>(&gnu_get_libc_version), &m));
  EXPECT_NE(m.path.find("libc.so"), std::string::npos) << m.path;
  EXPECT_FALSE(m.build_id.empty());
  EXPECT_LT(m.start_address, m.end_address);
  EXPECT_NE(m.load_bias, 0u);
  EXPECT_FALSE(FindModule(reinterpret_cast<void*>(16), &m));
}

TEST(ModuleMap, AnnouncesNewAndUnloadedModules) {
  StringInterner interner;
  ChunkBuilder chunk(&interner);
  ModuleMap map;
  auto emit = [&](uint64_t session) {
    chunk.Begin(0, 0, 0);
    map.Emit(&chunk, session, 99);
    chunk.End();
    schema::StreamFile f;
    EXPECT_TRUE(f.ParseFromString(*chunk.output()));
    chunk.output()->clear();
    return f.chunk_size() > 0 ? f.chunk(0) : schema::Chunk();
  };
  schema::Chunk first = emit(1);
  EXPECT_EQ(static_cast<size_t>(first.loaded_modules_size()), ListModules().size());
  EXPECT_EQ(first.loaded_modules(0).loaded_ts_ns(), 99u);
  EXPECT_TRUE(first.loaded_modules(0).main_executable());
  EXPECT_EQ(emit(1).loaded_modules_size(), 0);  // nothing changed
  // A small C library this test does not use: glibc's compatibility stubs.
  std::string lib;
  for (const char* candidate : {"libanl.so.1", "libutil.so.1", "libnss_files.so.2"}) {
    bool loaded = false;
    for (const auto& m : first.loaded_modules())
      loaded |= m.path().find(candidate) != std::string::npos;
    if (!loaded) {
      lib = candidate;
      break;
    }
  }
  void* h = lib.empty() ? nullptr : dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr)
    GTEST_SKIP() << "no unloaded library to load";
  schema::Chunk loaded = emit(1);
  ASSERT_EQ(loaded.loaded_modules_size(), 1);
  EXPECT_NE(loaded.loaded_modules(0).path().find(lib), std::string::npos);
  uint64_t id = loaded.loaded_modules(0).module_id();
  EXPECT_EQ(id, static_cast<uint64_t>(first.loaded_modules_size()) + 1);
  dlclose(h);
  schema::Chunk unloaded = emit(1);
  ASSERT_EQ(unloaded.module_unloads_size(), 1);
  EXPECT_EQ(unloaded.module_unloads(0).module_id(), id);
  // A new session (forked child) announces everything again.
  EXPECT_EQ(static_cast<size_t>(emit(2).loaded_modules_size()), ListModules().size());
}

}  // namespace
}  // namespace gt::callstack
