// `gtrace nsys-compat DIR` (issue 15): DIR/nsys answers `nsys stats` and `nsys export` the way tools
// that call the nsys CLI use them (BSC's nsys2prv: `nsys export -t sqlite --force-overwrite=true
// --include-json=true R` and `nsys stats -r cuda_api_trace --timeunit nsec -f csv -o BASE R.sqlite`),
// with nsys's CSV header spelling, units and column order and nsys's output file names, and refuses
// everything else with a clear error. The CUDA run goes through the fake CUPTI.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <string>
#include <vector>

#include "tests/cuda/cuda_test_util.h"

namespace gt::test {
namespace {

using Rows = std::vector<std::string>;

Rows Lines(const std::string& text) {
  Rows out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos)
      end = text.size();
    out.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

struct Compat {
  TempDir dir;
  CudaRun run;
  std::string nsys;
};

void SetUpCompat(Compat* c) {
  c->run = RunTraced(c->dir, {"nvtx"});
  ASSERT_EQ(c->run.run.exit_code, 0) << c->run.run.err;
  ASSERT_FALSE(c->run.db.empty()) << c->run.export_err;
  RunResult w = RunProgram({CliPath(), "nsys-compat", c->dir.File("bin")});
  ASSERT_EQ(w.exit_code, 0) << w.err;
  c->nsys = c->dir.File("bin/nsys");
  struct stat st;
  ASSERT_EQ(::stat(c->nsys.c_str(), &st), 0);
  EXPECT_NE(st.st_mode & S_IXUSR, 0u);
}

TEST(NsysCompat, StatsCsvAsNsysWritesIt) {
  Compat c;
  SetUpCompat(&c);
  std::string base = c.dir.File("report");
  RunResult r = RunProgram({c.nsys, "stats", "-r", "cuda_api_trace,cuda_gpu_trace", "--timeunit", "nsec", "-f", "csv",
                            "-o", base, c.run.db});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Rows api = Lines(ReadFile(base + "_cuda_api_trace.csv"));
  ASSERT_EQ(api.size(), 7u) << ReadFile(base + "_cuda_api_trace.csv");  // header + 6 calls
  EXPECT_EQ(api[0], "Start (ns),Duration (ns),Name,Result,CorrID,Pid,Tid,T-Pri,Thread Name");
  EXPECT_NE(api[1].find(",2000,cudaStreamCreate,0,1,"), std::string::npos) << api[1];
  Rows gpu = Lines(ReadFile(base + "_cuda_gpu_trace.csv"));
  ASSERT_EQ(gpu.size(), 6u);  // header + 5 kernels
  EXPECT_EQ(
      gpu[0],
      "Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),DymSMem (MB),Bytes (MB),"
      "Throughput (MB/s),SrcMemKd,DstMemKd,Device,Ctx,GreenCtx,Strm,Name");
  EXPECT_NE(gpu[1].find(",1000,2,4,1,1,256,1,1,16,0.000,0.000,,,,,Fake GPU 0 (0),1,,13,warmup"), std::string::npos)
      << gpu[1];
  EXPECT_NE(r.out.find("Generated:"), std::string::npos) << r.out;
  // An existing output is kept unless --force-overwrite.
  RunResult again = RunProgram({c.nsys, "stats", "-r", "cuda_api_trace", "-f", "csv", "-o", base, c.run.db});
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_NE(again.err.find("exists; use --force-overwrite"), std::string::npos) << again.err;
  RunResult forced = RunProgram(
      {c.nsys, "stats", "-r", "cuda_api_trace", "-f", "csv", "--force-overwrite", "true", "-o", base, c.run.db});
  EXPECT_EQ(forced.exit_code, 0) << forced.err;
  // No -o: the report on standard output.
  RunResult out = RunProgram({c.nsys, "stats", "-r", "cuda_gpu_kern_sum", "-f", "csv", c.run.db});
  EXPECT_EQ(out.exit_code, 0) << out.err;
  EXPECT_NE(out.out.find("Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name"),
            std::string::npos)
      << out.out;
}

TEST(NsysCompat, ExportSkipsAndRefusals) {
  Compat c;
  SetUpCompat(&c);
  // nsys2prv's export call on a stream: writes <input>.sqlite.
  ASSERT_EQ(c.run.streams.size(), 1u);
  std::string stream = c.dir.File("copy.gtrace");
  ASSERT_EQ(RunProgram({"cp", c.run.streams[0], stream}).exit_code, 0);
  RunResult e = RunProgram({c.nsys, "export", "-t", "sqlite", "--force-overwrite=true", "--include-json=true", stream});
  ASSERT_EQ(e.exit_code, 0) << e.err;
  Db db(c.dir.File("copy.sqlite"));
  EXPECT_EQ(db.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"), 5);
  // A report without its tables: nsys's SKIPPED line, no file, exit 0.
  std::string base = c.dir.File("skip");
  RunOptions o = TracedRun(c.dir, "nvtx-only");
  RunResult nv = RunProgram({SamplePath("nvtx_only_app")}, o);
  ASSERT_EQ(nv.exit_code, 0) << nv.err;
  std::string nvtx_db = c.dir.File("nvtx-only.sqlite");
  std::vector<std::string> nvtx_streams;
  for (const std::string& s : c.dir.Find(".gtrace")) {
    if (s.find("/nvtx-only") != std::string::npos)
      nvtx_streams.push_back(s);
  }
  ASSERT_EQ(nvtx_streams.size(), 1u);
  ASSERT_EQ(RunProgram({CliPath(), "export", "-o", nvtx_db, nvtx_streams[0]}).exit_code, 0);
  RunResult skip =
      RunProgram({c.nsys, "stats", "-r", "cuda_api_trace", "--timeunit", "nsec", "-f", "csv", "-o", base, nvtx_db});
  EXPECT_EQ(skip.exit_code, 0) << skip.err;
  EXPECT_EQ(skip.out.rfind("SKIPPED: " + nvtx_db + " does not contain", 0), 0u) << skip.out;
  EXPECT_EQ(ReadFile(base + "_cuda_api_trace.csv"), "");
  // Everything else: a clear error, non-zero, nothing written.
  struct Bad {
    std::vector<std::string> args;
    std::string says;
  };
  const Bad bad[] = {
      {{"profile", "ls"}, "`nsys profile` is not answered"},
      {{"export", "-t", "json", stream}, "--type json"},
      {{"export", "-t", "sqlite", c.dir.File("x.nsys-rep")}, "cannot read an nsys report file"},
      {{"export", "-t", "sqlite", stream}, "copy.sqlite exists"},
      {{"stats", "-r", "cuda_api_trace", "--timeunit", "usec", c.run.db}, "--timeunit usec"},
      {{"stats", "-r", "cuda_api_trace", c.dir.File("r.nsys-rep")}, "cannot read an nsys report file"},
      {{"stats", "--filter-nvtx=step", "-r", "cuda_api_trace", c.run.db}, "filter-nvtx"},
  };
  for (const Bad& b : bad) {
    std::vector<std::string> argv = {c.nsys};
    argv.insert(argv.end(), b.args.begin(), b.args.end());
    RunResult r = RunProgram(argv);
    EXPECT_EQ(r.exit_code, 1) << b.args[0] << " " << b.args[1];
    EXPECT_NE(r.err.find(b.says), std::string::npos) << r.err;
    EXPECT_EQ(r.err.rfind("gtrace nsys-compat: ", 0), 0u) << r.err;
  }
  // DIR/nsys is never replaced silently.
  std::string before = ReadFile(c.nsys);
  RunResult again = RunProgram({CliPath(), "nsys-compat", c.dir.File("bin")});
  EXPECT_NE(again.exit_code, 0);
  EXPECT_NE(again.err.find("exists; use --force"), std::string::npos) << again.err;
  EXPECT_EQ(ReadFile(c.nsys), before);
}

}  // namespace
}  // namespace gt::test
