#include "collector/crash_report.h"

#include <execinfo.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

namespace gt {
namespace {

constexpr int kMaxFrames = 24;

// A fixed buffer filled by hand (snprintf is not async-signal-safe).
struct Line {
  char text[4096];
  size_t n = 0;
  void Add(const char* s, size_t len) {
    for (size_t i = 0; i < len && n + 1 < sizeof(text); ++i) text[n++] = s[i];
  }
  void Add(const char* s) { Add(s, std::strlen(s)); }
  void Hex(uint64_t v) {
    char b[20];
    int i = 0;
    do {
      b[i++] = "0123456789abcdef"[v & 15];
      v >>= 4;
    } while (v != 0);
    Add("0x");
    while (i > 0) Add(&b[--i], 1);
  }
  void Dec(uint64_t v) {
    char b[24];
    int i = 0;
    do {
      b[i++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v != 0);
    while (i > 0) Add(&b[--i], 1);
  }
};

const char* SignalName(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGABRT: return "SIGABRT";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    default: return "a crash signal";
  }
}

uint64_t ParseHex(const char*& p, const char* end) {
  uint64_t v = 0;
  for (; p < end; ++p) {
    char c = *p;
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (d < 0) break;
    v = v << 4 | static_cast<uint64_t>(d);
  }
  return v;
}

// For each frame, the mapping that holds it: module path (basename) and file offset. One pass over
// /proc/self/maps, line by line, through a fixed buffer.
void Resolve(void* const* pcs, int n, Line* out) {
  const char* names[kMaxFrames] = {};
  uint64_t offsets[kMaxFrames] = {};
  static char base_names[kMaxFrames][96];  // only the crashing thread gets here (and only once)
  int fd = static_cast<int>(::syscall(SYS_openat, AT_FDCWD, "/proc/self/maps", O_RDONLY | O_CLOEXEC));
  if (fd >= 0) {
    char buf[8192];
    size_t have = 0;
    bool eof = false;
    while (!eof || have > 0) {
      if (!eof && have < sizeof(buf)) {
        ssize_t r = ::read(fd, buf + have, sizeof(buf) - have);
        if (r <= 0) eof = true;
        else have += static_cast<size_t>(r);
      }
      char* nl = static_cast<char*>(std::memchr(buf, '\n', have));
      if (nl == nullptr) {
        if (eof || have == sizeof(buf)) have = 0;  // a last line without newline, or an overlong one
        continue;
      }
      // "start-end perms offset dev inode path"
      const char* p = buf;
      const char* e = nl;
      uint64_t start = ParseHex(p, e);
      ++p;
      uint64_t end = ParseHex(p, e);
      int field = 0;
      const char* path = nullptr;
      uint64_t file_off = 0;
      for (const char* q = p; q < e; ++q) {
        if (*q == ' ' && q + 1 < e && q[1] != ' ') {
          ++field;
          if (field == 2) {
            const char* o = q + 1;
            file_off = ParseHex(o, e);
          } else if (field == 5) {
            path = q + 1;
            break;
          }
        }
      }
      for (int i = 0; i < n; ++i) {
        uint64_t pc = reinterpret_cast<uint64_t>(pcs[i]);
        if (names[i] != nullptr || pc < start || pc >= end) continue;
        offsets[i] = pc - start + file_off;
        const char* base = path;
        for (const char* q = path; q != nullptr && q < e; ++q) {
          if (*q == '/') base = q + 1;
        }
        size_t len = base != nullptr ? static_cast<size_t>(e - base) : 0;
        if (len >= sizeof(base_names[i])) len = sizeof(base_names[i]) - 1;
        if (len > 0) std::memcpy(base_names[i], base, len);
        base_names[i][len] = '\0';
        names[i] = len > 0 ? base_names[i] : "?";
      }
      size_t used = static_cast<size_t>(nl + 1 - buf);
      std::memmove(buf, nl + 1, have - used);
      have -= used;
    }
    ::close(fd);
  }
  for (int i = 0; i < n; ++i) {
    out->Add(i == 0 ? " " : " < ");
    if (names[i] != nullptr) {
      out->Add(names[i]);
      out->Add("+");
      out->Hex(offsets[i]);
    } else {
      out->Hex(reinterpret_cast<uint64_t>(pcs[i]));
    }
  }
}

}  // namespace

void WarmCrashReport() {
  void* pcs[2];
  backtrace(pcs, 2);
}

void WriteCrashReport(int sig, const siginfo_t* info) {
  static Line line;  // one report per process: the first crash
  static volatile sig_atomic_t written = 0;
  if (written) return;
  written = 1;
  line.Add("gtrace: the process got ");
  line.Add(SignalName(sig));
  if (info != nullptr && (sig == SIGSEGV || sig == SIGBUS) && info->si_code > 0) {
    line.Add(" at address ");
    line.Hex(reinterpret_cast<uint64_t>(info->si_addr));
  }
  char name[17] = {};
  ::prctl(PR_GET_NAME, name, 0, 0, 0);
  line.Add(" on thread ");
  line.Dec(static_cast<uint64_t>(::syscall(SYS_gettid)));
  line.Add(" '");
  line.Add(name);
  line.Add("'; its stack (module+file offset, innermost first):");
  void* pcs[kMaxFrames];
  int n = backtrace(pcs, kMaxFrames);
  // Frames 0-1 are this function and the handler; the kernel's signal frame follows.
  int skip = n > 2 ? 2 : 0;
  Resolve(pcs + skip, n - skip, &line);
  line.Add("\n");
  size_t off = 0;
  while (off < line.n) {
    ssize_t w = ::write(2, line.text + off, line.n - off);
    if (w <= 0) break;
    off += static_cast<size_t>(w);
  }
}

}  // namespace gt
