// GTRACE_* parsing (defaults, bad values kept as defaults with one warning each, unknown names),
// trace lists, output-name expansion and rank detection.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "collector/config.h"
#include "collector/output_path.h"
#include "collector/process_info.h"
#include "collector/sources.h"

namespace gt {
namespace {

// A fake environment for LoadConfig/DetectRank.
std::map<std::string, std::string>* g_env;
const char* FakeGetenv(const char* name) {
  auto it = g_env->find(name);
  return it != g_env->end() ? it->second.c_str() : nullptr;
}

Config Load(std::map<std::string, std::string> env) {
  g_env = &env;
  std::vector<std::string> storage;
  for (auto& [k, v] : env) storage.push_back(k + "=" + v);
  std::vector<char*> list;
  for (auto& s : storage) list.push_back(s.data());
  list.push_back(nullptr);
  Config c = LoadConfig(FakeGetenv, list.data());
  g_env = nullptr;
  return c;
}

TEST(Config, Defaults) {
  Config c = Load({});
  EXPECT_EQ(c.output_pattern, "gtrace-%h-%p");
  EXPECT_EQ(c.sources, kSourceCuda | kSourceNvtx | kSourceNccl);
  EXPECT_EQ(c.buffer_bytes, 256ull << 20);
  EXPECT_EQ(c.thread_buffer_bytes, 512ull << 10);  // the initial ring: at most 512 KiB (rings grow, issue 20)
  EXPECT_EQ(c.flush_interval_ms, 500u);
  EXPECT_EQ(c.exit_wait_ms, 100u);
  EXPECT_TRUE(c.full_ring_wait);  // GTRACE_FULL_RING=wait (issue 20, bench/results/2026-11-26-burst-8-threads.md)
  EXPECT_TRUE(c.warnings.empty());
}

TEST(Config, FullRingPolicy) {
  EXPECT_FALSE(Load({{"GTRACE_FULL_RING", "drop"}}).full_ring_wait);
  Config w = Load({{"GTRACE_FULL_RING", " wait "}});
  EXPECT_TRUE(w.full_ring_wait);
  EXPECT_TRUE(w.warnings.empty());
  Config bad = Load({{"GTRACE_FULL_RING", "block"}});
  EXPECT_TRUE(bad.full_ring_wait);
  ASSERT_EQ(bad.warnings.size(), 1u);
  EXPECT_EQ(bad.warnings[0], "GTRACE_FULL_RING='block' is not wait or drop; using wait");
}

TEST(Config, ValidValues) {
  Config c = Load({{"GTRACE_OUTPUT", "r_%q{SLURM_PROCID}"},
                   {"GTRACE_TRACE", "nvtx"},
                   {"GTRACE_BUFFER_MB", "8"},
                   {"GTRACE_THREAD_BUFFER_KB", "64"},
                   {"GTRACE_FLUSH_MS", "100"},
                   {"GTRACE_EXIT_WAIT_MS", "250"},
                   {"GTRACE_MANIFEST", "/tmp/m"}});
  EXPECT_EQ(c.output_pattern, "r_%q{SLURM_PROCID}");
  EXPECT_EQ(c.sources, kSourceNvtx);
  EXPECT_EQ(c.buffer_bytes, 8ull << 20);
  EXPECT_EQ(c.thread_buffer_bytes, 64ull << 10);
  EXPECT_EQ(c.flush_interval_ms, 100u);
  EXPECT_EQ(c.exit_wait_ms, 250u);
  EXPECT_EQ(c.manifest_path, "/tmp/m");
  EXPECT_TRUE(c.warnings.empty());
  EXPECT_EQ(c.raw.size(), 7u);
}

TEST(Config, BadValuesKeepDefaultsWithOneWarningEach) {
  Config c = Load({{"GTRACE_TRACE", "cuda,bogus"},
                   {"GTRACE_BUFFER_MB", "lots"},
                   {"GTRACE_THREAD_BUFFER_KB", "1"},
                   {"GTRACE_FLUSH_MS", "-5"},
                   {"GTRACE_EXIT_WAIT_MS", "0"},
                   {"GTRACE_FORCE_OVERWRITE", "maybe"},
                   {"GTRACE_OUTPUT", ""},
                   {"GTRACE_TYPO", "1"}});
  EXPECT_EQ(c.sources, kSourceCuda | kSourceNvtx | kSourceNccl);
  EXPECT_EQ(c.trace, "cuda,nvtx,nccl");
  EXPECT_EQ(c.buffer_bytes, 256ull << 20);
  EXPECT_EQ(c.flush_interval_ms, 500u);
  EXPECT_EQ(c.output_pattern, "gtrace-%h-%p");
  EXPECT_EQ(c.exit_wait_ms, 100u);
  ASSERT_EQ(c.warnings.size(), 8u);
  std::string all;
  for (auto& w : c.warnings) all += w + "\n";
  EXPECT_NE(all.find("unknown variable GTRACE_TYPO"), std::string::npos) << all;
  EXPECT_NE(all.find("GTRACE_BUFFER_MB='lots'"), std::string::npos) << all;
  EXPECT_NE(all.find("GTRACE_FLUSH_MS='-5'"), std::string::npos) << all;
  EXPECT_NE(all.find("unknown trace 'bogus'"), std::string::npos) << all;
}

// Issue 28, item 13: `gtrace profile` honours GTRACE_LIBRARY, and the traced program inherits it;
// the library must not call the CLI's own variable unknown.
TEST(Config, TheClisLibraryVariableIsKnown) {
  Config c = Load({{"GTRACE_LIBRARY", "/opt/gtrace/lib/libgtrace.so"}});
  EXPECT_TRUE(c.warnings.empty()) << c.warnings[0];
}

TEST(Config, TraceLists) {
  uint32_t m = 0;
  std::string err;
  std::vector<std::string> notes;
  EXPECT_TRUE(ParseTraceList("nvtx, cuda", &m, &err, &notes));
  EXPECT_EQ(m, kSourceNvtx | kSourceCuda);
  EXPECT_TRUE(ParseTraceList("none", &m, &err, &notes));
  EXPECT_EQ(m, 0u);
  EXPECT_FALSE(ParseTraceList("none,nvtx", &m, &err, &notes));
  EXPECT_FALSE(ParseTraceList("nvtx,", &m, &err, &notes));
  EXPECT_TRUE(ParseTraceList("cuda,mpi", &m, &err, &notes));  // nsys name: accepted with a note
  EXPECT_EQ(m, kSourceCuda);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("mpi"), std::string::npos);
  notes.clear();
  EXPECT_TRUE(ParseTraceList("cuda,osrt", &m, &err, &notes));  // issue 18: implemented
  EXPECT_EQ(m, kSourceCuda | kSourceOsrt);
  EXPECT_TRUE(notes.empty());
}

TEST(OutputPath, Placeholders) {
  std::map<std::string, std::string> env = {{"SLURM_PROCID", "7"}};
  g_env = &env;
  EnvLookup lookup = FakeGetenv;
  std::string out, warning;
  ASSERT_TRUE(ExpandOutputPattern("rep_%q{SLURM_PROCID}_%h_%p_100%%", "node1", 42, lookup, &out, &warning).ok());
  EXPECT_EQ(out, "rep_7_node1_42_100%");
  EXPECT_TRUE(warning.empty());
  ASSERT_TRUE(ExpandOutputPattern("r%q{NOPE}x", "h", 1, lookup, &out, &warning).ok());
  EXPECT_EQ(out, "rx");
  EXPECT_NE(warning.find("NOPE"), std::string::npos);
  EXPECT_FALSE(ExpandOutputPattern("bad%z", "h", 1, lookup, &out).ok());
  EXPECT_FALSE(ExpandOutputPattern("bad%", "h", 1, lookup, &out).ok());
  EXPECT_FALSE(ExpandOutputPattern("bad%q", "h", 1, lookup, &out).ok());
  EXPECT_FALSE(ExpandOutputPattern("bad%q{X", "h", 1, lookup, &out).ok());
  EXPECT_FALSE(ExpandOutputPattern("bad%q{}", "h", 1, lookup, &out).ok());
  EXPECT_FALSE(ExpandOutputPattern("%q{NOPE}", "h", 1, lookup, &out).ok());  // expands to nothing
  g_env = nullptr;
}

TEST(Rank, LauncherPrecedence) {
  std::map<std::string, std::string> env = {{"RANK", "5"},           {"LOCAL_RANK", "1"}, {"WORLD_SIZE", "8"},
                                            {"OMPI_COMM_WORLD_RANK", "2"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "0"},
                                            {"OMPI_COMM_WORLD_SIZE", "4"}};
  g_env = &env;
  RankInfo r = DetectRank(FakeGetenv);
  EXPECT_EQ(r.rank, 2);  // Open MPI comes before torchrun's RANK
  EXPECT_EQ(r.local_rank, 0);
  EXPECT_EQ(r.world_size, 4);
  EXPECT_EQ(r.source, "OMPI_COMM_WORLD_RANK");
  env["SLURM_PROCID"] = "9";
  env["SLURM_NPROCS"] = "16";
  r = DetectRank(FakeGetenv);
  EXPECT_EQ(r.rank, 9);
  EXPECT_EQ(r.local_rank, -1);
  EXPECT_EQ(r.world_size, 16);  // SLURM_NTASKS absent: SLURM_NPROCS
  env = {{"PMI_RANK", "3"}, {"PMI_SIZE", "6"}, {"PMI_LOCAL_RANK", "1"}};
  r = DetectRank(FakeGetenv);
  EXPECT_EQ(r.rank, 3);
  EXPECT_EQ(r.local_rank, 1);
  EXPECT_EQ(r.world_size, 6);
  env = {{"PMIX_RANK", "x"}, {"RANK", "4"}};  // malformed PMIx rank is skipped
  r = DetectRank(FakeGetenv);
  EXPECT_EQ(r.rank, 4);
  EXPECT_EQ(r.source, "RANK");
  env = {};
  r = DetectRank(FakeGetenv);
  EXPECT_EQ(r.rank, -1);
  EXPECT_EQ(r.source, "");
  g_env = nullptr;
}

}  // namespace
}  // namespace gt
