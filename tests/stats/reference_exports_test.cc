// The reports on two real nsys exports (shared/reference; skipped when absent). Every expected number is
// either computed here with plain SQL on the same file, independently of the library, or written out by
// hand from those queries.
//   flameox-nsys-2025.5.2.sqlite: 3 kernels add_one, 33 RUNTIME rows, one 4096-byte HtoD memcpy, no NVTX.
//   nsysai-mock-nsys-2026.1.1.sqlite: 2 kernels, 9 RUNTIME rows, one 4-byte DtoH memcpy, no NVTX.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>

#include "tests/stats/nsys_test_db.h"
#include "tools/stats/stats.h"

namespace gt::stats::testing {
namespace {

const char kKernSumHeader[] =
    "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n";
const char kMemTimeHeader[] =
    "Time (%),Total Time (ns),Count,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Operation\n";
const char kMemSizeHeader[] = "Total (MB),Count,Avg (MB),Med (MB),Min (MB),Max (MB),StdDev (MB),Operation\n";
const char kGpuTraceHeader[] =
    "Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),DymSMem (MB),Bytes (MB),"
    "Throughput (MB/s),SrcMemKd,DstMemKd,Device,Ctx,GreenCtx,Strm,Name\n";

class ReferenceExport : public ::testing::Test {
 protected:
  // False when the file is absent (the test then skips). The test's own queries open it read-only too.
  bool Open(const std::string& file) {
    path_ = ReferenceDir() + "/" + file;
    if (!std::filesystem::exists(path_))
      return false;
    EXPECT_EQ(
        sqlite3_open_v2(("file:" + path_ + "?mode=ro").c_str(), &db_, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr),
        SQLITE_OK);
    return true;
  }
  void TearDown() override { sqlite3_close(db_); }

  // Rows of a query as text.
  std::vector<std::vector<std::string>> Query(const std::string& sql) {
    std::vector<std::vector<std::string>> rows;
    sqlite3_stmt* stmt = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK) << sqlite3_errmsg(db_);
    while (sqlite3_step(stmt) == SQLITE_ROW) {
      std::vector<std::string> row;
      for (int c = 0; c < sqlite3_column_count(stmt); ++c) {
        const unsigned char* text = sqlite3_column_text(stmt, c);
        row.emplace_back(text ? reinterpret_cast<const char*>(text) : "");
      }
      rows.push_back(std::move(row));
    }
    sqlite3_finalize(stmt);
    return rows;
  }
  int64_t QueryInt(const std::string& sql) { return std::stoll(Query(sql).at(0).at(0)); }

  // Checks a "Time (%) ... Name" summary against durations grouped by name by plain SQL: totals,
  // counts, min/max, average, median, sample standard deviation, percentages and the row order
  // (total descending, then name).
  void ExpectTimeSummary(const std::string& report, const std::string& name_duration_sql) {
    std::map<std::string, std::vector<int64_t>> groups;
    int64_t grand_total = 0;
    for (const auto& row : Query(name_duration_sql + " ORDER BY 2")) {
      groups[row[0]].push_back(std::stoll(row[1]));
      grand_total += std::stoll(row[1]);
    }
    std::vector<std::pair<int64_t, std::string>> order;
    for (const auto& [name, durations] : groups) {
      int64_t total = 0;
      for (int64_t d : durations)
        total += d;
      order.emplace_back(-total, name);
    }
    std::sort(order.begin(), order.end());
    const auto rows = ParseCsv(RunOk(path_, report));
    ASSERT_EQ(rows.size(), groups.size() + 1);
    for (size_t i = 0; i < order.size(); ++i) {
      const std::vector<std::string>& row = rows[i + 1];
      const std::vector<int64_t>& d = groups[order[i].second];
      const int64_t total = -order[i].first;
      const double n = static_cast<double>(d.size());
      double squares = 0;
      for (int64_t x : d)
        squares += (x - total / n) * (x - total / n);
      const double median = d.size() % 2 ? d[d.size() / 2] : (d[d.size() / 2 - 1] + d[d.size() / 2]) / 2.0;
      char percent[32], avg[32], med[32], stddev[32];
      std::snprintf(percent, sizeof(percent), "%.1f", 100.0 * total / grand_total);
      std::snprintf(avg, sizeof(avg), "%.1f", total / n);
      std::snprintf(med, sizeof(med), "%.1f", median);
      std::snprintf(stddev, sizeof(stddev), "%.1f", d.size() > 1 ? std::sqrt(squares / (n - 1)) : 0.0);
      EXPECT_EQ(
          row, (std::vector<std::string>{percent, std::to_string(total), std::to_string(d.size()), avg, med,
                                         std::to_string(d.front()), std::to_string(d.back()), stddev, order[i].second}))
          << report << " row " << i;
    }
  }

  std::string path_;
  sqlite3* db_ = nullptr;
};

// Runtime API names stripped the way nsys prints them, in plain SQL.
constexpr char kApiNameDurationSql[] =
    "SELECT CASE WHEN substr(s.value, -6, 2) = '_v' THEN substr(s.value, 1, length(s.value) - 6) ELSE s.value END,"
    " r.end - r.start FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId";
constexpr char kKernelNameDurationSql[] =
    "SELECT s.value, k.end - k.start FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName";

TEST_F(ReferenceExport, FlameoxKernelSummary) {
  if (!Open("flameox-nsys-2025.5.2.sqlite"))
    GTEST_SKIP() << path_ << " not present";
  EXPECT_EQ(
      Query("SELECT count(*), sum(end - start), min(end - start), max(end - start) FROM CUPTI_ACTIVITY_KIND_KERNEL"),
      (std::vector<std::vector<std::string>>{{"3", "3840", "1056", "1440"}}));
  EXPECT_EQ(RunOk(path_, "cuda_gpu_kern_sum"),
            std::string(kKernSumHeader) +
                "100.0,3840,3,1280.0,1344.0,1056,1440,199.8,\"add_one(const float *, float *, int)\"\n");
  ExpectTimeSummary("cuda_gpu_kern_sum", kKernelNameDurationSql);
  EXPECT_EQ(RunOk(path_, "cuda_gpu_kern_sum", "table"),
            " ** CUDA GPU Kernel Summary (cuda_gpu_kern_sum):\n"
            "\n"
            " Time (%)  Total Time (ns)  Instances  Avg (ns)  Med (ns)  Min (ns)  Max (ns)  StdDev (ns)                "
            "  Name                \n"
            " --------  ---------------  ---------  --------  --------  --------  --------  -----------  "
            "------------------------------------\n"
            "    100.0             3840          3    1280.0    1344.0      1056      1440        199.8  add_one(const "
            "float *, float *, int)\n"
            "\n");
}

TEST_F(ReferenceExport, FlameoxApiSummary) {
  if (!Open("flameox-nsys-2025.5.2.sqlite"))
    GTEST_SKIP() << path_ << " not present";
  ASSERT_EQ(QueryInt("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME"), 33);
  ExpectTimeSummary("cuda_api_sum", kApiNameDurationSql);
  const auto rows = ParseCsv(RunOk(path_, "cuda_api_sum"));
  int64_t calls = 0;
  bool saw_launch = false;
  for (size_t i = 1; i < rows.size(); ++i) {
    calls += std::stoll(rows[i][2]);
    if (rows[i][8] == "cudaLaunchKernel") {
      saw_launch = true;
      // Four launches of 45925, 4441, 3079 and 14421 ns (one captured into the graph).
      EXPECT_EQ(rows[i], (std::vector<std::string>{"18.8", "67866", "4", "16966.5", "9431.0", "3079", "45925",
                                                   "19956.8", "cudaLaunchKernel"}));
    }
    EXPECT_EQ(rows[i][8].find("_v3020"), std::string::npos) << rows[i][8];
  }
  EXPECT_TRUE(saw_launch);
  EXPECT_EQ(calls, 33);
}

TEST_F(ReferenceExport, FlameoxMemoryAndGpuTrace) {
  if (!Open("flameox-nsys-2025.5.2.sqlite"))
    GTEST_SKIP() << path_ << " not present";
  EXPECT_EQ(Query("SELECT end - start, bytes, copyKind, srcKind, dstKind FROM CUPTI_ACTIVITY_KIND_MEMCPY"),
            (std::vector<std::vector<std::string>>{{"864", "4096", "1", "0", "2"}}));
  EXPECT_EQ(RunOk(path_, "cuda_gpu_mem_time_sum"),
            std::string(kMemTimeHeader) + "100.0,864,1,864.0,864.0,864,864,0.0,[CUDA memcpy Host-to-Device]\n");
  EXPECT_EQ(RunOk(path_, "cuda_gpu_mem_size_sum"),
            std::string(kMemSizeHeader) + "0.004,1,0.004,0.004,0.004,0.004,0.000,[CUDA memcpy Host-to-Device]\n");
  const std::string kernel_tail =
      ",4,1,1,256,1,1,16,0.000,0.000,,,,,NVIDIA GeForce RTX 3060 (0),1,,13,"
      "\"add_one(const float *, float *, int)\"\n";
  EXPECT_EQ(RunOk(path_, "cuda_gpu_trace"),
            std::string(kGpuTraceHeader) +
                "339231173,864,124,,,,,,,,,,0.004,4740.741,Pageable,Device,NVIDIA GeForce RTX 3060 (0),1,,13,"
                "[CUDA memcpy Host-to-Device]\n"
                "339316740,1440,129" +
                kernel_tail + "339324324,1344,131" + kernel_tail + "339328676,1056,133" + kernel_tail);
  EXPECT_EQ(QueryInt("SELECT (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL) + "
                     "(SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY)"),
            4);
}

TEST_F(ReferenceExport, FlameoxApiTrace) {
  if (!Open("flameox-nsys-2025.5.2.sqlite"))
    GTEST_SKIP() << path_ << " not present";
  const auto rows = ParseCsv(RunOk(path_, "cuda_api_trace"));
  ASSERT_EQ(rows.size(), 34u);
  const auto first = Query(
      "SELECT r.start, r.end - r.start, s.value, r.returnValue, r.correlationId, r.globalTid / 16777216 % 16777216,"
      " r.globalTid % 16777216, t.priority, n.value FROM CUPTI_ACTIVITY_KIND_RUNTIME r"
      " JOIN StringIds s ON s.id = r.nameId JOIN ThreadNames t ON t.globalTid = r.globalTid"
      " JOIN StringIds n ON n.id = t.nameId ORDER BY r.start LIMIT 2");
  EXPECT_EQ(first[0], (std::vector<std::string>{"244414694", "1879", "cuModuleGetLoadingMode", "0", "1", "945961",
                                                "945961", "20", "flameox-nsight-"}));
  EXPECT_EQ(rows[1], first[0]);
  EXPECT_EQ(rows[2], (std::vector<std::string>{"339115401", "68439", "cudaMalloc", "0", "119", "945961", "945961", "20",
                                               "flameox-nsight-"}));
  EXPECT_EQ(first[1][2], "cudaMalloc_v3020");
  for (size_t i = 2; i < rows.size(); ++i)
    EXPECT_LE(std::stoll(rows[i - 1][0]), std::stoll(rows[i][0]));
}

TEST_F(ReferenceExport, FlameoxHasNoNvtx) {
  if (!Open("flameox-nsys-2025.5.2.sqlite"))
    GTEST_SKIP() << path_ << " not present";
  std::ostringstream out;
  const gt::Status status = RunReport(path_, "nvtx_sum", ReportOptions{}, out);
  EXPECT_EQ(status.message(), "report nvtx_sum: no NVTX_EVENTS table in " + path_ + " \xE2\x80\x94 was NVTX traced?");
  EXPECT_FALSE(RunReport(path_, "nvtx_gpu_proj_sum", ReportOptions{}, out).ok());
  EXPECT_EQ(out.str(), "");
}

TEST_F(ReferenceExport, NsysaiMockKernelAndApiSummaries) {
  if (!Open("nsysai-mock-nsys-2026.1.1.sqlite"))
    GTEST_SKIP() << path_ << " not present";
  ASSERT_EQ(QueryInt("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"), 2);
  ASSERT_EQ(QueryInt("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME"), 9);
  ExpectTimeSummary("cuda_gpu_kern_sum", kKernelNameDurationSql);
  ExpectTimeSummary("cuda_api_sum", kApiNameDurationSql);
  const auto kernels = ParseCsv(RunOk(path_, "cuda_gpu_kern_sum"));
  ASSERT_EQ(kernels.size(), 3u);
  EXPECT_EQ(std::vector<std::string>(kernels[1].begin(), kernels[1].end() - 1),
            (std::vector<std::string>{"65.1", "2689", "1", "2689.0", "2689.0", "2689", "2689", "0.0"}));
  EXPECT_EQ(kernels[1][8].rfind("void at::native::reduce_kernel<(int)512, (int)1, at::native::ReduceOp<float", 0), 0u);
  EXPECT_EQ(kernels[2][0], "34.9");
  EXPECT_EQ(kernels[2][8],
            "void at::native::vectorized_elementwise_kernel<(int)4, at::native::FillFunctor<float>, std::array<char *, "
            "(unsigned long)1>>(int, T2, T3)");
  const auto api = ParseCsv(RunOk(path_, "cuda_api_sum"));
  ASSERT_EQ(api.size(), 9u);  // 8 names: cudaLaunchKernel twice
  EXPECT_EQ(api[1], (std::vector<std::string>{"86.4", "35200405", "2", "17600202.5", "17600202.5", "17436399",
                                              "17764006", "231653.1", "cudaLaunchKernel"}));
}

TEST_F(ReferenceExport, NsysaiMockMemoryAndTraces) {
  if (!Open("nsysai-mock-nsys-2026.1.1.sqlite"))
    GTEST_SKIP() << path_ << " not present";
  EXPECT_EQ(RunOk(path_, "cuda_gpu_mem_time_sum"),
            std::string(kMemTimeHeader) + "100.0,1632,1,1632.0,1632.0,1632,1632,0.0,[CUDA memcpy Device-to-Host]\n");
  EXPECT_EQ(RunOk(path_, "cuda_gpu_mem_size_sum"),
            std::string(kMemSizeHeader) + "0.000,1,0.000,0.000,0.000,0.000,0.000,[CUDA memcpy Device-to-Host]\n");
  const auto trace = ParseCsv(RunOk(path_, "cuda_gpu_trace"));
  ASSERT_EQ(trace.size(), 4u);
  EXPECT_EQ(std::vector<std::string>(trace[1].begin(), trace[1].end() - 1),
            (std::vector<std::string>{"1517727052",
                                      "1440",
                                      "143",
                                      "1",
                                      "1",
                                      "1",
                                      "128",
                                      "1",
                                      "1",
                                      "16",
                                      "0.000",
                                      "0.000",
                                      "",
                                      "",
                                      "",
                                      "",
                                      "NVIDIA GeForce RTX 3080 (0)",
                                      "1",
                                      "",
                                      "7"}));
  EXPECT_EQ(std::vector<std::string>(trace[2].begin(), trace[2].end() - 1),
            (std::vector<std::string>{"1535979030",
                                      "2689",
                                      "159",
                                      "1",
                                      "1",
                                      "1",
                                      "16",
                                      "1",
                                      "1",
                                      "28",
                                      "0.000",
                                      "0.000",
                                      "",
                                      "",
                                      "",
                                      "",
                                      "NVIDIA GeForce RTX 3080 (0)",
                                      "1",
                                      "",
                                      "7"}));
  EXPECT_EQ(trace[3], (std::vector<std::string>{"1540178479",
                                                "1632",
                                                "171",
                                                "",
                                                "",
                                                "",
                                                "",
                                                "",
                                                "",
                                                "",
                                                "",
                                                "",
                                                "0.000",
                                                "2.451",
                                                "Device",
                                                "Pinned",
                                                "NVIDIA GeForce RTX 3080 (0)",
                                                "1",
                                                "",
                                                "7",
                                                "[CUDA memcpy Device-to-Host]"}));
  const auto api = ParseCsv(RunOk(path_, "cuda_api_trace"));
  ASSERT_EQ(api.size(), 10u);
  EXPECT_EQ(api[1], (std::vector<std::string>{"1304349703", "3008", "cuModuleGetLoadingMode", "0", "1", "91186",
                                              "91186", "20", "python"}));
  EXPECT_EQ(api[2][2], "cudaGetDeviceProperties_v12000");  // 5-digit version: kept, as nsys prints it
  EXPECT_EQ(api[3][2], "cudaStreamIsCapturing_v10000");
}

}  // namespace
}  // namespace gt::stats::testing
