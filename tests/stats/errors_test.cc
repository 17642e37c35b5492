// Bad input: unknown reports and formats, files that are missing, not SQLite or not nsys exports,
// missing tables; and that the database is opened read-only.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "tests/stats/nsys_test_db.h"
#include "tools/stats/database.h"
#include "tools/stats/stats.h"

namespace gt::stats::testing {
namespace {

gt::Status RunCapture(const std::string& path, std::string_view report, std::string* output) {
  std::ostringstream out;
  gt::Status status = RunReport(path, report, ReportOptions{}, out);
  *output = out.str();
  return status;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(StatsApi, ListsTheReportsInHelpOrder) {
  std::vector<std::string> names;
  for (const ReportInfo& info : Reports()) {
    names.emplace_back(info.name);
    EXPECT_FALSE(info.description.empty()) << info.name;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"nvtx_sum", "nvtx_gpu_proj_sum", "cuda_api_sum", "cuda_api_trace",
                                             "cuda_gpu_kern_sum", "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum",
                                             "cuda_gpu_trace", "osrt_sum", "cpu_samples_bottomup", "cpu_samples_topdown",
                                             "nccl_sum", "cuda_api_callers", "gpu_metrics_sum"}));
}

TEST(StatsApi, ParsesFormats) {
  Format format = Format::kTable;
  ASSERT_TRUE(ParseFormat("csv", &format).ok());
  EXPECT_EQ(format, Format::kCsv);
  ASSERT_TRUE(ParseFormat("json", &format).ok());
  EXPECT_EQ(format, Format::kJson);
  ASSERT_TRUE(ParseFormat("table", &format).ok());
  EXPECT_EQ(format, Format::kTable);
  format = Format::kCsv;
  ASSERT_TRUE(ParseFormat("column", &format).ok());  // nsys's name for the same layout
  EXPECT_EQ(format, Format::kTable);
  const gt::Status bad = ParseFormat("xml", &format);
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.message(), "unknown format 'xml'; valid formats: table (or column), csv, json");
}

TEST(StatsErrors, UnknownReportListsValidNames) {
  TestDb db("unknown_report");
  std::string output;
  const gt::Status status = RunCapture(db.path(), "cuda_kern_sum", &output);
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(status.message(),
            "unknown report 'cuda_kern_sum'; valid reports: nvtx_sum, nvtx_gpu_proj_sum, cuda_api_sum, "
            "cuda_api_trace, cuda_gpu_kern_sum, cuda_gpu_mem_time_sum, cuda_gpu_mem_size_sum, cuda_gpu_trace, "
            "osrt_sum, cpu_samples_bottomup, cpu_samples_topdown, nccl_sum, cuda_api_callers, gpu_metrics_sum");
  EXPECT_EQ(output, "");
}

TEST(StatsErrors, MissingFileIsNamed) {
  const std::string path = ::testing::TempDir() + "gt_stats_does_not_exist.sqlite";
  std::string output;
  const gt::Status status = RunCapture(path, "cuda_api_sum", &output);
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(status.message(), "report cuda_api_sum: cannot open " + path + ": no such file");
  EXPECT_FALSE(std::filesystem::exists(path)) << "a read-only open must not create the file";
}

TEST(StatsErrors, DirectoryIsRefused) {
  std::string output;
  const gt::Status status = RunCapture(::testing::TempDir(), "cuda_api_sum", &output);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("is a directory"), std::string::npos) << status.message();
}

TEST(StatsErrors, NonSqliteFileIsNamed) {
  const std::string path = ::testing::TempDir() + "gt_stats_not_sqlite.sqlite";
  std::ofstream(path) << "this is a text file, long enough to not be mistaken for an empty database\n";
  std::string output;
  const gt::Status status = RunCapture(path, "nvtx_sum", &output);
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(status.message().rfind("report nvtx_sum: " + path + " is not a readable SQLite database", 0), 0u)
      << status.message();
  std::remove(path.c_str());
}

TEST(StatsErrors, SqliteFileWithoutNsysTablesIsNamed) {
  const std::string path = ::testing::TempDir() + "gt_stats_other.sqlite";
  std::remove(path.c_str());
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_exec(db, "CREATE TABLE notes (text TEXT)", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  std::string output;
  const gt::Status status = RunCapture(path, "nvtx_sum", &output);
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(status.message(), "report nvtx_sum: " + path +
                                  " is not an Nsight Systems SQLite export (no StringIds table); create one with "
                                  "`gtrace export` or `nsys export --type sqlite`");
  std::remove(path.c_str());
}

TEST(StatsErrors, MissingTableNamesReportTableAndFile) {
  TestDb db("missing_tables");
  const std::string dash = " \xE2\x80\x94 ";
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"cuda_gpu_kern_sum", "no CUPTI_ACTIVITY_KIND_KERNEL table in " + db.path() + dash + "was CUDA traced?"},
      {"cuda_api_sum", "no CUPTI_ACTIVITY_KIND_RUNTIME table in " + db.path() + dash + "was CUDA traced?"},
      {"nvtx_sum", "no NVTX_EVENTS table in " + db.path() + dash + "was NVTX traced?"},
      {"cuda_gpu_mem_time_sum", "no CUPTI_ACTIVITY_KIND_MEMCPY or _MEMSET table in " + db.path() + dash +
                                    "was CUDA traced, and did the program copy or set memory?"},
  };
  for (const auto& [report, message] : expected) {
    std::string output;
    const gt::Status status = RunCapture(db.path(), report, &output);
    EXPECT_FALSE(status.ok());
    EXPECT_EQ(status.message(), "report " + report + ": " + message);
    EXPECT_EQ(output, "") << "a failed report writes nothing";
  }
}

TEST(StatsErrors, ApiTraceNeedsThreadNamesAndGpuTraceNeedsGpuList) {
  TestDb db("missing_support_tables");
  db.Create({"CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_KERNEL"});
  std::string output;
  gt::Status status = RunCapture(db.path(), "cuda_api_trace", &output);
  EXPECT_EQ(status.message(), "report cuda_api_trace: no ThreadNames table in " + db.path() +
                                  " \xE2\x80\x94 the export must name every traced thread");
  status = RunCapture(db.path(), "cuda_gpu_trace", &output);
  EXPECT_EQ(status.message(), "report cuda_gpu_trace: no TARGET_INFO_GPU table in " + db.path() +
                                  " \xE2\x80\x94 the Device column needs the GPU list (nsys requires it too)");
}

TEST(StatsErrors, EmptyTablesGiveHeaderOnly) {
  TestDb db("empty_tables");
  db.Create({"CUPTI_ACTIVITY_KIND_KERNEL"});
  EXPECT_EQ(RunOk(db.path(), "cuda_gpu_kern_sum"),
            "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n");
  EXPECT_EQ(RunOk(db.path(), "cuda_gpu_kern_sum", "json"), "[]\n");
}

TEST(StatsReadOnly, NeverWritesTheDatabase) {
  TestDb db("read_only");
  db.Create(
      {"NVTX_EVENTS", "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_KERNEL", "ThreadNames", "TARGET_INFO_GPU"});
  db.CreateEnums();
  db.AddNvtx({.start = 0, .end = 100, .text = "r", .global_tid = GlobalTid(1, 1)});
  db.AddRuntime(10, 20, GlobalTid(1, 1), 1, "cudaLaunchKernel_v7000");
  db.AddKernel({.start = 30, .end = 40, .correlation_id = 1, .global_pid = GlobalPid(1), .demangled_name = "k"});
  // OSRT_API as gtrace writes it (tools/nsys/nsys_tables.cc; nsys's 3.24.0 shape), one call.
  db.Exec("CREATE TABLE OSRT_API (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL, "
          "globalTid INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, nestingLevel INTEGER, "
          "callchainId INTEGER NOT NULL, argumentsId INTEGER NOT NULL)");
  db.Exec("INSERT INTO OSRT_API VALUES (50, 90, 27, " + std::to_string(GlobalTid(1, 1)) + ", " +
          std::to_string(db.StringId("read")) + ", 1, 0, 0, 0)");
  const std::string before = ReadFile(db.path());
  ASSERT_EQ(chmod(db.path().c_str(), 0444), 0);
  for (const ReportInfo& info : Reports()) {
    std::string output;
    const gt::Status status = RunCapture(db.path(), info.name, &output);
    // cuda_gpu_mem_* have no memory tables here, cuda_api_callers no CUDA_CALLCHAINS (the helper has no
    // reference DDL for it), gpu_metrics_sum no GPU_METRICS, cpu_samples_* no COMPOSITE_EVENTS (each
    // such report fails with its missing-table message, still without writing); every other report must
    // run on a read-only file.
    if (info.name.find("mem") == std::string_view::npos && info.name != "cuda_api_callers" &&
        info.name != "gpu_metrics_sum" && info.name.rfind("cpu_samples_", 0) != 0) {
      EXPECT_TRUE(status.ok()) << info.name << ": " << status.message();
    }
  }
  chmod(db.path().c_str(), 0644);
  EXPECT_EQ(ReadFile(db.path()), before);
  EXPECT_FALSE(std::filesystem::exists(db.path() + "-journal"));
  EXPECT_FALSE(std::filesystem::exists(db.path() + "-wal"));
}

TEST(StatsReadOnly, PathsWithUriCharactersOpen) {
  EXPECT_EQ(ReadOnlyUri("/tmp/a b?c#d%e.sqlite"), "file:///tmp/a b%3Fc%23d%25e.sqlite?mode=ro");
  EXPECT_EQ(ReadOnlyUri("rel/x.sqlite"), "file:rel/x.sqlite?mode=ro");
  EXPECT_EQ(ReadOnlyUri("//double"), "file:////double?mode=ro");
  TestDb db("odd?name#with%chars");
  db.Create({"CUPTI_ACTIVITY_KIND_KERNEL"});
  db.AddKernel({.start = 0, .end = 5, .correlation_id = 1, .global_pid = GlobalPid(1), .demangled_name = "k"});
  EXPECT_EQ(ParseCsv(RunOk(db.path(), "cuda_gpu_kern_sum")).size(), 2u);
}

}  // namespace
}  // namespace gt::stats::testing
