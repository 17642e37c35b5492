// The offline symbolizer (tools/export/symbolizer.h) on this test binary: names, DWARF lines, build
// id checks, moved and vanished files; and the small name helpers of the call-stack export.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "inject/callstack/module_map.h"
#include "tests/common/test_util.h"
#include "tools/export/callstack_export.h"
#include "tools/export/symbolizer.h"

namespace gt::symtest {

// The function the tests look up. Its first line is kTargetLine.
constexpr int kTargetLine = __LINE__ + 1;
__attribute__((noinline)) int Target(int x) {
  asm volatile("" ::: "memory");
  return x * 3 + 1;
}

}  // namespace gt::symtest

namespace gt::exporter {
namespace {

using callstack::ModuleInfo;

ModuleInfo Self() {
  return callstack::ListModules().at(0);
}

uint64_t TargetVaddr(const ModuleInfo& m) {
  return reinterpret_cast<uint64_t>(&symtest::Target) - m.load_bias;
}

TEST(Symbolizer, FunctionFileAndLineFromTheRecordedModule) {
  ModuleInfo m = Self();
  Symbolizer s;
  SymbolizedFrame f = s.Lookup(m.path, m.build_id, TargetVaddr(m), /*return_address=*/false);
  EXPECT_TRUE(f.module_found);
  EXPECT_EQ(f.function, "gt::symtest::Target(int)");
  EXPECT_NE(f.file.find("symbolizer_test.cc"), std::string::npos) << f.file;
  EXPECT_GE(f.line, symtest::kTargetLine);
  EXPECT_LE(f.line, symtest::kTargetLine + 2);
  EXPECT_EQ(f.module_offset, TargetVaddr(m));
  // A return address just past the function's first byte still names it (the lookup uses address - 1).
  SymbolizedFrame r = s.Lookup(m.path, m.build_id, TargetVaddr(m) + 1, /*return_address=*/true);
  EXPECT_EQ(r.function, "gt::symtest::Target(int)");
  EXPECT_TRUE(s.problems().empty());
  EXPECT_EQ(symtest::Target(1), 4);
}

TEST(Symbolizer, AnotherBuildIsNotUsed) {
  ModuleInfo m = Self();
  Symbolizer s;
  std::string other(m.build_id.size(), '\x5a');
  SymbolizedFrame f = s.Lookup(m.path, other, TargetVaddr(m), false);
  EXPECT_FALSE(f.module_found);
  EXPECT_TRUE(f.function.empty());
  EXPECT_EQ(f.module_offset, TargetVaddr(m));
  ASSERT_EQ(s.problems().size(), 1u);
  std::string hex;
  for (size_t i = 0; i < other.size(); ++i)
    hex += "5a";
  EXPECT_EQ(s.problems()[0], m.path + ": build id differs from the recorded " + hex);
}

TEST(Symbolizer, VanishedFileKeepsTheOffset) {
  ModuleInfo m = Self();
  Symbolizer s;
  SymbolizedFrame f = s.Lookup("/nonexistent/dir/callstack_unit_test", m.build_id, 0x1234, true);
  EXPECT_FALSE(f.module_found);
  EXPECT_EQ(f.module_offset, 0x1234u);
  ASSERT_EQ(s.problems().size(), 1u);
  EXPECT_EQ(s.problems()[0], "/nonexistent/dir/callstack_unit_test: not found");
  // Asked again: no second problem, no second search.
  s.Lookup("/nonexistent/dir/callstack_unit_test", m.build_id, 0x1238, true);
  EXPECT_EQ(s.problems().size(), 1u);
  // Pseudo-modules without a path (the vdso) are not problems.
  s.Lookup("linux-vdso.so.1", "", 0x10, true);
  EXPECT_EQ(s.problems().size(), 1u);
}

TEST(Symbolizer, MovedFileIsFoundInTheSymbolPathByBuildId) {
  ModuleInfo m = Self();
  test::TempDir dir;
  std::string base = m.path.substr(m.path.rfind('/') + 1);
  test::WriteFile(dir.File(base), test::ReadFile(m.path));
  setenv("GTRACE_SYMBOL_PATH", ("/nonexistent:" + dir.path()).c_str(), 1);
  Symbolizer s;
  unsetenv("GTRACE_SYMBOL_PATH");
  SymbolizedFrame f = s.Lookup("/moved/away/" + base, m.build_id, TargetVaddr(m), false);
  EXPECT_TRUE(f.module_found);
  EXPECT_EQ(f.function, "gt::symtest::Target(int)");
  EXPECT_TRUE(s.problems().empty());
}

TEST(CallStackNames, DemangleAndStripVersions) {
  EXPECT_EQ(DemangleSymbol("_ZN5chain1bEv"), "chain::b()");
  EXPECT_EQ(DemangleSymbol("main"), "main");
  EXPECT_EQ(DemangleSymbol("_Znot_mangled"), "_Znot_mangled");
  EXPECT_EQ(StripCallbackVersion("cudaMalloc_v3020"), "cudaMalloc");
  EXPECT_EQ(StripCallbackVersion("cudaGraphLaunch_v10000"), "cudaGraphLaunch");
  EXPECT_EQ(StripCallbackVersion("cudaGetDeviceProperties_v2_v12000"), "cudaGetDeviceProperties_v2");
  EXPECT_EQ(StripCallbackVersion("cuMemAlloc_v2"), "cuMemAlloc_v2");
  EXPECT_EQ(StripCallbackVersion("cuLaunchKernel"), "cuLaunchKernel");
}

}  // namespace
}  // namespace gt::exporter
