// `gtrace profile [options] [--] command args...`: runs the command with libgtrace.so preloaded
// and every option passed as its GTRACE_* variable (so LD_PRELOAD alone behaves the same), waits
// for it, lists the streams it wrote, optionally exports them, and exits with the command's status.
#include <elf.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tools/cli/args.h"
#include "tools/cli/commands.h"
#include "tools/export/exporter.h"

extern char** environ;

namespace gt::cli {
namespace {

struct ProfileOptions {
  std::string output = "gtrace-%h-%p";
  std::map<std::string, std::string> env;  // GTRACE_* to set for the child
  std::string export_type = "none";
  bool force = false;
  bool stats = false;
};

std::string SelfDir() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return ".";
  buf[n] = '\0';
  std::string p(buf);
  return p.substr(0, p.rfind('/'));
}

bool IsFile(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// libgtrace.so next to this binary: <prefix>/bin/gtrace -> <prefix>/<libdir>/libgtrace.so.
// The file execvp would run for `name` (PATH search for a bare name); empty when none.
std::string ResolveCommand(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t at = 0;
  while (at <= dirs.size()) {
    size_t end = dirs.find(':', at);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(at, end - at);
    std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0 && IsFile(candidate)) return candidate;
    at = end + 1;
  }
  return "";
}

// True for a 64-bit ELF executable without PT_INTERP (static or static-pie): no dynamic loader
// runs in it, so LD_PRELOAD (and with it libgtrace.so) never loads there (issue 28, item 13).
bool IsStaticElf(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  Elf64_Ehdr eh{};
  bool is_static = false;
  if (pread(fd, &eh, sizeof(eh), 0) == static_cast<ssize_t>(sizeof(eh)) && memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 &&
      eh.e_ident[EI_CLASS] == ELFCLASS64 && (eh.e_type == ET_EXEC || eh.e_type == ET_DYN) &&
      eh.e_phentsize == sizeof(Elf64_Phdr) && eh.e_phnum > 0 && eh.e_phnum < 256) {
    is_static = true;
    for (int i = 0; i < eh.e_phnum; ++i) {
      Elf64_Phdr ph{};
      if (pread(fd, &ph, sizeof(ph), static_cast<off_t>(eh.e_phoff + i * sizeof(ph))) != static_cast<ssize_t>(sizeof(ph))) {
        is_static = false;
        break;
      }
      if (ph.p_type == PT_INTERP) {
        is_static = false;
        break;
      }
    }
  }
  close(fd);
  return is_static;
}

std::string FindLibrary() {
  if (const char* p = getenv("GTRACE_LIBRARY"); p != nullptr && *p != '\0') return p;
  std::string dir = SelfDir();
  for (const char* rel : {"/../" GT_INSTALL_LIBDIR "/libgtrace.so", "/../lib/libgtrace.so", "/../lib64/libgtrace.so"}) {
    std::string candidate = dir + rel;
    char real[PATH_MAX];
    if (IsFile(candidate) && realpath(candidate.c_str(), real) != nullptr) return real;
  }
  return {};
}

std::string Absolute(const std::string& p) {
  if (!p.empty() && p[0] == '/') return p;
  char cwd[PATH_MAX];
  if (getcwd(cwd, sizeof(cwd)) == nullptr) return p;
  return std::string(cwd) + "/" + p;
}

// Expands the output pattern the way the library will for the launched process.
std::string ExpandFor(const std::string& pattern, pid_t pid) {
  std::string out;
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%' || i + 1 >= pattern.size()) {
      out += pattern[i];
      continue;
    }
    char k = pattern[++i];
    if (k == 'h') {
      out += host;
    } else if (k == 'p') {
      out += std::to_string(pid);
    } else if (k == '%') {
      out += '%';
    } else if (k == 'q') {
      size_t close = pattern.find('}', i);
      std::string var = pattern.substr(i + 2, close - i - 2);
      if (const char* v = getenv(var.c_str())) out += v;
      i = close;
    }
  }
  return out;
}

Status CheckPattern(const std::string& pattern) {
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%') continue;
    if (i + 1 >= pattern.size()) return Status::Error("--output: '" + pattern + "' ends with a lone '%'");
    char k = pattern[++i];
    if (k == 'h' || k == 'p' || k == '%') continue;
    if (k == 'q') {
      size_t close = pattern.find('}', i);
      if (i + 1 >= pattern.size() || pattern[i + 1] != '{' || close == std::string::npos || close == i + 2) {
        return Status::Error("--output: '" + pattern + "': %q must be followed by {VARIABLE}");
      }
      i = close;
      continue;
    }
    return Status::Error("--output: '" + pattern + "': unknown placeholder '%" + std::string(1, k) +
                         "' (known: %h, %p, %q{VAR}, %%)");
  }
  return Status::Ok();
}

std::string StripStreamExt(const std::string& p) {
  const std::string ext = ".gtrace";
  if (p.size() > ext.size() && p.compare(p.size() - ext.size(), ext.size(), ext) == 0) {
    return p.substr(0, p.size() - ext.size());
  }
  return p;
}

}  // namespace

int RunProfile(const std::vector<std::string>& args) {
  ProfileOptions o;
  ArgParser p("profile", "gtrace profile [options] [--] <command> [args...]",
              "Runs <command> with gtrace injected (LD_PRELOAD=libgtrace.so) and writes one stream per process.\n"
              "Each option sets the GTRACE_* variable named beside it, so `LD_PRELOAD=libgtrace.so` with those\n"
              "variables behaves the same. Exits with the command's exit status.");
  p.Add({"output", 'o', true, "NAME",
         "stream name pattern: %h host, %p pid, %q{VAR} env variable, %% (GTRACE_OUTPUT; default gtrace-%h-%p)",
         [&](std::string_view v) {
           o.output = std::string(v);
           return CheckPattern(o.output);
         }});
  p.Add({"trace", 't', true, "LIST", "what to trace: cuda,nvtx,nccl,osrt or none (GTRACE_TRACE; default cuda,nvtx,nccl)",
         [&](std::string_view v) {
           std::string list(v);
           size_t start = 0;
           bool none = false;
           int count = 0;
           while (true) {
             size_t comma = list.find(',', start);
             std::string item = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
             ++count;
             if (item == "none") {
               none = true;
             } else if (item != "cuda" && item != "nvtx" && item != "nccl" && item != "osrt") {
               static const std::set<std::string> nsys_only = {"mpi", "ucx", "oshmem", "cublas", "cudnn",
                                                               "cusparse", "opengl", "openacc", "openmp", "vulkan",
                                                               "nvvideo", "python-gil", "syscall"};
               if (nsys_only.count(item) == 0) {
                 return Status::Error("--trace: unknown trace '" + item + "' (known: cuda, nvtx, nccl, osrt, none)");
               }
               std::cerr << "gtrace: --trace: '" << item << "' is an nsys option gtrace does not implement; ignored\n";
             }
             if (comma == std::string::npos) break;
             start = comma + 1;
           }
           if (none && count > 1) return Status::Error("--trace: 'none' cannot be combined with other traces");
           o.env["GTRACE_TRACE"] = list;
           return Status::Ok();
         }});
  p.Add({"export", 0, true, "TYPE", "after the run, export the streams: sqlite or none (default none)",
         [&](std::string_view v) {
           if (v != "sqlite" && v != "none") return Status::Error("--export: '" + std::string(v) + "' (known: sqlite, none)");
           o.export_type = std::string(v);
           return Status::Ok();
         }});
  p.Add({"stats", 0, false, "", "after the run, export to SQLite and print the summary reports",
         [&](std::string_view v) {
           ParseBoolValue(v, &o.stats);
           return Status::Ok();
         }});
  p.Add({"force-overwrite", 'f', false, "", "replace existing output files (GTRACE_FORCE_OVERWRITE)",
         [&](std::string_view v) {
           ParseBoolValue(v, &o.force);
           return Status::Ok();
         }});
  p.Add({"buffer-mb", 0, true, "MB", "memory for all thread buffers of a process (GTRACE_BUFFER_MB; default 256; rings grow within it)",
         [&](std::string_view v) {
           uint64_t n;
           Status st = ParseUnsigned("--buffer-mb", v, 1, 65536, &n);
           if (st.ok()) o.env["GTRACE_BUFFER_MB"] = std::to_string(n);
           return st;
         }});
  p.Add({"osrt-threshold", 0, true, "NS",
         "OS runtime calls shorter than NS nanoseconds are not recorded (GTRACE_OSRT_THRESHOLD; default 1000)",
         [&](std::string_view v) {
           uint64_t n;
           Status st = ParseUnsigned("--osrt-threshold", v, 0, 3600000000000ull, &n);
           if (st.ok()) o.env["GTRACE_OSRT_THRESHOLD"] = std::to_string(n);
           return st;
         }});
  // nsys's OS runtime backtrace flags (docs/osrt.md, "Backtraces").
  p.Add({"osrt-backtrace-threshold", 0, true, "NS",
         "with -t osrt: recorded OS runtime calls of at least NS ns keep their caller's stack "
         "(GTRACE_OSRT_BACKTRACE_THRESHOLD; default: no stacks)",
         [&](std::string_view v) {
           uint64_t n;
           Status st = ParseUnsigned("--osrt-backtrace-threshold", v, 0, 3600000000000ull, &n);
           if (st.ok()) o.env["GTRACE_OSRT_BACKTRACE_THRESHOLD"] = std::to_string(n);
           return st;
         }});
  p.Add({"osrt-backtrace-depth", 0, true, "N",
         "frames kept per OS runtime backtrace, 1 to 64 (GTRACE_OSRT_BACKTRACE_DEPTH; default 24, nsys's)",
         [&](std::string_view v) {
           uint64_t n;
           Status st = ParseUnsigned("--osrt-backtrace-depth", v, 1, 64, &n);
           if (st.ok()) o.env["GTRACE_OSRT_BACKTRACE_DEPTH"] = std::to_string(n);
           return st;
         }});
  p.Add({"osrt-backtrace-stack-size", 0, true, "BYTES",
         "nsys's stack-copy size: gtrace unwinds in place, so it is accepted and ignored with a note",
         [](std::string_view v) {
           uint64_t n;
           Status st = ParseUnsigned("--osrt-backtrace-stack-size", v, 0, UINT64_MAX / 2, &n);
           if (st.ok())
             std::cerr << "gtrace: --osrt-backtrace-stack-size: gtrace unwinds the stack in place (no copy); ignored\n";
           return st;
         }});
  // CPU sampling (docs/sampling.md): nsys's flag names; gtrace's --sample default is none (nsys's is
  // process-tree) so that runs without the flag keep their cost.
  p.Add({"sample", 's', true, "MODE",
         "periodic CPU sampling with call stacks: process-tree or none (GTRACE_SAMPLE; default none)",
         [&](std::string_view v) {
           if (v == "process-tree" || v == "cpu" || v == "none") {
             o.env["GTRACE_SAMPLE"] = std::string(v);
             return Status::Ok();
           }
           if (v == "system-wide")
             return Status::Error("--sample=system-wide needs root and is not implemented; use process-tree");
           return Status::Error("--sample: '" + std::string(v) + "' is not process-tree or none");
         }});
  p.Add({"sampling-frequency", 0, true, "HZ",
         "CPU samples per second of each thread's CPU time, 100..8000 (GTRACE_SAMPLING_FREQUENCY; default 1000)",
         [&](std::string_view v) {
           uint64_t n;
           Status st = ParseUnsigned("--sampling-frequency", v, 100, 8000, &n);
           if (st.ok()) o.env["GTRACE_SAMPLING_FREQUENCY"] = std::to_string(n);
           return st;
         }});
  p.Add({"python-sampling", 0, true, "true|false",
         "with --sample: each sample of a Python thread also gets its Python frames (GTRACE_PYTHON_SAMPLING; "
         "default false)",
         [&](std::string_view v) {
           if (v == "true" || v == "false") {
             o.env["GTRACE_PYTHON_SAMPLING"] = std::string(v);
             return Status::Ok();
           }
           return Status::Error("--python-sampling: '" + std::string(v) + "' is not true or false");
         }});
  p.Add({"backtrace", 0, true, "fp|dwarf|none",
         "with --sample: how each CPU sample's callers are found: fp (frame pointers, the kernel's walk), dwarf "
         "(libunwind on the sampled thread: code built without frame pointers), none (GTRACE_BACKTRACE; default fp)",
         [&](std::string_view v) {
           if (v == "fp" || v == "dwarf" || v == "none") {
             o.env["GTRACE_BACKTRACE"] = std::string(v);
             return Status::Ok();
           }
           if (v == "lbr")
             return Status::Error("--backtrace=lbr needs a hardware PMU's last branch records; gtrace samples the "
                                  "software cpu-clock event (use fp or dwarf)");
           return Status::Error("--backtrace: '" + std::string(v) + "' is not fp, dwarf or none");
         }});
  p.Add({"flush-interval-ms", 0, true, "MS", "longest time data waits in memory (GTRACE_FLUSH_MS; default 500)",
         [&](std::string_view v) {
           uint64_t n;
           Status st = ParseUnsigned("--flush-interval-ms", v, 10, 60000, &n);
           if (st.ok()) o.env["GTRACE_FLUSH_MS"] = std::to_string(n);
           return st;
         }});
  p.Add({"trace-fork-before-exec", 0, false, "",
         "trace children that fork without exec (GTRACE_TRACE_FORK_BEFORE_EXEC; default true)",
         [&](std::string_view v) {
           bool b = true;
           ParseBoolValue(v, &b);
           o.env["GTRACE_TRACE_FORK_BEFORE_EXEC"] = b ? "true" : "false";
           return Status::Ok();
         }});
  p.Add({"nccl-trace", 0, true, "LIST",
         "NCCL profiler-plugin events: group, coll, p2p, kernel, api, proxy, proxy-step, proxy-ctrl, net, ce, "
         "default, all, none or a mask number (GTRACE_NCCL_TRACE; default: default = group,coll,p2p,kernel,api,ce)",
         [&](std::string_view v) {
           // The library is the authority on the list (it warns and falls back to the default);
           // here only the names are checked, so a typo fails before the command runs.
           static const std::set<std::string> names = {"group", "coll", "p2p", "kernel", "api", "proxy", "proxy-step",
                                                       "proxy-ctrl", "net", "ce", "default", "all", "none"};
           std::string list(v);
           size_t start = 0;
           while (true) {
             size_t comma = list.find(',', start);
             std::string item = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
             bool number = !item.empty() && item.find_first_not_of("0123456789abcdefxABCDEFX") == std::string::npos &&
                           isdigit(static_cast<unsigned char>(item[0]));
             if (names.count(item) == 0 && !number) {
               return Status::Error("--nccl-trace: unknown NCCL event '" + item +
                                    "' (known: group, coll, p2p, kernel, api, proxy, proxy-step, proxy-ctrl, net, "
                                    "ce, default, all, none, or a number)");
             }
             if (comma == std::string::npos) break;
             start = comma + 1;
           }
           o.env["GTRACE_NCCL_TRACE"] = list;
           return Status::Ok();
         }});
  // GPU metrics (docs/gpu-metrics.md). The library is the authority (it warns and keeps its default on
  // a bad value); here the grammar is checked so a typo fails before the command runs.
  p.Add({"gpu-metrics-devices", 0, true, "none|all|cuda-visible|ID[,ID...]",
         "sample GPU hardware metrics (CUPTI PM sampling) of these CUDA devices; on a multi-rank node each GPU is "
         "sampled by the one local rank that owns it (GTRACE_GPU_METRICS_DEVICES; default none)",
         [&](std::string_view v) {
           std::string text(v);
           if (text != "none" && text != "all" && text != "cuda-visible") {
             size_t start = 0;
             while (true) {
               size_t comma = text.find(',', start);
               std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
               uint64_t id = 0;
               if (!ParseUnsigned("--gpu-metrics-devices", item, 0, 255, &id).ok()) {
                 return Status::Error("--gpu-metrics-devices: '" + text +
                                      "' is not none, all, cuda-visible or a list of device ids (e.g. 0,2)");
               }
               if (comma == std::string::npos) break;
               start = comma + 1;
             }
           }
           o.env["GTRACE_GPU_METRICS_DEVICES"] = text;
           return Status::Ok();
         }});
  p.Add({"gpu-metrics-frequency", 0, true, "HZ",
         "GPU metrics samples per second, 10 to 200000 (GTRACE_GPU_METRICS_FREQUENCY; default 10000)",
         [&](std::string_view v) {
           uint64_t hz = 0;
           Status st = ParseUnsigned("--gpu-metrics-frequency", v, 10, 200000, &hz);
           if (st.ok()) o.env["GTRACE_GPU_METRICS_FREQUENCY"] = std::to_string(hz);
           return st;
         }});
  p.Add({"gpu-metrics-set", 0, true, "NAME",
         "metric set: default, compute, memory or metrics:<cupti-name>,... (GTRACE_GPU_METRICS_SET; default "
         "default; each chip gets the members it can collect in one pass)",
         [&](std::string_view v) {
           std::string set(v);
           if (set != "default" && set != "compute" && set != "memory" &&
               !(set.rfind("metrics:", 0) == 0 && set.size() > 8)) {
             return Status::Error("--gpu-metrics-set: unknown metric set '" + set +
                                  "' (known: default, compute, memory, metrics:<name>,<name>...)");
           }
           o.env["GTRACE_GPU_METRICS_SET"] = set;
           return Status::Ok();
         }});
  p.Add({"gpu-metrics-ranges", 0, true, "nvtx:RANGE[@DOMAIN]|kernel|none",
         "range profiler: the metric set per NVTX push/pop range or per kernel (kernel mode SERIALISES every kernel "
         "launch) (GTRACE_GPU_METRICS_RANGES; default none)",
         [&](std::string_view v) {
           std::string r(v);
           if (r != "none" && r != "kernel" && !(r.rfind("nvtx:", 0) == 0 && r.size() > 5 && r[5] != '@')) {
             return Status::Error("--gpu-metrics-ranges: '" + r + "' is not nvtx:RANGE[@DOMAIN], kernel or none");
           }
           o.env["GTRACE_GPU_METRICS_RANGES"] = r;
           return Status::Ok();
         }});
  AddCaptureFlags(&p, &o.env);
  AddCallStackFlags(&p, &o.env);

  std::vector<std::string> command;
  bool help = false;
  Status st = p.Parse(args, /*stop_at_positional=*/true, &command, &help);
  if (help) {
    std::cout << p.Help();
    return 0;
  }
  if (!st.ok()) {
    std::cerr << "gtrace: " << st.message() << "\n";
    return 2;
  }
  if (Status cs = CheckCaptureFlags(o.env); !cs.ok()) {
    std::cerr << "gtrace: " << cs.message() << "\n";
    return 2;
  }
  if (command.empty()) {
    std::cerr << "gtrace: profile: no command given (usage: gtrace profile [options] [--] <command> [args...])\n";
    return 2;
  }
  std::string lib = FindLibrary();
  if (lib.empty()) {
    std::cerr << "gtrace: profile: libgtrace.so not found next to " << SelfDir() << " (set GTRACE_LIBRARY)\n";
    return 2;
  }
  // Relative names are resolved against this directory, whatever the command does with its cwd.
  std::string pattern = Absolute(o.output);
  // Existing output: refuse unless forced (a name with %p is new for every process).
  bool per_pid = pattern.find("%p") != std::string::npos;
  if (!per_pid) {
    std::string stream = ExpandFor(pattern, 0);
    if (stream.size() < 7 || stream.compare(stream.size() - 7, 7, ".gtrace") != 0) stream += ".gtrace";
    if (IsFile(stream)) {
      if (!o.force) {
        std::cerr << "gtrace: profile: " << stream << " exists; use --force-overwrite=true to replace it\n";
        return 2;
      }
      unlink(stream.c_str());
    }
  }
  char manifest[] = "/tmp/gtrace-manifest-XXXXXX";
  int mfd = mkstemp(manifest);
  if (mfd < 0) {
    std::cerr << "gtrace: profile: cannot create a temporary file: " << strerror(errno) << "\n";
    return 2;
  }
  close(mfd);

  // The child's environment: ours + LD_PRELOAD (prepended) + the GTRACE_* twins of the flags.
  std::map<std::string, std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const char* eq = strchr(*e, '=');
    if (eq != nullptr) env[std::string(*e, eq - *e)] = eq + 1;
  }
  for (auto& [k, v] : o.env) env[k] = v;
  env["GTRACE_OUTPUT"] = pattern;
  env["GTRACE_MANIFEST"] = manifest;
  if (o.force) env["GTRACE_FORCE_OVERWRITE"] = "true";
  std::string preload = env.count("LD_PRELOAD") ? env["LD_PRELOAD"] : "";
  env["LD_PRELOAD"] = preload.empty() ? lib : lib + ":" + preload;
  std::vector<std::string> env_strings;
  for (auto& [k, v] : env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<char*> argv;
  for (auto& a : command) argv.push_back(a.data());
  argv.push_back(nullptr);

  // Ctrl-C reaches the whole foreground group: let the command decide, then export what it wrote.
  struct sigaction ign {}, old_int {}, old_quit {};
  ign.sa_handler = SIG_IGN;
  sigaction(SIGINT, &ign, &old_int);
  sigaction(SIGQUIT, &ign, &old_quit);
  pid_t child = fork();
  if (child < 0) {
    std::cerr << "gtrace: profile: fork failed: " << strerror(errno) << "\n";
    unlink(manifest);
    return 2;
  }
  if (child == 0) {
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGQUIT, &old_quit, nullptr);
    execvpe(argv[0], argv.data(), envp.data());
    int err = errno;
    std::cerr << "gtrace: profile: cannot run '" << command[0] << "': " << strerror(err) << "\n";
    _exit(err == ENOENT ? 127 : 126);
  }
  // A SIGTERM for us (job scheduler) goes to the command too.
  static pid_t s_child;
  s_child = child;
  struct sigaction fwd {};
  fwd.sa_handler = [](int sig) { kill(s_child, sig); };
  sigaction(SIGTERM, &fwd, nullptr);
  sigaction(SIGHUP, &fwd, nullptr);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  int exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (WIFSIGNALED(status)) std::cerr << "gtrace: the command was killed by signal " << WTERMSIG(status) << "\n";

  std::vector<std::string> streams;
  {
    std::ifstream in(manifest);
    std::string line;
    std::set<std::string> seen;
    while (std::getline(in, line)) {
      if (!line.empty() && seen.insert(line).second && IsFile(line)) streams.push_back(line);
    }
  }
  unlink(manifest);
  if (streams.empty()) {
    if (std::string exe = ResolveCommand(command[0]); !exe.empty() && IsStaticElf(exe)) {
      std::cerr << "gtrace: no stream was written: " << exe << " is statically linked, and libgtrace.so cannot be "
                << "injected into a static executable (LD_PRELOAD needs the dynamic loader)\n";
      return exit_code;
    }
    std::cerr << "gtrace: no stream was written (the command used no NVTX, CUDA or NCCL, or tracing was off)\n";
    return exit_code;
  }
  for (const std::string& s : streams) std::cerr << "gtrace: wrote " << s << "\n";
  if (o.export_type == "sqlite" || o.stats) {
    exporter::ExportOptions eo;
    eo.inputs = streams;
    eo.output = StripStreamExt(ExpandFor(pattern, child)) + ".sqlite";
    eo.force = o.force;
    exporter::ExportResult result;
    Status es = exporter::ExportSqlite(eo, &result);
    if (!es.ok()) {
      std::cerr << "gtrace: export: " << es.message() << "\n";
      return exit_code != 0 ? exit_code : 1;
    }
    for (const std::string& w : result.warnings) std::cerr << "gtrace: warning: " << w << "\n";
    std::cerr << "gtrace: wrote " << eo.output << "\n";
    if (o.stats) PrintDefaultReports(eo.output);
  }
  return exit_code;
}

}  // namespace gt::cli
