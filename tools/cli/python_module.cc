#include "tools/cli/python_module.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>

namespace gt::cli {
namespace {

std::string SelfPath() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0)
    return "";
  buf[n] = '\0';
  return buf;
}

bool HasPackage(const std::string& dir) {
  struct stat st;
  return !dir.empty() && stat((dir + "/gtrace/parquet.py").c_str(), &st) == 0;
}

// The directory holding the gtrace package next to this CLI: an install's share/gtrace/python,
// else the source tree's python/ (a build tree's CLI).
std::string PackageDir(const std::string& self) {
  std::string bin = self.substr(0, self.rfind('/'));
  std::string installed = bin + "/../share/gtrace/python";
  if (HasPackage(installed))
    return installed;
  if (HasPackage(bin + "/../.."))  // the wheel: gtrace/bin/gtrace inside the package
    return bin + "/../..";
#ifdef GT_SOURCE_PYTHON_DIR
  if (HasPackage(GT_SOURCE_PYTHON_DIR))
    return GT_SOURCE_PYTHON_DIR;
#endif
  return "";
}

}  // namespace

int RunPythonModule(const std::string& module, const std::vector<std::string>& args) {
  const char* env_python = std::getenv("GTRACE_PYTHON");
  std::string python = env_python != nullptr && *env_python != '\0' ? env_python : "python3";
  std::string self = SelfPath();
  std::string dir = PackageDir(self);
  std::vector<std::string> argv = {python, "-m", module};
  argv.insert(argv.end(), args.begin(), args.end());
  std::cout.flush();
  pid_t pid = fork();
  if (pid < 0) {
    std::cerr << "gtrace: cannot start " << python << ": " << std::strerror(errno) << "\n";
    return 127;
  }
  if (pid == 0) {
    if (!dir.empty()) {
      const char* old = std::getenv("PYTHONPATH");
      std::string path = dir + (old != nullptr && *old != '\0' ? std::string(":") + old : "");
      setenv("PYTHONPATH", path.c_str(), 1);
    }
    if (!self.empty())
      setenv("GTRACE_BIN", self.c_str(), 1);
    std::vector<char*> cargv;
    for (std::string& a : argv)
      cargv.push_back(a.data());
    cargv.push_back(nullptr);
    execvp(cargv[0], cargv.data());
    std::string msg = "gtrace: cannot run " + python +
                      " (set GTRACE_PYTHON to a Python with pyarrow and duckdb): " + std::strerror(errno) + "\n";
    ssize_t w = write(2, msg.data(), msg.size());
    (void)w;
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR)
      return 127;
  }
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

}  // namespace gt::cli
