// Device rows with every GPU row (issue 15): a stream with kernels but no CUPTI device or context
// record (the record lost, or the stream cut before CUPTI's first buffer) still exports
// TARGET_INFO_GPU, TARGET_INFO_CUDA_DEVICE and TARGET_INFO_CUDA_CONTEXT_INFO rows for them — a
// placeholder GPU named as such — so that readers joining KERNEL to them find a row; a stream with
// its device record gets that record's GPU; two processes sharing one GPU keep distinct context and
// stream ids on it (synthetic streams, tests/common/synthetic_stream.h).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/common/synthetic_stream.h"
#include "tests/common/test_util.h"
#include "tools/export/db_merge.h"
#include "tools/export/exporter.h"

namespace gt {
namespace {

using Rows = std::vector<std::string>;

std::string Export(const test::TempDir& dir, bool with_device, std::vector<std::string>* warnings) {
  test::SyntheticStream s(4242, 1000, 1700000000000000000ull);
  s.BeginChunk(0, 0, 0);
  if (with_device) {
    test::DeviceSpec d;
    d.device_id = 1;
    d.uuid = std::string("0123456789abcdef");
    s.Device(d);
    test::ContextSpec c;
    c.context_id = 3;
    c.device_id = 1;
    s.Context(c);
  }
  for (uint32_t i = 0; i < 3; ++i) {
    test::KernelSpec k;
    k.start_ns = 2000 + i * 1000;
    k.duration_ns = 500;
    k.device_id = 1;
    k.context_id = 3;
    k.stream_id = 7;
    k.correlation_id = i + 1;
    k.name = "_Z4stepv";
    s.Kernel(k);
  }
  s.EndChunk();
  s.Close();
  std::string name = with_device ? "with" : "without";
  s.WriteTo(dir.File(name + ".gtrace"));
  exporter::ExportOptions o;
  o.inputs = {dir.File(name + ".gtrace")};
  o.output = dir.File(name + ".sqlite");
  exporter::ExportResult r;
  Status st = exporter::ExportSqlite(o, &r);
  EXPECT_TRUE(st.ok()) << st.message();
  *warnings = r.warnings;
  return o.output;
}

TEST(DeviceRows, PlaceholderGpuForKernelsWithoutADeviceRecord) {
  test::TempDir dir;
  std::vector<std::string> warnings;
  test::Db db(Export(dir, false, &warnings));
  EXPECT_EQ(db.Rows("SELECT id, name, cuDevice, uuid FROM TARGET_INFO_GPU"),
            (Rows{"0|Unknown GPU (no CUPTI device record)|1|ffffffff-0000-0000-9210-000001000000"}));
  EXPECT_EQ(db.Rows("SELECT gpuId, cudaId, pid FROM TARGET_INFO_CUDA_DEVICE"), (Rows{"0|0|4242"}));
  EXPECT_EQ(db.Rows("SELECT processId, deviceId, contextId, nullStreamId FROM TARGET_INFO_CUDA_CONTEXT_INFO"),
            (Rows{"4242|0|3|0"}));
  EXPECT_EQ(db.Rows("SELECT pid, cudaId, deviceId FROM GTRACE_DEVICES"), (Rows{"4242|1|0"}));
  EXPECT_EQ(db.Rows("SELECT DISTINCT deviceId FROM CUPTI_ACTIVITY_KIND_KERNEL"), (Rows{"0"}));
  // No made-up NULL stream for the placeholder context.
  EXPECT_EQ(db.Int("SELECT count(*) FROM sqlite_master WHERE name = 'TARGET_INFO_CUDA_STREAM'"), 0);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("process 4242 has GPU rows but no CUPTI device record"), std::string::npos);
}

TEST(DeviceRows, RecordedDeviceIsUsed) {
  test::TempDir dir;
  std::vector<std::string> warnings;
  test::Db db(Export(dir, true, &warnings));
  EXPECT_EQ(db.Rows("SELECT id, name, cuDevice, smCount FROM TARGET_INFO_GPU"),
            (Rows{"0|NVIDIA H100 80GB HBM3|1|132"}));
  EXPECT_EQ(db.Rows("SELECT processId, deviceId, contextId, nullStreamId FROM TARGET_INFO_CUDA_CONTEXT_INFO"),
            (Rows{"4242|0|3|7"}));
  EXPECT_EQ(db.Rows("SELECT pid, cudaId, deviceId FROM GTRACE_DEVICES"), (Rows{"4242|1|0"}));
  EXPECT_EQ(db.Rows("SELECT DISTINCT deviceId FROM CUPTI_ACTIVITY_KIND_KERNEL"), (Rows{"0"}));
  EXPECT_EQ(warnings, std::vector<std::string>{});
}

// Two processes on one GPU (same host, same UUID), each with CUPTI's usual ids: context 1, NULL
// stream 7, a stream 13. In one database the second process's ids on that GPU move by 1000000.
std::string SharedGpuStream(const test::TempDir& dir, uint32_t pid) {
  test::SyntheticStream s(pid, 1000, 1700000000000000000ull);
  s.BeginChunk(0, 0, 0);
  test::DeviceSpec d;
  d.uuid = std::string("shared-gpu-uuid!");
  s.Device(d);
  s.Context(test::ContextSpec{});
  test::StreamSpec st;
  st.stream_id = 13;
  s.Stream(st);
  for (uint32_t i = 0; i < 2; ++i) {
    test::KernelSpec k;
    k.start_ns = 2000 + i * 1000;
    k.duration_ns = 500;
    k.stream_id = i == 0 ? 7 : 13;
    k.correlation_id = i + 1;
    k.name = "_Z4stepv";
    s.Kernel(k);
  }
  s.EndChunk();
  s.Close();
  std::string path = dir.File("p" + std::to_string(pid) + ".gtrace");
  s.WriteTo(path);
  return path;
}

void ExpectDistinctIdsPerGpu(test::Db& db) {
  EXPECT_EQ(db.Rows("SELECT pid, cudaId, deviceId FROM GTRACE_DEVICES ORDER BY pid"), (Rows{"100|0|0", "200|0|0"}));
  EXPECT_EQ(db.Rows("SELECT processId, deviceId, contextId, nullStreamId FROM TARGET_INFO_CUDA_CONTEXT_INFO ORDER BY "
                    "processId"),
            (Rows{"100|0|1|7", "200|0|1000001|1000007"}));
  EXPECT_EQ(db.Rows("SELECT processId, contextId, streamId, flag FROM TARGET_INFO_CUDA_STREAM ORDER BY processId, "
                    "streamId"),
            (Rows{"100|1|7|3", "100|1|13|2", "200|1000001|1000007|3", "200|1000001|1000013|2"}));
  EXPECT_EQ(
      db.Rows("SELECT (globalPid >> 24) & 16777215, deviceId, contextId, streamId FROM CUPTI_ACTIVITY_KIND_KERNEL "
              "ORDER BY 1, streamId"),
      (Rows{"100|0|1|7", "100|0|1|13", "200|0|1000001|1000007", "200|0|1000001|1000013"}));
}

TEST(DeviceRows, ProcessesSharingAGpuKeepDistinctContextAndStreamIds) {
  test::TempDir dir;
  std::vector<std::string> inputs = {SharedGpuStream(dir, 100), SharedGpuStream(dir, 200)};
  exporter::ExportOptions o;
  o.inputs = inputs;
  o.output = dir.File("both.sqlite");
  exporter::ExportResult r;
  Status st = exporter::ExportSqlite(o, &r);
  ASSERT_TRUE(st.ok()) << st.message();
  test::Db db(o.output);
  ExpectDistinctIdsPerGpu(db);
  // The same from two databases exported apart and merged.
  std::vector<std::string> parts;
  for (const std::string& in : inputs) {
    exporter::ExportOptions one;
    one.inputs = {in};
    one.output = in + ".sqlite";
    ASSERT_TRUE(exporter::ExportSqlite(one, &r).ok());
    parts.push_back(one.output);
  }
  exporter::MergeOptions mo;
  mo.inputs = parts;
  mo.output = dir.File("merged.sqlite");
  exporter::MergeResult mr;
  st = exporter::MergeDatabases(mo, &mr);
  ASSERT_TRUE(st.ok()) << st.message();
  test::Db merged(mo.output);
  ExpectDistinctIdsPerGpu(merged);
}

}  // namespace
}  // namespace gt
