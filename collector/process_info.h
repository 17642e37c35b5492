// ProcessInfo: who this process is (host, pid, command line) and where it sits in a parallel job
// (rank from the launcher's variables). Read once at session start, on the slow path.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collector/config.h"

namespace gt {

struct RankInfo {
  int32_t rank = -1;
  int32_t local_rank = -1;
  int32_t world_size = -1;
  std::string source;  // variable the rank came from
};

struct ProcessAncestorInfo {
  uint32_t pid = 0;
  uint32_t ppid = 0;
  std::string name;  // comm
};

struct ProcessInfo {
  std::string host_name;
  std::string boot_id;
  uint32_t pid = 0;
  uint32_t ppid = 0;
  std::vector<std::string> command_line;
  std::string executable_path;
  RankInfo rank;
  std::string cpu_architecture;
  std::string os_description;
  uint32_t cpu_cores = 0;
  bool forked_without_exec = false;  // set by the session: a forked child recording without exec
  std::vector<ProcessAncestorInfo> ancestors;  // parent first, up to kMaxAncestors or pid 1
};

inline constexpr size_t kMaxAncestors = 8;

ProcessInfo ReadProcessInfo(EnvGetter getenv_fn);
// Parent, grandparent, ... of `pid` from /proc/<pid>/stat, at most kMaxAncestors, stopping after
// pid 1 or at the first process that cannot be read (it exited).
std::vector<ProcessAncestorInfo> ReadAncestors(uint32_t pid);
// Launchers in priority order: SLURM, Open MPI, MPICH/Intel MPI (PMI), PMIx, torchrun.
RankInfo DetectRank(EnvGetter getenv_fn);

// OS thread id of the caller (gettid).
uint32_t CurrentTid();

}  // namespace gt
