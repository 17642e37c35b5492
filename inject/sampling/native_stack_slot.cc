// --backtrace=dwarf: the handler-side unwind and the drain-side matching. Design, threads and the
// async-signal-safety argument: native_stack_slot.h.
#include "inject/sampling/native_stack_slot.h"

#include <dlfcn.h>
#include <linux/perf_event.h>
#include <ucontext.h>

// Types and constants only (cursor size, UNW_REG_IP, UNW_INIT_SIGNAL_FRAME): the functions are
// looked up with dlsym in the libunwind that callstack/unwinder.cc loads; libgtrace.so never links it.
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "inject/callstack/unwinder.h"
#include "inject/osrt/osrt_tracer.h"
#include "inject/sampling/slot_take.h"

namespace gt::sampling {
namespace {

#if defined(__x86_64__)
constexpr const char kInitLocal2[] = "_ULx86_64_init_local2";
constexpr const char kStep[] = "_ULx86_64_step";
constexpr const char kGetReg[] = "_ULx86_64_get_reg";
#elif defined(__aarch64__)
constexpr const char kInitLocal2[] = "_ULaarch64_init_local2";
constexpr const char kStep[] = "_ULaarch64_step";
constexpr const char kGetReg[] = "_ULaarch64_get_reg";
#else
constexpr const char kInitLocal2[] = "";
constexpr const char kStep[] = "";
constexpr const char kGetReg[] = "";
#endif

static_assert(sizeof(unw_word_t) == sizeof(uint64_t), "64-bit targets only");

// Fills `ips` from a cursor set up by init_local2; returns the number of addresses.
uint32_t Walk(const NativeUnwinder& u, unw_cursor_t* cursor, uint64_t* ips, uint32_t max_frames) {
  uint32_t n = 0;
  do {
    uint64_t ip = 0;
    if (u.get_reg(cursor, UNW_REG_IP, &ip) < 0 || ip == 0)
      break;
    ips[n++] = ip;
  } while (n < max_frames && u.step(cursor) > 0);
  return n;
}

}  // namespace

void NativeStackSlot::OnSignal(const NativeUnwinder& unwinder, void* ucontext) {
  // The sample's record is in the ring already and no other sample of this thread can come first:
  // data_head is its end offset (python_signal_sampler.h).
  uint64_t head = __atomic_load_n(&static_cast<const perf_event_mmap_page*>(perf_page_)->data_head, __ATOMIC_ACQUIRE);
  uint64_t w = write_.load(std::memory_order_relaxed);
  if (w - read_.load(std::memory_order_acquire) >= kEntries) {
    full_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  // libunwind's own libc calls (its lock, mincore/msync, mmap) are not the application's.
  bool was_inside = osrt::t_in_osrt;
  osrt::t_in_osrt = true;
  NativeStackEntry& e = entries_[w % kEntries];
  unw_cursor_t cursor;
  uint32_t n = 0;
  if (unwinder.init_local2(&cursor, ucontext, UNW_INIT_SIGNAL_FRAME) >= 0)
    n = Walk(unwinder, &cursor, e.ips, NativeStackEntry::kMaxFrames);
  osrt::t_in_osrt = was_inside;
  if (n == 0) {
    failed_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  e.data_head = head;
  e.frames = n;
  write_.store(w + 1, std::memory_order_release);
}

const NativeStackEntry* NativeStackSlot::Take(uint64_t end_offset) {
  return TakeSlotEntry(&read_, write_, entries_, end_offset);
}

bool LoadNativeUnwinder(NativeUnwinder* out, std::string* path, std::string* why) {
  if (kInitLocal2[0] == '\0') {
    *why = "--backtrace=dwarf is implemented for x86-64 and aarch64 only";
    return false;
  }
  callstack::Unwinder lib;
  if (!callstack::LoadUnwinder(&lib, why))
    return false;
  NativeUnwinder u;
  u.init_local2 = reinterpret_cast<NativeUnwinder::InitLocal2Fn>(dlsym(lib.handle, kInitLocal2));
  u.step = reinterpret_cast<NativeUnwinder::StepFn>(dlsym(lib.handle, kStep));
  u.get_reg = reinterpret_cast<NativeUnwinder::GetRegFn>(dlsym(lib.handle, kGetReg));
  *path = lib.path;
  if (u.init_local2 == nullptr || u.step == nullptr || u.get_reg == nullptr) {
    *why = "libunwind (" + lib.path + ") has no " + kInitLocal2 + " (libunwind 1.3 or later is needed)";
    return false;
  }
  // One walk here, on the drain thread: libunwind's one-time initialisation (its lock, its memory
  // pools, the address-space set-up) must not run first inside a signal handler.
  ucontext_t uc;
  if (getcontext(&uc) != 0) {
    *why = "getcontext failed";
    return false;
  }
  unw_cursor_t cursor;
  uint64_t ips[8];
  if (u.init_local2(&cursor, &uc, 0) < 0 || Walk(u, &cursor, ips, 8) == 0) {
    *why = "libunwind (" + lib.path + ") could not unwind a test stack";
    return false;
  }
  *out = u;
  return true;
}

}  // namespace gt::sampling
