#include "tests/common/test_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

extern char** environ;

namespace gt::test {

std::string BinaryDir() { return GT_BINARY_DIR; }
std::string SourceDir() { return GT_SOURCE_DIR; }
std::string LibraryPath() { return BinaryDir() + "/lib/libgtrace.so"; }
std::string CliPath() { return BinaryDir() + "/bin/gtrace"; }
std::string SamplePath(const std::string& name) { return BinaryDir() + "/bin/" + name; }

std::string ConfiguredReferenceDir() {
  const char* env = getenv("GT_TEST_REFERENCE_DIR");
  return env != nullptr ? env : GT_TEST_REFERENCE_DIR;
}

std::string ReferenceDir() {
  std::string dir = ConfiguredReferenceDir();
  struct stat st;
  if (dir.empty() || stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return {};
  return dir;
}

TempDir::TempDir() {
  const char* base = getenv("TMPDIR");
  std::string tmpl = std::string(base != nullptr ? base : "/tmp") + "/gtrace-test-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  char* p = mkdtemp(buf.data());
  path_ = p != nullptr ? p : "/tmp";
}

TempDir::~TempDir() {
  if (path_.empty() || path_ == "/tmp") return;
  if (getenv("GT_TEST_KEEP_TMP") != nullptr) return;
  std::string cmd = "rm -rf '" + path_ + "'";
  int rc = system(cmd.c_str());
  (void)rc;
}

std::vector<std::string> TempDir::Find(const std::string& suffix) const {
  std::vector<std::string> out;
  DIR* d = opendir(path_.c_str());
  if (d == nullptr) return out;
  while (dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n.size() >= suffix.size() && n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0) {
      out.push_back(path_ + "/" + n);
    }
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> TempDir::ListDir(const std::string& path) {
  std::vector<std::string> out;
  DIR* d = opendir(path.c_str());
  if (d == nullptr) return out;
  while (dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") out.push_back(n);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

RunResult RunProgram(const std::vector<std::string>& argv, const RunOptions& o) {
  RunResult r;
  std::map<std::string, std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const char* eq = strchr(*e, '=');
    if (eq != nullptr) env[std::string(*e, eq - *e)] = eq + 1;
  }
  for (const std::string& k : o.unset_env) env.erase(k);
  for (auto& [k, v] : o.env) env[k] = v;
  if (o.preload) env["LD_PRELOAD"] = LibraryPath();
  std::vector<std::string> env_strings;
  for (auto& [k, v] : env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = argv;
  std::vector<char*> cargv;
  for (auto& a : args) cargv.push_back(a.data());
  cargv.push_back(nullptr);

  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) return r;
  pid_t pid = fork();
  if (pid == 0) {
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    if (!o.cwd.empty() && chdir(o.cwd.c_str()) != 0) _exit(126);
    execvpe(cargv[0], cargv.data(), envp.data());
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  auto start = std::chrono::steady_clock::now();
  bool signalled = false, killed = false;
  long long output_seen_ms = -1;  // when stdout first held signal_after_output ("" is there at once)
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  while (open_fds > 0) {
    int wait_ms = 50;
    poll(fds, 2, wait_ms);
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[4096];
      ssize_t n = read(fds[i].fd, buf, sizeof(buf));
      if (n > 0) {
        (i == 0 ? r.out : r.err).append(buf, static_cast<size_t>(n));
      } else {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
    if (o.signal_to_send != 0 && !signalled && output_seen_ms < 0 &&
        r.out.find(o.signal_after_output) != std::string::npos) {
      output_seen_ms = ms;
    }
    if (o.signal_to_send != 0 && !signalled && output_seen_ms >= 0 && ms - output_seen_ms >= o.signal_after_ms) {
      kill(pid, o.signal_to_send);
      signalled = true;
    }
    if (!killed && ms >= o.timeout_s * 1000) {
      kill(pid, SIGKILL);
      killed = true;
    }
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.term_signal = WTERMSIG(status);
  return r;
}

RunOptions TracedRun(const TempDir& dir, const std::string& output_name) {
  RunOptions o;
  o.preload = true;
  o.env["GTRACE_OUTPUT"] = dir.File(output_name);
  // The default stream clock (TSC where the machine offers it, issue 16): the export converts it,
  // so what tests read after export is CLOCK_MONOTONIC ns either way. A test that needs one clock
  // (exact fake durations that must survive to the ns, replayed captures) sets GTRACE_CLOCK itself.
  for (char** e = environ; *e != nullptr; ++e) {
    if (strncmp(*e, "GTRACE_", 7) == 0 && strncmp(*e, "GTRACE_OUTPUT=", 14) != 0) {
      o.unset_env.push_back(std::string(*e, strchr(*e, '=') - *e));
    }
  }
  o.unset_env.push_back("NVTX_INJECTION64_PATH");
  o.unset_env.push_back("CUDA_INJECTION64_PATH");
  o.unset_env.push_back("NCCL_PROFILER_PLUGIN");
  return o;
}

Db::Db(const std::string& path, bool read_only) {
  std::string uri = "file:" + path + (read_only ? "?mode=ro" : "");
  int flags = SQLITE_OPEN_URI | (read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  if (sqlite3_open_v2(uri.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
    error_ = db_ != nullptr ? sqlite3_errmsg(db_) : "open failed";
    if (db_ != nullptr) sqlite3_close(db_);
    db_ = nullptr;
  }
}

Db::~Db() {
  if (db_ != nullptr) sqlite3_close(db_);
}

std::vector<std::string> Db::Rows(const std::string& sql) {
  std::vector<std::string> rows;
  sqlite3_stmt* st = nullptr;
  if (db_ == nullptr || sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) {
    error_ = db_ != nullptr ? sqlite3_errmsg(db_) : "no database";
    rows.push_back("SQL ERROR: " + error_);
    return rows;
  }
  while (sqlite3_step(st) == SQLITE_ROW) {
    std::string row;
    for (int i = 0; i < sqlite3_column_count(st); ++i) {
      if (i > 0) row += "|";
      if (sqlite3_column_type(st, i) == SQLITE_NULL) {
        row += "NULL";
      } else {
        row += reinterpret_cast<const char*>(sqlite3_column_text(st, i));
      }
    }
    rows.push_back(row);
  }
  sqlite3_finalize(st);
  return rows;
}

std::optional<int64_t> Db::Int(const std::string& sql) {
  sqlite3_stmt* st = nullptr;
  std::optional<int64_t> v;
  if (db_ == nullptr || sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) return v;
  if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return v;
}

std::optional<std::string> Db::Text(const std::string& sql) {
  sqlite3_stmt* st = nullptr;
  std::optional<std::string> v;
  if (db_ == nullptr || sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) return v;
  if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
    v = std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
  }
  sqlite3_finalize(st);
  return v;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

}  // namespace gt::test
