// The nsys-style reports of tools/stats on a database exported from a fake-CUPTI run (the `basic`
// scenario of fake_cuda_app): every value the scenario fixes is asserted exactly; start times, pids
// and tids (which change from run to run) are checked against the database instead.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "tests/cuda/cuda_test_util.h"
#include "tools/stats/stats.h"

namespace gt::test {
namespace {

using Rows = std::vector<std::string>;

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) out.push_back(line);
  return out;
}

std::vector<std::string> Split(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : line) {
    if (c == ',') {
      out.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  out.push_back(cur);
  return out;
}

class CudaReports : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    run_ = new CudaRun(RunTraced(*dir_, {"basic"}));
  }
  static void TearDownTestSuite() {
    delete run_;
    delete dir_;
  }
  std::string Report(const std::string& name) {
    EXPECT_FALSE(run_->db.empty()) << run_->export_err;
    std::ostringstream out;
    stats::ReportOptions options;
    options.format = stats::Format::kCsv;
    gt::Status st = stats::RunReport(run_->db, name, options, out);
    EXPECT_TRUE(st.ok()) << st.message();
    return out.str();
  }
  static TempDir* dir_;
  static CudaRun* run_;
};
TempDir* CudaReports::dir_ = nullptr;
CudaRun* CudaReports::run_ = nullptr;

TEST_F(CudaReports, ApiSum) {
  EXPECT_EQ(Report("cuda_api_sum"),
            "Time (%),Total Time (ns),Num Calls,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n"
            "37.8,25000,5,5000.0,5000.0,5000,5000,0.0,cudaLaunchKernel\n"
            "18.1,12000,3,4000.0,4000.0,4000,4000,0.0,cudaMemcpyAsync\n"
            "9.1,6000,1,6000.0,6000.0,6000,6000,0.0,cudaGraphInstantiate_v12000\n"
            "6.0,4000,2,2000.0,2000.0,2000,2000,0.0,cudaStreamCreate\n"
            "4.5,3000,1,3000.0,3000.0,3000,3000,0.0,cudaMalloc\n"
            "4.5,3000,1,3000.0,3000.0,3000,3000,0.0,cudaMemcpyPeerAsync\n"
            "4.5,3000,1,3000.0,3000.0,3000,3000,0.0,cudaStreamSynchronize\n"
            "3.8,2500,1,2500.0,2500.0,2500,2500,0.0,cudaGraphLaunch_v10000\n"
            "3.0,2000,1,2000.0,2000.0,2000,2000,0.0,cudaEventSynchronize\n"
            "3.0,2000,1,2000.0,2000.0,2000,2000,0.0,cudaFree\n"
            "3.0,2000,1,2000.0,2000.0,2000,2000,0.0,cudaMemsetAsync\n"
            "1.5,1000,1,1000.0,1000.0,1000,1000,0.0,cudaEventRecord\n"
            "1.1,700,1,700.0,700.0,700,700,0.0,cuKernelGetName\n");
}

TEST_F(CudaReports, KernelAndMemorySummaries) {
  EXPECT_EQ(Report("cuda_gpu_kern_sum"),
            "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n"
            "42.1,4000,1,4000.0,4000.0,4000,4000,0.0,matmul_kernel\n"
            "31.6,3000,2,1500.0,1500.0,1500,1500,0.0,\"add_one(const float *, float *, int)\"\n"
            "26.3,2500,1,2500.0,2500.0,2500,2500,0.0,\"void at::native::vectorized_elementwise_kernel<(int)4, "
            "at::native::FillFunctor<float>, std::array<char *, (unsigned long)1>>(int, T2, "
            "T3)\"\n");
  EXPECT_EQ(Report("cuda_gpu_mem_time_sum"),
            "Time (%),Total Time (ns),Count,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Operation\n"
            "27.8,1000,1,1000.0,1000.0,1000,1000,0.0,[CUDA memcpy Peer-to-Peer]\n"
            "25.0,900,1,900.0,900.0,900,900,0.0,[CUDA memcpy Device-to-Host]\n"
            "22.2,800,1,800.0,800.0,800,800,0.0,[CUDA memcpy Host-to-Device]\n"
            "16.7,600,1,600.0,600.0,600,600,0.0,[CUDA memset]\n"
            "8.3,300,1,300.0,300.0,300,300,0.0,[CUDA memcpy Device-to-Device]\n");
  EXPECT_EQ(Report("cuda_gpu_mem_size_sum"),
            "Total (MB),Count,Avg (MB),Med (MB),Min (MB),Max (MB),StdDev (MB),Operation\n"
            "0.066,1,0.066,0.066,0.066,0.066,0.000,[CUDA memcpy Peer-to-Peer]\n"
            "0.008,1,0.008,0.008,0.008,0.008,0.000,[CUDA memcpy Device-to-Host]\n"
            "0.004,1,0.004,0.004,0.004,0.004,0.000,[CUDA memcpy Host-to-Device]\n"
            "0.002,1,0.002,0.002,0.002,0.002,0.000,[CUDA memcpy Device-to-Device]\n"
            "0.001,1,0.001,0.001,0.001,0.001,0.000,[CUDA memset]\n");
}

TEST_F(CudaReports, GpuTrace) {
  std::vector<std::string> lines = Lines(Report("cuda_gpu_trace"));
  ASSERT_EQ(lines.size(), 10u);
  EXPECT_EQ(lines[0],
            "Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),DymSMem (MB),Bytes (MB),"
            "Throughput (MB/s),SrcMemKd,DstMemKd,Device,Ctx,GreenCtx,Strm,Name");
  Rows rest, starts;
  for (size_t i = 1; i < lines.size(); ++i) {
    starts.push_back(lines[i].substr(0, lines[i].find(',')));
    rest.push_back(lines[i].substr(lines[i].find(',') + 1));
  }
  EXPECT_EQ(rest,
            (Rows{"800,4,,,,,,,,,,0.004,5120.000,Pageable,Device,Fake GPU 0 (0),1,,13,[CUDA memcpy Host-to-Device]",
                  "1500,5,4,1,1,256,1,1,16,0.000,0.000,,,,,Fake GPU 0 (0),1,,13,\"add_one(const float *, float *, int)\"",
                  "2500,6,4,1,1,256,1,1,16,0.000,0.000,,,,,Fake GPU 0 (0),1,,14,\"void "
                  "at::native::vectorized_elementwise_kernel<(int)4, at::native::FillFunctor<float>, std::array<char *, "
                  "(unsigned long)1>>(int, T2, T3)\"",
                  "1500,7,4,1,1,256,1,1,16,0.000,0.000,,,,,Fake GPU 0 (0),1,,14,\"add_one(const float *, float *, int)\"",
                  "600,8,,,,,,,,,,0.001,1706.667,Device,,Fake GPU 0 (0),1,,13,[CUDA memset]",
                  "900,9,,,,,,,,,,0.008,9102.222,Device,Pinned,Fake GPU 0 (0),1,,13,[CUDA memcpy Device-to-Host]",
                  "300,10,,,,,,,,,,0.002,6826.667,Device,Device,Fake GPU 0 (0),1,,14,[CUDA memcpy Device-to-Device]",
                  "1000,11,,,,,,,,,,0.066,65536.000,Device,Device,Fake GPU 0 (0),1,,13,[CUDA memcpy Peer-to-Peer]",
                  "4000,19,4,1,1,256,1,1,16,0.000,0.000,,,,,Fake GPU 0 (0),1,,14,matmul_kernel"}));
  Db db(run_->db);
  EXPECT_EQ(starts, db.Rows("SELECT start FROM (SELECT start FROM CUPTI_ACTIVITY_KIND_KERNEL UNION ALL SELECT start "
                            "FROM CUPTI_ACTIVITY_KIND_MEMCPY UNION ALL SELECT start FROM CUPTI_ACTIVITY_KIND_MEMSET) "
                            "ORDER BY start"));
}

TEST_F(CudaReports, ApiTrace) {
  std::vector<std::string> lines = Lines(Report("cuda_api_trace"));
  ASSERT_EQ(lines.size(), 21u);
  EXPECT_EQ(lines[0], "Start (ns),Duration (ns),Name,Result,CorrID,Pid,Tid,T-Pri,Thread Name");
  Db db(run_->db);
  std::string pid = std::to_string(db.Int("SELECT pid FROM PROCESSES").value_or(-1));
  Rows fixed, starts;
  for (size_t i = 1; i < lines.size(); ++i) {
    std::vector<std::string> f = Split(lines[i]);
    ASSERT_EQ(f.size(), 9u) << lines[i];
    starts.push_back(f[0]);
    EXPECT_EQ(f[5], pid);
    bool worker = f[8] == "cuda-worker";
    EXPECT_EQ(f[6] == pid, !worker) << lines[i];  // the main thread's tid is the pid
    fixed.push_back(f[1] + "," + f[2] + "," + f[3] + "," + f[4] + "," + f[7] + "," + f[8]);
  }
  EXPECT_EQ(fixed, (Rows{"2000,cudaStreamCreate,0,1,20,fake_cuda_main", "2000,cudaStreamCreate,0,2,20,fake_cuda_main",
                         "3000,cudaMalloc,0,3,20,fake_cuda_main", "4000,cudaMemcpyAsync,0,4,20,fake_cuda_main",
                         "5000,cudaLaunchKernel,0,5,20,fake_cuda_main", "5000,cudaLaunchKernel,0,6,20,fake_cuda_main",
                         "5000,cudaLaunchKernel,0,7,20,fake_cuda_main", "2000,cudaMemsetAsync,0,8,20,fake_cuda_main",
                         "4000,cudaMemcpyAsync,0,9,20,fake_cuda_main", "4000,cudaMemcpyAsync,0,10,20,fake_cuda_main",
                         "3000,cudaMemcpyPeerAsync,0,11,20,fake_cuda_main",
                         "1000,cudaEventRecord,0,12,20,fake_cuda_main",
                         "3000,cudaStreamSynchronize,0,13,20,fake_cuda_main",
                         "2000,cudaEventSynchronize,0,14,20,fake_cuda_main", "2000,cudaFree,0,15,20,fake_cuda_main",
                         "6000,cudaGraphInstantiate_v12000,0,16,20,fake_cuda_main",
                         "2500,cudaGraphLaunch_v10000,0,17,20,fake_cuda_main",
                         "700,cuKernelGetName,0,18,20,fake_cuda_main", "5000,cudaLaunchKernel,0,19,20,cuda-worker",
                         "5000,cudaLaunchKernel,0,20,20,fake_cuda_main"}));
  EXPECT_EQ(starts, db.Rows("SELECT start FROM CUPTI_ACTIVITY_KIND_RUNTIME ORDER BY start"));
}

// The NVTX range "step" launched 8 GPU operations (2 copies in, 3 kernels, 1 memset, 2 more copies).
TEST_F(CudaReports, NvtxGpuProjection) {
  std::vector<std::string> lines = Lines(Report("nvtx_gpu_proj_sum"));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0],
            "Range,Style,Total Proj Time (ns),Total Range Time (ns),Range Instances,Proj Avg (ns),Proj Med (ns),"
            "Proj Min (ns),Proj Max (ns),Proj StdDev (ns),Total GPU Ops,Avg GPU Ops,Avg Range Lvl,Avg Num Child");
  std::vector<std::string> f = Split(lines[1]);
  ASSERT_EQ(f.size(), 14u);
  EXPECT_EQ(f[0], ":step");
  EXPECT_EQ(f[1], "PushPop");
  EXPECT_EQ(f[4], "1");
  EXPECT_EQ(f[10], "8");
  EXPECT_EQ(f[11], "8.0");
  EXPECT_EQ(f[12], "0.0");
  EXPECT_EQ(f[13], "0.0");
  Db db(run_->db);
  auto projected = db.Int(
      "SELECT max(e) - min(s) FROM (SELECT start AS s, end AS e FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE correlationId "
      "BETWEEN 4 AND 11 UNION ALL SELECT start, end FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE correlationId BETWEEN 4 AND "
      "11 UNION ALL SELECT start, end FROM CUPTI_ACTIVITY_KIND_MEMSET)");
  ASSERT_TRUE(projected.has_value());
  EXPECT_EQ(f[2], std::to_string(*projected));
  EXPECT_EQ(f[6], std::to_string(*projected) + ".0");
  EXPECT_EQ(f[3], std::to_string(db.Int("SELECT end - start FROM NVTX_EVENTS WHERE text = 'step'").value_or(-1)));
}

}  // namespace
}  // namespace gt::test
