// The exporter never loses or clobbers data: an existing output is refused without --force, a
// failed export leaves the old output and no temporary file, bad inputs are errors naming the
// file and offset, cut inputs export what they hold with a warning.
#include <gtest/gtest.h>

#include "collector/schema_fields.h"
#include "tests/common/synthetic_stream.h"
#include "tests/common/test_util.h"
#include "tools/export/exporter.h"

namespace gt {
namespace {

void WriteStream(const std::string& path, bool close = true, int chunks = 2) {
  test::SyntheticStream s(1, 100, 1700000000000000000ull);
  for (int c = 0; c < chunks; ++c) {
    s.BeginChunk(1, 1, 100);
    test::NvtxSpec e;
    e.kind = field::enums::kNvtxMark;
    e.ts_ns = 100 + c;
    e.text = "m" + std::to_string(c);
    s.Nvtx(e);
    s.EndChunk();
  }
  if (close) s.Close();
  s.WriteTo(path);
}

Status Export(const std::vector<std::string>& in, const std::string& out, bool force,
              exporter::ExportResult* r) {
  exporter::ExportOptions o;
  o.inputs = in;
  o.output = out;
  o.force = force;
  return exporter::ExportSqlite(o, r);
}

TEST(ExportSafety, ExistingOutputNeedsForce) {
  test::TempDir dir;
  WriteStream(dir.File("a.gtrace"));
  test::WriteFile(dir.File("out.sqlite"), "keep me");
  exporter::ExportResult r;
  Status st = Export({dir.File("a.gtrace")}, dir.File("out.sqlite"), false, &r);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message(), dir.File("out.sqlite") + " exists; use --force to overwrite it");
  EXPECT_EQ(test::ReadFile(dir.File("out.sqlite")), "keep me");
  ASSERT_TRUE(Export({dir.File("a.gtrace")}, dir.File("out.sqlite"), true, &r).ok());
  test::Db db(dir.File("out.sqlite"));
  EXPECT_EQ(db.Int("SELECT count(*) FROM NVTX_EVENTS"), 2);
}

// Issue 28 item 8: a damaged chunk costs that chunk only; --strict (options.strict) fails instead,
// keeping the old output.
TEST(ExportSafety, DamagedInputKeepsIntactChunksOrFailsWithStrict) {
  test::TempDir dir;
  WriteStream(dir.File("good.gtrace"));
  WriteStream(dir.File("bad.gtrace"));
  std::string bytes = test::ReadFile(dir.File("bad.gtrace"));
  bytes[bytes.size() - 12] ^= 0x40;  // inside the last (end-of-stream) chunk
  test::WriteFile(dir.File("bad.gtrace"), bytes);
  test::WriteFile(dir.File("out.sqlite"), "old");
  exporter::ExportOptions o;
  o.inputs = {dir.File("good.gtrace"), dir.File("bad.gtrace")};
  o.output = dir.File("out.sqlite");
  o.force = true;
  o.strict = true;
  exporter::ExportResult r;
  Status st = exporter::ExportSqlite(o, &r);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message().rfind(dir.File("bad.gtrace") + ": damaged at offset ", 0), 0u) << st.message();
  EXPECT_NE(st.message().find("--strict"), std::string::npos);
  EXPECT_EQ(test::ReadFile(dir.File("out.sqlite")), "old");
  EXPECT_EQ(dir.Find(".sqlite").size(), 1u);  // no temporary left behind
  EXPECT_TRUE(dir.Find(std::string(".tmp-") + std::to_string(getpid())).empty());

  o.strict = false;
  exporter::ExportResult r2;
  ASSERT_TRUE(exporter::ExportSqlite(o, &r2).ok());
  EXPECT_EQ(r2.damaged_spans, 1u);
  test::Db db(dir.File("out.sqlite"));
  EXPECT_EQ(db.Int("SELECT count(*) FROM NVTX_EVENTS"), 4);
  EXPECT_EQ(db.Int("SELECT count(*) FROM DIAGNOSTIC_EVENT WHERE severity = 3 AND text LIKE '%bad.gtrace: damaged at "
                   "offset %checksum mismatch%bytes skipped%'"),
            1);
  size_t damage_warnings = 0;
  for (const std::string& w : r2.warnings) damage_warnings += w.find("bad.gtrace: damaged at offset") != std::string::npos;
  EXPECT_EQ(damage_warnings, 1u);
}

TEST(ExportSafety, BadInputsAreClearErrors) {
  test::TempDir dir;
  exporter::ExportResult r;
  Status st = Export({dir.File("nope.gtrace")}, dir.File("o.sqlite"), false, &r);
  EXPECT_EQ(st.message(), dir.File("nope.gtrace") + ": cannot open: No such file or directory");
  test::WriteFile(dir.File("x.gtrace"), "definitely not a stream");
  st = Export({dir.File("x.gtrace")}, dir.File("o.sqlite"), false, &r);
  EXPECT_EQ(st.message(), dir.File("x.gtrace") + ": offset 0: not a gtrace stream (wrong magic)");
  WriteStream(dir.File("a.gtrace"));
  st = Export({dir.File("a.gtrace"), dir.File("a.gtrace")}, dir.File("o.sqlite"), false, &r);
  EXPECT_EQ(st.message(), dir.File("a.gtrace") + " is given twice");
  st = Export({}, dir.File("o.sqlite"), false, &r);
  EXPECT_EQ(st.message(), "no input streams given");
  st = Export({dir.File("a.gtrace")}, "/dev/null/dir/o.sqlite", false, &r);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("/dev/null/dir/o.sqlite"), std::string::npos) << st.message();
  EXPECT_TRUE(dir.Find(".sqlite").empty());
}

TEST(ExportSafety, CutInputExportsWhatItHoldsWithAWarning) {
  test::TempDir dir;
  WriteStream(dir.File("full.gtrace"), /*close=*/false, 3);
  std::string bytes = test::ReadFile(dir.File("full.gtrace"));
  test::WriteFile(dir.File("cut.gtrace"), bytes.substr(0, bytes.size() - 5));  // inside the 3rd chunk
  exporter::ExportResult r;
  ASSERT_TRUE(Export({dir.File("cut.gtrace")}, dir.File("o.sqlite"), false, &r).ok());
  test::Db db(dir.File("o.sqlite"));
  EXPECT_EQ(db.Rows("SELECT text FROM NVTX_EVENTS ORDER BY start"), (std::vector<std::string>{"m0", "m1"}));
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("stream is cut off at offset"), std::string::npos) << r.warnings[0];
  EXPECT_NE(r.warnings[0].find("the last "), std::string::npos);
  EXPECT_EQ(db.Int("SELECT count(*) FROM DIAGNOSTIC_EVENT WHERE text LIKE '%cut off%'"), 1);
  // No end marker at all (killed between two flushes): a different, equally clear warning.
  exporter::ExportResult r2;
  ASSERT_TRUE(Export({dir.File("full.gtrace")}, dir.File("o2.sqlite"), false, &r2).ok());
  ASSERT_EQ(r2.warnings.size(), 1u);
  EXPECT_NE(r2.warnings[0].find("no end marker"), std::string::npos);
}

}  // namespace
}  // namespace gt
