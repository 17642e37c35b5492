// StreamWriter: exclusive creation (never overwrites: a taken name gets .<pid>, then .<pid>.<n>),
// appends, and clean errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include "collector/stream_writer.h"
#include "tests/common/test_util.h"

namespace gt {
namespace {

TEST(StreamWriter, NeverOverwritesAndPicksAFreeName) {
  test::TempDir dir;
  test::WriteFile(dir.File("r.gtrace"), "precious");
  StreamWriter w;
  ASSERT_TRUE(w.Open(dir.File("r"), 77).ok());
  EXPECT_TRUE(w.renamed());
  EXPECT_EQ(w.path(), dir.File("r.77.gtrace"));
  ASSERT_TRUE(w.Append("abc").ok());
  ASSERT_TRUE(w.Append("def").ok());
  EXPECT_EQ(w.bytes_written(), 6u);
  w.Close();
  EXPECT_EQ(test::ReadFile(dir.File("r.gtrace")), "precious");
  EXPECT_EQ(test::ReadFile(dir.File("r.77.gtrace")), "abcdef");
  StreamWriter w2;
  ASSERT_TRUE(w2.Open(dir.File("r.gtrace"), 77).ok());  // extension given: not doubled
  EXPECT_EQ(w2.path(), dir.File("r.77.2.gtrace"));
  StreamWriter fresh;
  ASSERT_TRUE(fresh.Open(dir.File("new"), 1).ok());
  EXPECT_FALSE(fresh.renamed());
  EXPECT_EQ(fresh.path(), dir.File("new.gtrace"));
}

TEST(StreamWriter, ErrorsNameThePath) {
  StreamWriter w;
  Status st = w.Open("/dev/null/not-a-dir/x", 1);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("/dev/null/not-a-dir/x.gtrace"), std::string::npos) << st.message();
  EXPECT_FALSE(w.Append("x").ok());
}

TEST(StreamWriter, WithStreamExtension) {
  EXPECT_EQ(WithStreamExtension("a"), "a.gtrace");
  EXPECT_EQ(WithStreamExtension("a.gtrace"), "a.gtrace");
  EXPECT_EQ(WithStreamExtension("dir.gtrace/a"), "dir.gtrace/a.gtrace");
}

}  // namespace
}  // namespace gt
