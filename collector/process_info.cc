#include "collector/process_info.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace gt {
namespace {

std::string ReadSmallFile(const char* path) {
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof(buf))) > 0 && out.size() < (1u << 20)) out.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return out;
}

bool ParseInt(const char* text, int32_t* out) {
  if (text == nullptr || *text == '\0') return false;
  char* end = nullptr;
  long v = std::strtol(text, &end, 10);
  if (*end != '\0' || v < 0 || v > INT32_MAX) return false;
  *out = static_cast<int32_t>(v);
  return true;
}

struct Launcher {
  const char* rank;
  const char* local_rank;
  const char* world_size;
};

constexpr Launcher kLaunchers[] = {
    {"SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS"},
    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE"},
    {"PMI_RANK", "MPI_LOCALRANKID", "PMI_SIZE"},
    {"PMIX_RANK", "PMIX_LOCAL_RANK", "PMIX_SIZE"},
    {"RANK", "LOCAL_RANK", "WORLD_SIZE"},
};

// pid, ppid and comm of one process from /proc/<pid>/stat ("pid (comm) state ppid ..."; comm may
// contain spaces and parentheses, so it ends at the last ')').
bool ReadStat(uint32_t pid, ProcessAncestorInfo* out) {
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/%u/stat", pid);
  std::string stat = ReadSmallFile(path);
  size_t open = stat.find('(');
  size_t close = stat.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open || close + 4 > stat.size()) return false;
  out->pid = pid;
  out->name = stat.substr(open + 1, close - open - 1);
  // After ") " comes the one-letter state, a space, then ppid.
  out->ppid = static_cast<uint32_t>(std::strtoul(stat.c_str() + close + 4, nullptr, 10));
  return true;
}

}  // namespace

std::vector<ProcessAncestorInfo> ReadAncestors(uint32_t pid) {
  std::vector<ProcessAncestorInfo> out;
  ProcessAncestorInfo self;
  if (!ReadStat(pid, &self)) return out;
  uint32_t next = self.ppid;
  while (next != 0 && out.size() < kMaxAncestors) {
    ProcessAncestorInfo a;
    if (!ReadStat(next, &a)) break;
    out.push_back(a);
    if (next == 1) break;
    next = a.ppid;
  }
  return out;
}

uint32_t CurrentTid() { return static_cast<uint32_t>(::syscall(SYS_gettid)); }

RankInfo DetectRank(EnvGetter getenv_fn) {
  RankInfo r;
  for (const Launcher& l : kLaunchers) {
    int32_t rank = -1;
    if (!ParseInt(getenv_fn(l.rank), &rank)) continue;
    r.rank = rank;
    r.source = l.rank;
    ParseInt(getenv_fn(l.local_rank), &r.local_rank);
    ParseInt(getenv_fn(l.world_size), &r.world_size);
    // SLURM_NTASKS is absent in some allocations; SLURM_NPROCS is its older name.
    if (r.world_size < 0 && std::strcmp(l.rank, "SLURM_PROCID") == 0) ParseInt(getenv_fn("SLURM_NPROCS"), &r.world_size);
    if (r.local_rank < 0 && std::strcmp(l.rank, "PMI_RANK") == 0) ParseInt(getenv_fn("PMI_LOCAL_RANK"), &r.local_rank);
    break;
  }
  return r;
}

ProcessInfo ReadProcessInfo(EnvGetter getenv_fn) {
  ProcessInfo p;
  p.pid = static_cast<uint32_t>(::getpid());
  p.ppid = static_cast<uint32_t>(::getppid());
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) == 0) p.host_name = host;
  p.boot_id = ReadSmallFile("/proc/sys/kernel/random/boot_id");
  while (!p.boot_id.empty() && (p.boot_id.back() == '\n' || p.boot_id.back() == ' ')) p.boot_id.pop_back();
  std::string cmdline = ReadSmallFile("/proc/self/cmdline");
  size_t start = 0;
  for (size_t i = 0; i < cmdline.size(); ++i) {
    if (cmdline[i] == '\0') {
      p.command_line.emplace_back(cmdline, start, i - start);
      start = i + 1;
    }
  }
  char exe[4096];
  ssize_t n = ::readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n > 0) p.executable_path.assign(exe, static_cast<size_t>(n));
  p.rank = DetectRank(getenv_fn);
  struct utsname u;
  if (::uname(&u) == 0) {
    p.cpu_architecture = u.machine;
    p.os_description = std::string(u.sysname) + " " + u.release;
  }
  long cores = ::sysconf(_SC_NPROCESSORS_ONLN);
  p.cpu_cores = cores > 0 ? static_cast<uint32_t>(cores) : 0;
  p.ancestors = ReadAncestors(p.pid);
  return p;
}

}  // namespace gt
