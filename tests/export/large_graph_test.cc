// CUDA graph-trace rows of a long stream, written through the spill database
// (tools/export/graph_trace_spill.h): every row exactly, in read order, with the executable-graph id
// of its launch whether the launch's record came before the activity, after it (chunks later), twice
// (the last wins) or never (0, counted in the warning); a device described nowhere gets its
// placeholder GPU; and a second stream whose correlation ids repeat the first's sees none of the
// first's launches.
#include <gtest/gtest.h>

#include <unistd.h>

#include <string>
#include <vector>

#include "tests/common/export_stream.h"
#include "tests/common/synthetic_stream.h"
#include "tests/common/test_util.h"
#include "tools/export/exporter.h"

namespace gt {
namespace {

constexpr uint32_t kPid = 5151;
constexpr uint64_t kMono0 = test::kStreamMono0Ns;
constexpr int kRows = 30000;         // graph-trace rows: two per launch (node-level tracing)
constexpr int kRowsPerChunk = 1000;  // 30 chunks
constexpr uint32_t kUnknownOrdinal = 3;

uint64_t RowStart(int i) {
  return kMono0 + 1000 + static_cast<uint64_t>(i) * 500;
}
uint64_t RowDuration(int i) {
  return 400 + static_cast<uint64_t>(i % 7);
}
bool UnknownDevice(int i) {
  return i % 1000 == 999;
}
// Launch k (correlation id k + 1): never recorded when k % 77 == 0; recorded three chunks after its
// activity when k % 50 == 0; recorded first with a wrong id and again in the next chunk when k % 91 == 0.
uint32_t ExecOf(int k) {
  return 100 + static_cast<uint32_t>(k % 17);
}
bool Missing(int k) {
  return k % 77 == 0;
}
bool Late(int k) {
  return !Missing(k) && k % 50 == 0;
}
bool Twice(int k) {
  return !Missing(k) && !Late(k) && k % 91 == 0;
}

// The first chunk of both processes: one device, one context.
void FirstChunk(test::SyntheticStream& s) {
  s.Device(test::DeviceSpec{});
  s.Context(test::ContextSpec{});
}

void WriteMainChunks(test::SyntheticStream& s) {
  const int chunks = kRows / kRowsPerChunk;
  for (int c = 0; c < chunks; ++c) {
    const int first = c * kRowsPerChunk;
    s.BeginChunk(2, kPid, RowStart(first));
    for (int i = first; i < first + kRowsPerChunk; ++i) {
      const int k = i / 2;
      if (i % 2 == 0 && !Missing(k) && !Late(k))
        s.GraphLaunch(RowStart(i), k + 1, Twice(k) ? 999 : ExecOf(k));
      test::GraphTraceSpec g;
      g.start_ns = RowStart(i);
      g.duration_ns = RowDuration(i);
      g.device_id = UnknownDevice(i) ? kUnknownOrdinal : 0;
      g.context_id = UnknownDevice(i) ? 9 : 1;
      g.correlation_id = static_cast<uint32_t>(k + 1);
      g.graph_id = 1 + static_cast<uint32_t>(k % 13);
      s.GraphTrace(g);
    }
    // Late launches of three chunks ago (or of every chunk not yet covered, in the last one), and
    // the second record of the previous chunk's double launches.
    for (int i = first - 3 * kRowsPerChunk; i < first + kRowsPerChunk; i += 2) {
      if (i < 0)
        continue;
      const int k = i / 2;
      const bool late_due = i < first - 2 * kRowsPerChunk || (c == chunks - 1 && i >= first - 2 * kRowsPerChunk);
      if (Late(k) && late_due)
        s.GraphLaunch(RowStart(first), k + 1, ExecOf(k));
      if (Twice(k) && i >= first - kRowsPerChunk && i < first)
        s.GraphLaunch(RowStart(first), k + 1, ExecOf(k));
    }
    if (c == chunks - 1) {  // the last chunk's double launches get their second record here too
      for (int i = first; i < first + kRowsPerChunk; i += 2) {
        if (Twice(i / 2))
          s.GraphLaunch(RowStart(first), i / 2 + 1, ExecOf(i / 2));
      }
    }
    s.EndChunk();
  }
}

// A second process: correlation ids 1..10 again, launches only for odd ones, exec 7; all in its
// first chunk, after FirstChunk's device and context.
void SecondFirstChunk(test::SyntheticStream& s) {
  FirstChunk(s);
  for (uint32_t c = 1; c <= 10; ++c) {
    if (c % 2 == 1)
      s.GraphLaunch(kMono0 + c * 100, c, 7);
    test::GraphTraceSpec g;
    g.start_ns = kMono0 + c * 100;
    g.duration_ns = 50;
    g.correlation_id = c;
    g.graph_id = 2;
    s.GraphTrace(g);
  }
}

TEST(LargeGraphTrace, EveryRowExactlyWithItsLaunchesExecId) {
  test::TempDir dir;
  const std::string main_stream = dir.File("graphs.gtrace"), second = dir.File("second.gtrace");
  const std::string output = dir.File("graphs.sqlite");
  test::WriteStream(main_stream, kPid, FirstChunk, WriteMainChunks);
  test::WriteStream(second, kPid + 1, SecondFirstChunk, [](test::SyntheticStream&) {});
  exporter::ExportResult result;
  const Status st = test::ExportStreams({main_stream, second}, output, &result);
  ASSERT_TRUE(st.ok()) << st.message();

  int missing_rows = 0;
  for (int i = 0; i < kRows; ++i)
    missing_rows += Missing(i / 2) ? 1 : 0;
  ASSERT_EQ(missing_rows, 390);  // k = 0, 77, ..., 14938: 195 launches of two rows
  const std::string warning = main_stream + ": " + std::to_string(missing_rows) +
                              " CUDA graph launches had no executable-graph id (launch callback record lost); "
                              "graphExecId 0";
  const std::string second_warning = second +
                                     ": 5 CUDA graph launches had no executable-graph id (launch callback "
                                     "record lost); graphExecId 0";
  int found = 0;
  for (const std::string& w : result.warnings)
    found += (w == warning ? 1 : 0) + (w == second_warning ? 10 : 0);
  EXPECT_EQ(found, 11);

  test::Db db(output);
  ASSERT_TRUE(db.ok());
  const int64_t gpid = exporter::PackGlobalTid(0, kPid, 0), gpid2 = exporter::PackGlobalTid(0, kPid + 1, 0);
  // The described device's column, and the placeholder of the undescribed ordinal.
  const auto described = db.Rows(
      "SELECT DISTINCT deviceId FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE WHERE contextId = 1 "
      "AND globalPid = " +
      std::to_string(gpid));
  ASSERT_EQ(described.size(), 1u);
  const auto described2 = db.Rows("SELECT DISTINCT deviceId FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE WHERE globalPid = " +
                                  std::to_string(gpid2));
  ASSERT_EQ(described2.size(), 1u);
  // The undescribed ordinal's rows get a placeholder GPU at the end of the export (cuda_target_info.h),
  // numbered after the described one.
  ASSERT_EQ(described[0], "0");
  const std::string placeholder = "1";
  std::vector<std::string> expected;
  for (int i = 0; i < kRows; ++i) {
    const int k = i / 2;
    const int64_t start = static_cast<int64_t>(RowStart(i) - kMono0);
    expected.push_back(std::to_string(start) + "|" + std::to_string(start + static_cast<int64_t>(RowDuration(i))) +
                       "|" + (UnknownDevice(i) ? placeholder : described[0]) + "|" + (UnknownDevice(i) ? "9" : "1") +
                       "|0|7|" + std::to_string(k + 1) + "|" + std::to_string(gpid) + "|" + std::to_string(1 + k % 13) +
                       "|" + std::to_string(Missing(k) ? 0 : ExecOf(k)));
  }
  // The second process's context 1 on the same GPU is renumbered apart (MakeContextsUniquePerGpu).
  for (uint32_t c = 1; c <= 10; ++c) {
    const int64_t start = c * 100;
    expected.push_back(std::to_string(start) + "|" + std::to_string(start + 50) + "|" + described2[0] +
                       "|1000001|0|1000007|" + std::to_string(c) + "|" + std::to_string(gpid2) + "|2|" +
                       (c % 2 == 1 ? "7" : "0"));
  }
  const std::vector<std::string> rows = db.Rows(
      "SELECT start, \"end\", deviceId, contextId, greenContextId, streamId, correlationId, globalPid, "
      "graphId, graphExecId FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE ORDER BY rowid");
  ASSERT_EQ(rows.size(), expected.size());
  int differ = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i] != expected[i] && ++differ <= 5)
      ADD_FAILURE() << "row " << i << ": " << rows[i] << " != " << expected[i];
  }
  EXPECT_EQ(differ, 0);
  // The spill database is gone with the export.
  EXPECT_NE(::access((output + ".tmp-" + std::to_string(::getpid()) + ".spill").c_str(), F_OK), 0);
}

}  // namespace
}  // namespace gt
