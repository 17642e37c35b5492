// Exact NVTX_EVENTS / ThreadNames / PROCESSES rows from a stream with chosen content.
#include <gtest/gtest.h>

#include "collector/schema_fields.h"
#include "tests/common/synthetic_stream.h"
#include "tests/common/test_util.h"
#include "tools/export/exporter.h"

namespace gt {
namespace {

using exporter::PackGlobalTid;
namespace k = field::enums;

constexpr uint64_t kMono0 = 1000000000;          // stream clock at session start
constexpr uint64_t kReal0 = 1700000000000000000;  // UTC at session start

test::NvtxSpec Ev(uint32_t kind, uint64_t rel_ns, std::string text = "", uint32_t depth = 0) {
  test::NvtxSpec e;
  e.kind = kind;
  e.ts_ns = kMono0 + rel_ns;
  e.text = std::move(text);
  e.depth = depth;
  return e;
}

std::string Export(const test::TempDir& dir, const std::vector<std::string>& inputs,
                   exporter::ExportResult* result) {
  exporter::ExportOptions o;
  o.inputs = inputs;
  o.output = dir.File("out.sqlite");
  Status st = exporter::ExportSqlite(o, result);
  EXPECT_TRUE(st.ok()) << st.message();
  return o.output;
}

TEST(NvtxRows, EveryEventTypeExactly) {
  test::TempDir dir;
  test::SyntheticStream s(4242, kMono0, kReal0);
  s.BeginChunk(0, 0, 0);
  s.Domain(1, "dom", kMono0 + 10, 4242);
  s.RegisteredString(1, 1, "reg-name");
  s.EndChunk();
  s.BeginChunk(1, 4242, kMono0 + 100);
  s.Thread(4242, "app-main");
  s.Nvtx(Ev(k::kNvtxPush, 100, "outer", 0));
  test::NvtxSpec inner = Ev(k::kNvtxPush, 150, "inner", 1);
  inner.category = 3;
  inner.color = 0xFF112233u;
  inner.payload_int64 = -7;
  s.Nvtx(inner);
  s.Nvtx(Ev(k::kNvtxPop, 250, "", 1));
  s.Nvtx(Ev(k::kNvtxPop, 400, "", 0));
  test::NvtxSpec mark = Ev(k::kNvtxMark, 410, "m");
  mark.payload_double = 2.5;
  s.Nvtx(mark);
  test::NvtxSpec se = Ev(k::kNvtxStart, 420, "se");
  se.range_id = 77;
  s.Nvtx(se);
  test::NvtxSpec name = Ev(k::kNvtxNameThread, 430, "nvtx-worker");
  name.named_tid = 4243;
  s.Nvtx(name);
  test::NvtxSpec cat = Ev(k::kNvtxNameCategory, 435, "Cat");
  cat.category = 3;
  s.Nvtx(cat);
  test::NvtxSpec reg = Ev(k::kNvtxPush, 440, "", 0);
  reg.domain_id = 1;
  reg.registered_string_id = 1;
  s.Nvtx(reg);
  test::NvtxSpec regpop = Ev(k::kNvtxPop, 460, "", 0);
  regpop.domain_id = 1;
  s.Nvtx(regpop);
  s.EndChunk();
  s.BeginChunk(2, 4243, kMono0 + 500);
  s.Thread(4243, "os-worker");
  test::NvtxSpec end = Ev(k::kNvtxEnd, 500);
  end.range_id = 77;
  s.Nvtx(end);
  s.Nvtx(Ev(k::kNvtxPop, 510, "", 0));         // no push: skipped, counted
  s.Nvtx(Ev(k::kNvtxPush, 520, "dangling", 0));  // never popped: exported without end
  s.EndChunk();
  s.Close();
  s.WriteTo(dir.File("a.gtrace"));

  exporter::ExportResult result;
  test::Db db(Export(dir, {dir.File("a.gtrace")}, &result));
  ASSERT_TRUE(db.ok());
  const int64_t main_tid = PackGlobalTid(0, 4242, 4242);
  const int64_t worker_tid = PackGlobalTid(0, 4242, 4243);
  EXPECT_EQ(main_tid, (int64_t{1} << 48) | (int64_t{4242} << 24) | 4242);
  std::vector<std::string> rows = db.Rows(
      "SELECT start, end, eventType, rangeId, category, color, text, globalTid, endGlobalTid, "
      "(SELECT value FROM StringIds WHERE id = textId), domainId, int64Value, doubleValue "
      "FROM NVTX_EVENTS ORDER BY start, eventType");
  std::string m = std::to_string(main_tid), w = std::to_string(worker_tid);
  std::vector<std::string> expected = {
      "10|NULL|75|NULL|NULL|NULL|dom|" + m + "|NULL|NULL|1|NULL|NULL",
      "100|400|59|NULL|NULL|NULL|outer|" + m + "|NULL|NULL|0|NULL|NULL",
      "150|250|59|NULL|3|4279312947|inner|" + m + "|NULL|NULL|0|-7|NULL",
      "410|NULL|34|NULL|NULL|NULL|m|" + m + "|NULL|NULL|0|NULL|2.5",
      "420|500|60|77|NULL|NULL|se|" + m + "|" + w + "|NULL|0|NULL|NULL",
      "430|NULL|39|NULL|NULL|NULL|nvtx-worker|" + w + "|NULL|NULL|0|NULL|NULL",
      "435|NULL|33|NULL|3|NULL|Cat|" + m + "|NULL|NULL|0|NULL|NULL",
      "440|460|59|NULL|NULL|NULL|NULL|" + m + "|NULL|reg-name|1|NULL|NULL",
      "520|NULL|59|NULL|NULL|NULL|dangling|" + w + "|NULL|NULL|0|NULL|NULL",
  };
  EXPECT_EQ(rows, expected);
  // Exactly one of text / textId on every range and mark.
  EXPECT_EQ(db.Int("SELECT count(*) FROM NVTX_EVENTS WHERE eventType IN (59,60,34) AND "
                   "(text IS NULL) = (textId IS NULL)"),
            0);
  // Threads: the NVTX name wins over the OS name; priority 20 + nice.
  EXPECT_EQ(db.Rows("SELECT s.value, t.priority, t.globalTid FROM ThreadNames t JOIN StringIds s ON s.id = t.nameId "
                    "ORDER BY t.globalTid"),
            (std::vector<std::string>{"app-main|20|" + m, "nvtx-worker|20|" + w}));
  EXPECT_EQ(db.Rows("SELECT globalPid, pid, name FROM PROCESSES"),
            (std::vector<std::string>{std::to_string(PackGlobalTid(0, 4242, 0)) + "|4242|/opt/synthetic/bin/app"}));
  EXPECT_EQ(db.Rows("SELECT duration, stopTime - startTime, startTime FROM ANALYSIS_DETAILS"),
            (std::vector<std::string>{"520|520|" + std::to_string(kMono0)}));
  EXPECT_EQ(db.Rows("SELECT utcEpochNs, systemClockNs, utcTime FROM TARGET_INFO_SESSION_START_TIME"),
            (std::vector<std::string>{std::to_string(kReal0) + "|" + std::to_string(kMono0) + "|2023-11-14T22:13:20"}));
  ASSERT_EQ(result.warnings.size(), 2u);
  EXPECT_NE(result.warnings[0].find("1 NVTX ranges were still open"), std::string::npos) << result.warnings[0];
  EXPECT_NE(result.warnings[1].find("1 NVTX range ends had no recorded beginning"), std::string::npos);
}

TEST(NvtxRows, DroppedPushDoesNotMisnestOthers) {
  // The push at level 1 was dropped: its pop must not close the outer range.
  test::TempDir dir;
  test::SyntheticStream s(7, kMono0, kReal0);
  s.BeginChunk(1, 7, kMono0);
  s.Nvtx(Ev(k::kNvtxPush, 0, "outer", 0));
  s.Nvtx(Ev(k::kNvtxPop, 20, "", 1));  // pop of the dropped level-1 push
  s.Nvtx(Ev(k::kNvtxPush, 30, "second", 1));
  s.Nvtx(Ev(k::kNvtxPop, 40, "", 1));
  s.Nvtx(Ev(k::kNvtxPop, 100, "", 0));
  s.Drops(k::kDropThreadBuffer, 7, 1, kMono0 + 50);
  s.EndChunk();
  s.Close();
  s.WriteTo(dir.File("d.gtrace"));
  exporter::ExportResult result;
  test::Db db(Export(dir, {dir.File("d.gtrace")}, &result));
  EXPECT_EQ(db.Rows("SELECT text, start, end FROM NVTX_EVENTS ORDER BY start"),
            (std::vector<std::string>{"outer|0|100", "second|30|40"}));
  EXPECT_EQ(db.Rows("SELECT timestamp, severity, text FROM DIAGNOSTIC_EVENT"),
            (std::vector<std::string>{"50|2|gtrace dropped 1 records (thread buffer full) on thread 7"}));
  EXPECT_EQ(result.dropped_records, 1u);
}

TEST(NvtxRows, TwoProcessesOneDatabase) {
  test::TempDir dir;
  // Same host and boot: one clock; the second process started 1 ms later (its pair says so).
  test::SyntheticStream a(100, kMono0, kReal0);
  test::SyntheticStream b(200, kMono0 + 1000000, kReal0 + 1000000 + 37);  // 37 ns pair jitter
  a.BeginChunk(1, 100, kMono0 + 5);
  a.Nvtx(Ev(k::kNvtxMark, 5, "a"));
  a.EndChunk();
  a.Close();
  b.BeginChunk(1, 200, kMono0 + 2000000);
  b.Nvtx(Ev(k::kNvtxMark, 2000000, "b"));
  b.EndChunk();
  b.Close();
  a.WriteTo(dir.File("a.gtrace"));
  b.WriteTo(dir.File("b.gtrace"));
  exporter::ExportResult result;
  test::Db db(Export(dir, {dir.File("b.gtrace"), dir.File("a.gtrace")}, &result));
  // One host: both map through the earliest stream's clock pair, so the 37 ns jitter of b's own
  // pair does not move its events.
  EXPECT_EQ(db.Rows("SELECT text, start, globalTid >> 24 & 16777215 FROM NVTX_EVENTS ORDER BY start"),
            (std::vector<std::string>{"a|5|100", "b|2000000|200"}));
  EXPECT_EQ(db.Int("SELECT count(*) FROM PROCESSES"), 2);
  EXPECT_EQ(result.streams, 2u);
}

TEST(TimeBase, HostsAndBoots) {
  schema::StreamHeader a, b, c;
  auto set = [](schema::StreamHeader* h, const char* host, const char* boot, uint64_t mono, uint64_t real) {
    h->set_host_name(host);
    h->set_boot_id(boot);
    h->mutable_start_clock()->set_stream_clock_ns(mono);
    h->mutable_start_clock()->set_realtime_ns(real);
  };
  set(&a, "n1", "x", 5000, 1000000);
  set(&b, "n1", "x", 9000, 1004100);  // same clock as a, pair 100 ns off
  set(&c, "n2", "y", 100, 999000);    // another node, starts first
  exporter::TimeBase tb = exporter::ComputeTimeBase({&a, &b, &c});
  EXPECT_EQ(tb.session_utc_ns, 999000);
  EXPECT_EQ(tb.host_index, (std::vector<uint32_t>{0, 0, 1}));
  // a: 5000 -> 1000000 - 999000 = 1000; b uses a's pair: 9000 -> 5000
  EXPECT_EQ(5000 + tb.offsets_ns[0], 1000);
  EXPECT_EQ(9000 + tb.offsets_ns[1], 5000);
  EXPECT_EQ(100 + tb.offsets_ns[2], 0);
  // systemClockNs: host 0's monotonic value at time zero.
  EXPECT_EQ(tb.system_clock_ns, 4000);
}

}  // namespace
}  // namespace gt
