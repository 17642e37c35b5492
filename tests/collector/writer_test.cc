// StreamWriter: exclusive creation (never overwrites: a taken name gets .<pid>, then .<pid>.<n>),
// appends, and clean errors.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
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

// Issue 28, items 1 and 7: the descriptor sits high, and one the application took over (dup2'ed its
// own file over it, or closed it) is neither written nor closed: the stream is reopened by path.
TEST(StreamWriter, DescriptorTakenByTheApplicationIsNeitherWrittenNorClosed) {
  test::TempDir dir;
  StreamWriter w;
  ASSERT_TRUE(w.Open(dir.File("s"), 1).ok());
  EXPECT_GE(w.fd(), 100);  // above what open() hands an application first
  ASSERT_TRUE(w.Append("abc").ok());
  int app = ::open(dir.File("app.log").c_str(), O_WRONLY | O_CREAT, 0644);
  ASSERT_GE(app, 0);
  int taken = w.fd();
  ASSERT_EQ(::dup2(app, taken), taken);
  ASSERT_TRUE(w.Append("def").ok());
  EXPECT_EQ(w.reopened(), 1u);
  EXPECT_NE(w.fd(), taken);
  ASSERT_EQ(::close(taken), 0);  // the application's copy of its log: gtrace never closed it
  ASSERT_TRUE(w.Append("ghi").ok());
  EXPECT_EQ(w.reopened(), 1u);
  w.Close();
  EXPECT_EQ(test::ReadFile(dir.File("s.gtrace")), "abcdefghi");
  EXPECT_EQ(test::ReadFile(dir.File("app.log")), "");
  ::close(app);
}

TEST(StreamWriter, DeletedFileIsWrittenAgainWithEverything) {
  test::TempDir dir;
  StreamWriter w;
  ASSERT_TRUE(w.Open(dir.File("s"), 1).ok());
  ASSERT_TRUE(w.Append("abc").ok());
  ASSERT_EQ(::unlink(dir.File("s.gtrace").c_str()), 0);
  ASSERT_TRUE(w.Append("def").ok());
  EXPECT_EQ(w.recreated(), 1u);
  w.Close();
  EXPECT_EQ(test::ReadFile(dir.File("s.gtrace")), "abcdef");
}

TEST(StreamWriter, DeletedDirectoryIsAnErrorThatNamesThePath) {
  test::TempDir dir;
  std::string sub = dir.File("sub");
  ASSERT_EQ(::mkdir(sub.c_str(), 0755), 0);
  StreamWriter w;
  ASSERT_TRUE(w.Open(sub + "/s", 1).ok());
  ASSERT_TRUE(w.Append("abc").ok());
  ASSERT_EQ(::unlink((sub + "/s.gtrace").c_str()), 0);
  ASSERT_EQ(::rmdir(sub.c_str()), 0);
  Status st = w.Append("def");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message(), sub + "/s.gtrace was deleted while the process ran and cannot be created again: "
                                "No such file or directory");
}

TEST(StreamWriter, WithStreamExtension) {
  EXPECT_EQ(WithStreamExtension("a"), "a.gtrace");
  EXPECT_EQ(WithStreamExtension("a.gtrace"), "a.gtrace");
  EXPECT_EQ(WithStreamExtension("dir.gtrace/a"), "dir.gtrace/a.gtrace");
}

}  // namespace
}  // namespace gt
