// Compact CUDA records end to end (issue 16):
//  - streams written before the compact encoding (full CudaKernel / CudaApiCall messages; recorded
//    from fake_cuda_app by the previous libgtrace.so and committed under tests/data with the
//    `sqlite3 .dump` of their export by the previous `gtrace export`) still export byte for byte
//    the same;
//  - a traced run of fake_cuda_app (the fake CUPTI: a test double with CUPTI's record layout) writes
//    the compact form, and its export has every kernel and API call.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <string>

#include "gtrace.pb.h"
#include "tests/cuda/cuda_test_util.h"
#include "tools/stream/stream_reader.h"

namespace gt::test {
namespace {

// `sqlite3 DB .dump` without the lines that name the export itself (output path, duration) and the
// random session id: what is left depends only on the input stream.
std::string StableDump(const std::string& db, bool* have_cli) {
  RunResult r = RunProgram({"sqlite3", db, ".dump"});
  *have_cli = r.exit_code == 0;
  std::istringstream in(r.out);
  std::string line, out;
  static const std::regex kSessionId("'[0-9a-f]{16}'");
  while (std::getline(in, line)) {
    if (line.rfind("INSERT INTO META_DATA_EXPORT VALUES('EXPORT_PARAM_", 0) == 0 ||
        line.rfind("INSERT INTO META_DATA_EXPORT VALUES('EXPORT_TIME", 0) == 0) {
      continue;
    }
    if (line.rfind("INSERT INTO GTRACE_RANKS VALUES(", 0) == 0) line = std::regex_replace(line, kSessionId, "'?'");
    out += line + "\n";
  }
  return out;
}

TEST(CudaCompactStream, StreamsOfFullMessagesExportAsBefore) {
  // fake_cuda_app basic (copies, kernels, syncs, graphs, drops, ...) and profiler 20 (40 kernels).
  for (const std::string scenario : {"basic", "profiler"}) {
    std::string name = "cuda_full_" + scenario;
    SCOPED_TRACE(name);
    TempDir dir;
    // Exported as it was for the committed dump: from its directory, under its recorded name.
    std::string in = dir.File(scenario + ".gtrace");
    WriteFile(in, ReadFile(SourceDir() + "/tests/data/" + name + ".gtrace"));
    RunOptions o;
    o.cwd = dir.path();
    RunResult e = RunProgram({CliPath(), "export", "-o", "out.sqlite", scenario + ".gtrace"}, o);
    ASSERT_EQ(e.exit_code, 0) << e.err;
    bool have_cli = false;
    std::string dump = StableDump(dir.File("out.sqlite"), &have_cli);
    if (!have_cli) GTEST_SKIP() << "the sqlite3 command-line tool is not installed";
    std::string expected = ReadFile(SourceDir() + "/tests/data/" + name + ".dump");
    ASSERT_FALSE(expected.empty());
    EXPECT_TRUE(dump == expected) << "the export of tests/data/" << name << ".gtrace changed (compare with sqlite3 .dump)";
    // The stream really is in the old form: full messages, no compact fields.
    stream::StreamReader r;
    r.set_expand_compact(false);
    ASSERT_TRUE(r.Open(in).ok());
    schema::Chunk c;
    bool has = false;
    int kernels = 0, batches = 0;
    while (r.Next(&c, &has).ok() && has) {
      kernels += c.cuda_kernels_size();
      batches += c.cuda_kernel_batches_size() + c.cuda_api_batches_size();
    }
    EXPECT_GT(kernels, 0);
    EXPECT_EQ(batches, 0);
  }
}

TEST(CudaCompactStream, TracedRunWritesCompactRecordsAndExportsThemAll) {
  TempDir dir;
  CudaRun run = RunTraced(dir, {"profiler", "20"});
  ASSERT_EQ(run.run.exit_code, 0) << run.run.err;
  ASSERT_EQ(run.streams.size(), 1u);
  ASSERT_FALSE(run.db.empty()) << run.export_err;
  // On disk: batches only, one config per launch configuration.
  stream::StreamReader r;
  r.set_expand_compact(false);
  ASSERT_TRUE(r.Open(run.streams[0]).ok());
  schema::Chunk c;
  bool has = false;
  int full = 0, batch_kernels = 0, kernel_configs = 0;
  while (r.Next(&c, &has).ok() && has) {
    full += c.cuda_kernels_size() + c.cuda_api_calls_size();
    kernel_configs += c.cuda_kernel_configs_size();
    for (const auto& b : c.cuda_kernel_batches()) batch_kernels += b.config_id_size();
  }
  EXPECT_EQ(full, 0);
  EXPECT_EQ(batch_kernels, 40);   // window0..19 and gap0..19
  EXPECT_EQ(kernel_configs, 40);  // each kernel has its own name, so its own configuration
  Db db(run.db);
  EXPECT_EQ(db.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"), 40);
  EXPECT_EQ(db.Int("SELECT count(DISTINCT correlationId) FROM CUPTI_ACTIVITY_KIND_KERNEL"), 40);
  EXPECT_EQ(db.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN CUPTI_ACTIVITY_KIND_KERNEL k "
                   "USING (correlationId)"),
            40);
  EXPECT_EQ(db.Int("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName "
                   "WHERE s.value = 'window7'"),
            1);
}

}  // namespace
}  // namespace gt::test
