// Inputs that once crashed or hung a fuzz target (tests/fuzz/regressions/*), replayed through the
// same code on every CI run: reading must end in a clean result or a clean error.
#include <dirent.h>
#include <gtest/gtest.h>

#include "tests/common/test_util.h"
#include "tools/export/exporter.h"
#include "tools/stream/stream_reader.h"

namespace gt {
namespace {

TEST(FuzzRegressions, ReplayEveryCase) {
  std::string dir = test::SourceDir() + "/tests/fuzz/regressions";
  DIR* d = opendir(dir.c_str());
  ASSERT_NE(d, nullptr);
  int cases = 0;
  test::TempDir tmp;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.' || std::string(e->d_name) == "README.md") continue;
    ++cases;
    std::string path = dir + "/" + e->d_name;
    stream::StreamReader r;
    if (r.Open(path).ok()) {
      schema::Chunk c;
      bool has = true;
      while (has && r.Next(&c, &has).ok()) {
      }
    }
    exporter::ExportOptions o;
    o.inputs = {path};
    o.output = tmp.File(std::string(e->d_name) + ".sqlite");
    exporter::ExportResult result;
    exporter::ExportSqlite(o, &result);  // error or success, never a crash
  }
  closedir(d);
  RecordProperty("cases", cases);
}

}  // namespace
}  // namespace gt
