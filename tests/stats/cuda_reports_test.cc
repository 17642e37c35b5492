// cuda_api_sum, cuda_api_trace, cuda_gpu_kern_sum, cuda_gpu_mem_time_sum, cuda_gpu_mem_size_sum and
// cuda_gpu_trace on small hand-built databases: every column of every row.
#include <gtest/gtest.h>

#include "tests/stats/nsys_test_db.h"

namespace gt::stats::testing {
namespace {

constexpr int64_t kPid = 4242;
constexpr int64_t kMain = GlobalTid(kPid, 4242);
constexpr int64_t kWorker = GlobalTid(kPid, 4250);

TEST(CudaApiSum, GroupsByNameWithoutFourDigitVersionSuffix) {
  TestDb db("api_sum");
  db.Create({"CUPTI_ACTIVITY_KIND_RUNTIME"});
  db.AddRuntime(0, 10, kMain, 1, "cudaLaunchKernel_v7000");
  db.AddRuntime(100, 120, kMain, 2, "cudaLaunchKernel_v7000");
  db.AddRuntime(200, 240, kWorker, 3, "cudaLaunchKernel_v7000");
  db.AddRuntime(300, 400, kMain, 4, "cudaMalloc_v3020");
  db.AddRuntime(500, 530, kMain, 5, "cudaGraphLaunch_v10000");
  db.AddRuntime(600, 605, kMain, 6, "cuKernelGetName", 0, 1);
  db.AddRuntime(700, 705, kMain, 7, "cuKernelGetName", 0, 1);
  EXPECT_EQ(RunOk(db.path(), "cuda_api_sum"),
            "Time (%),Total Time (ns),Num Calls,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n"
            "47.6,100,1,100.0,100.0,100,100,0.0,cudaMalloc\n"
            "33.3,70,3,23.3,20.0,10,40,15.3,cudaLaunchKernel\n"
            "14.3,30,1,30.0,30.0,30,30,0.0,cudaGraphLaunch_v10000\n"
            "4.8,10,2,5.0,5.0,5,5,0.0,cuKernelGetName\n");
}

TEST(CudaApiTrace, ListsEveryCallInStartOrderWithThreadNames) {
  TestDb db("api_trace");
  db.Create({"CUPTI_ACTIVITY_KIND_RUNTIME", "ThreadNames"});
  db.AddThreadName(kMain, "python", 20);
  // Renamed: the last row wins and the thread's calls are not listed twice.
  db.AddThreadName(kWorker, "old name", 10);
  db.AddThreadName(kWorker, "loader, \"io\"", 15);
  db.AddRuntime(300, 400, kMain, 12, "cudaMalloc_v3020", 2);
  db.AddRuntime(100, 110, kWorker, 11, "cudaLaunchKernel_v7000");
  db.AddRuntime(500, 530, GlobalTid(kPid, 4300), 13, "cuLibraryLoadData", 0, 1);  // thread never named
  EXPECT_EQ(RunOk(db.path(), "cuda_api_trace"),
            "Start (ns),Duration (ns),Name,Result,CorrID,Pid,Tid,T-Pri,Thread Name\n"
            "100,10,cudaLaunchKernel,0,11,4242,4250,15,\"loader, \"\"io\"\"\"\n"
            "300,100,cudaMalloc,2,12,4242,4242,20,python\n"
            "500,30,cuLibraryLoadData,0,13,4242,4300,,\n");
}

TEST(CudaGpuKernSum, UsesDemangledNames) {
  TestDb db("kern_sum");
  db.Create({"CUPTI_ACTIVITY_KIND_KERNEL"});
  const int64_t p = GlobalPid(kPid);
  db.AddKernel({.start = 0,
                .end = 10,
                .correlation_id = 1,
                .global_pid = p,
                .demangled_name = "void scale<float>(float *, int)",
                .short_name = "scale"});
  db.AddKernel({.start = 20,
                .end = 40,
                .correlation_id = 2,
                .global_pid = p,
                .demangled_name = "void scale<float>(float *, int)",
                .short_name = "scale"});
  db.AddKernel({.start = 50,
                .end = 80,
                .correlation_id = 3,
                .global_pid = p,
                .demangled_name = "void scale<float>(float *, int)",
                .short_name = "scale"});
  db.AddKernel({.start = 90,
                .end = 190,
                .correlation_id = 4,
                .global_pid = p,
                .demangled_name = "void scale<double>(double *, int)",
                .short_name = "scale"});
  EXPECT_EQ(RunOk(db.path(), "cuda_gpu_kern_sum"),
            "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n"
            "62.5,100,1,100.0,100.0,100,100,0.0,\"void scale<double>(double *, int)\"\n"
            "37.5,60,3,20.0,20.0,10,30,10.0,\"void scale<float>(float *, int)\"\n");
}

// Two host-to-device copies, one device-to-host copy, two memsets.
void AddMemoryOps(TestDb* db) {
  const int64_t p = GlobalPid(kPid);
  db->AddMemcpy({.start = 0, .end = 100, .correlation_id = 1, .global_pid = p, .bytes = 4194304, .copy_kind = 1});
  db->AddMemcpy({.start = 200, .end = 500, .correlation_id = 2, .global_pid = p, .bytes = 1000000, .copy_kind = 1});
  db->AddMemcpy({.start = 600,
                 .end = 650,
                 .correlation_id = 3,
                 .global_pid = p,
                 .bytes = 4,
                 .copy_kind = 2,
                 .src_kind = 2,
                 .dst_kind = 1});
  db->AddMemset({.start = 700, .end = 720, .correlation_id = 4, .global_pid = p, .bytes = 1500000});
  db->AddMemset({.start = 800, .end = 830, .correlation_id = 5, .global_pid = p, .bytes = 500});
}

TEST(CudaGpuMemTimeSum, SummarisesCopiesByKindAndMemsets) {
  TestDb db("mem_time");
  db.Create({"CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"});
  db.CreateEnums();
  AddMemoryOps(&db);
  EXPECT_EQ(RunOk(db.path(), "cuda_gpu_mem_time_sum"),
            "Time (%),Total Time (ns),Count,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Operation\n"
            "80.0,400,2,200.0,200.0,100,300,141.4,[CUDA memcpy Host-to-Device]\n"
            "10.0,50,1,50.0,50.0,50,50,0.0,[CUDA memcpy Device-to-Host]\n"
            "10.0,50,2,25.0,25.0,20,30,7.1,[CUDA memset]\n");
}

TEST(CudaGpuMemSizeSum, SummarisesBytesInDecimalMegabytes) {
  TestDb db("mem_size");
  db.Create({"CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"});
  db.CreateEnums();
  AddMemoryOps(&db);
  EXPECT_EQ(RunOk(db.path(), "cuda_gpu_mem_size_sum"),
            "Total (MB),Count,Avg (MB),Med (MB),Min (MB),Max (MB),StdDev (MB),Operation\n"
            "5.194,2,2.597,2.597,1.000,4.194,2.259,[CUDA memcpy Host-to-Device]\n"
            "1.501,2,0.750,0.750,0.001,1.500,1.060,[CUDA memset]\n"
            "0.000,1,0.000,0.000,0.000,0.000,0.000,[CUDA memcpy Device-to-Host]\n");
}

TEST(CudaGpuMemTimeSum, MissingMemsetTableIsNoMemsets) {
  TestDb db("mem_no_memset");
  db.Create({"CUPTI_ACTIVITY_KIND_MEMCPY"});
  db.CreateEnums();
  db.AddMemcpy({.start = 0,
                .end = 30,
                .correlation_id = 1,
                .global_pid = GlobalPid(kPid),
                .bytes = 10,
                .copy_kind = 8,
                .src_kind = 2,
                .dst_kind = 2});
  EXPECT_EQ(RunOk(db.path(), "cuda_gpu_mem_time_sum"),
            "Time (%),Total Time (ns),Count,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Operation\n"
            "100.0,30,1,30.0,30.0,30,30,0.0,[CUDA memcpy Device-to-Device]\n");
}

TEST(CudaGpuTrace, MergesKernelsCopiesAndMemsetsInStartOrder) {
  TestDb db("gpu_trace");
  db.Create({"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
             "TARGET_INFO_GPU", "TARGET_INFO_CUDA_DEVICE"});
  db.CreateEnums();
  db.AddGpu(0, "NVIDIA H100");
  db.AddGpu(3, "NVIDIA A100");
  // In this process CUDA device 1 is GPU 3 (CUDA_VISIBLE_DEVICES reordering).
  db.Exec("INSERT INTO TARGET_INFO_CUDA_DEVICE (gpuId, cudaId, pid) VALUES (0, 0, 4242), (3, 1, 4242)");
  const int64_t p = GlobalPid(kPid);
  KernelRow kernel{.start = 1000,
                   .end = 1100,
                   .correlation_id = 10,
                   .global_pid = p,
                   .demangled_name = "void k<int>(int *, float)",
                   .short_name = "k"};
  kernel.grid[0] = 4;
  kernel.grid[1] = 2;
  kernel.block[0] = 256;
  kernel.registers_per_thread = 32;
  kernel.static_shared_bytes = 4096;
  kernel.dynamic_shared_bytes = 1500000;
  db.AddKernel(kernel);
  db.AddKernel({.start = 2000,
                .end = 2050,
                .device_id = 1,
                .green_context_id = 5,
                .stream_id = 9,
                .correlation_id = 13,
                .global_pid = p,
                .demangled_name = "k2"});
  db.AddMemcpy({.start = 900,
                .end = 900 + 661398,
                .stream_id = 13,
                .correlation_id = 11,
                .global_pid = p,
                .bytes = 4194304,
                .copy_kind = 1,
                .src_kind = 1,
                .dst_kind = 2});
  db.AddMemset({.start = 1000, .end = 1010, .correlation_id = 12, .global_pid = p, .bytes = 1024});
  EXPECT_EQ(RunOk(db.path(), "cuda_gpu_trace"),
            "Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),DymSMem (MB),"
            "Bytes (MB),Throughput (MB/s),SrcMemKd,DstMemKd,Device,Ctx,GreenCtx,Strm,Name\n"
            "900,661398,11,,,,,,,,,,4.194,6341.573,Pinned,Device,NVIDIA H100 (0),1,,13,[CUDA memcpy Host-to-Device]\n"
            "1000,100,10,4,2,1,256,1,1,32,0.004,1.500,,,,,NVIDIA H100 (0),1,,7,\"void k<int>(int *, float)\"\n"
            "1000,10,12,,,,,,,,,,0.001,102400.000,Device,,NVIDIA H100 (0),1,,7,[CUDA memset]\n"
            "2000,50,13,1,1,1,1,1,1,16,0.000,0.000,,,,,NVIDIA A100 (1),1,5,9,k2\n");
}

TEST(CudaGpuTrace, JsonRowsUseNumbersAndNulls) {
  TestDb db("gpu_trace_json");
  db.Create({"CUPTI_ACTIVITY_KIND_MEMSET", "TARGET_INFO_GPU"});
  db.CreateEnums();
  db.AddGpu(0, "GPU \"zero\"");
  db.AddMemset({.start = 5, .end = 15, .correlation_id = 3, .global_pid = GlobalPid(kPid), .bytes = 2000000});
  EXPECT_EQ(
      RunOk(db.path(), "cuda_gpu_trace", "json"),
      "[\n  {\"Start (ns)\": 5, \"Duration (ns)\": 10, \"CorrId\": 3, \"GrdX\": null, \"GrdY\": null,"
      " \"GrdZ\": null, \"BlkX\": null, \"BlkY\": null, \"BlkZ\": null, \"Reg/Trd\": null,"
      " \"StcSMem (MB)\": null, \"DymSMem (MB)\": null, \"Bytes (MB)\": 2.000, \"Throughput (MB/s)\": 200000000.000,"
      " \"SrcMemKd\": \"Device\", \"DstMemKd\": null, \"Device\": \"GPU \\\"zero\\\" (0)\", \"Ctx\": 1,"
      " \"GreenCtx\": null, \"Strm\": 7, \"Name\": \"[CUDA memset]\"}\n]\n");
}

}  // namespace
}  // namespace gt::stats::testing
