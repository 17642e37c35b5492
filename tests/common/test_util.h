// Helpers shared by gtrace's tests: paths of built artifacts, temporary directories, running a
// program (optionally under LD_PRELOAD=libgtrace.so) with a chosen environment, and SQLite queries.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gt::test {

// Built artifacts (from the build tree this test binary belongs to).
std::string BinaryDir();
std::string SourceDir();
std::string LibraryPath();  // build/lib/libgtrace.so
std::string CliPath();      // build/bin/gtrace
std::string SamplePath(const std::string& name);  // build/bin/<name>
// ../shared/reference (or GT_TEST_REFERENCE_DIR from the environment); "" when absent.
std::string ReferenceDir();
// The same setting as given (environment, else the build's), whether or not the folder exists.
std::string ConfiguredReferenceDir();

// A fresh directory under $TMPDIR, removed (recursively) on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }
  // Files in the directory whose names end with `suffix`, sorted.
  std::vector<std::string> Find(const std::string& suffix) const;
  // Names (not paths) of the entries of any directory, sorted, without . and ..
  static std::vector<std::string> ListDir(const std::string& path);

 private:
  std::string path_;
};

struct RunResult {
  int exit_code = -1;    // exit status, or -1 if killed
  int term_signal = 0;   // signal that killed it, or 0
  std::string out;
  std::string err;
};

struct RunOptions {
  std::map<std::string, std::string> env;  // added to (or replacing in) the current environment
  std::vector<std::string> unset_env;      // removed from the environment
  bool preload = false;                    // LD_PRELOAD=libgtrace.so
  std::string cwd;                         // working directory ("" = current)
  int timeout_s = 60;                      // killed (SIGKILL) after this
  // Sends `signal_to_send` (0 = never) `signal_after_ms` after stdout first holds
  // `signal_after_output` (empty: after the start). A loaded CI machine may take seconds to start a
  // Python interpreter: waiting for the program's own "ready" line keeps such tests honest.
  int signal_to_send = 0;
  int signal_after_ms = 0;
  std::string signal_after_output;
};

RunResult RunProgram(const std::vector<std::string>& argv, const RunOptions& options = {});

// Environment for a traced run: GTRACE_OUTPUT under `dir`, NVTX injection of our library, and
// none of the caller's GTRACE_* variables leaking in.
RunOptions TracedRun(const TempDir& dir, const std::string& output_name = "trace-%p");

// SQLite helpers (read-only opens for reference files).
class Db {
 public:
  explicit Db(const std::string& path, bool read_only = true);
  ~Db();
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;
  bool ok() const { return db_ != nullptr; }
  sqlite3* handle() { return db_; }
  // First column of the first row as an integer (nullopt for NULL or no row).
  std::optional<int64_t> Int(const std::string& sql);
  std::optional<std::string> Text(const std::string& sql);
  // All rows, each column rendered as text ("NULL" for NULL), joined with '|'.
  std::vector<std::string> Rows(const std::string& sql);
  std::string error() const { return error_; }

 private:
  sqlite3* db_ = nullptr;
  std::string error_;
};

std::string ReadFile(const std::string& path);
void WriteFile(const std::string& path, const std::string& bytes);

}  // namespace gt::test
