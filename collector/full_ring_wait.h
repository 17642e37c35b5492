// FullRingWait: what a producer does when its ring is full (issue 20). On a 2-core machine with 8
// threads recording in tight loops, the drain thread gets about 1/9 of the CPU under CFS and cannot
// keep up whatever its speed: without help, 80-95 % of such a burst is dropped. With the `wait`
// policy (GTRACE_FULL_RING=wait, the default) a producer whose ring is full and cannot grow gives
// its CPU to the drain thread instead of dropping: it pokes the drain thread and sleeps on its
// ring's futex word until the drain thread has released room, then retries. Bounded so the host
// never hangs: the producer waits only while the drain thread shows signs of life (its heartbeat
// moves at least every kFullRingNoProgressNs, or it is runnable or inside a system call, read from
// /proc when the heartbeat stood still that long) and at most kFullRingMaxWaitNs without a release
// of its own ring; when it
// gives up (a stopped, dead or held drain thread: the end-of-process hold) the record is dropped,
// and every later full ring drops at once (no syscall) until the heartbeat moves again.
// With `drop` a full ring drops at once, as before (and as nsys, which never blocks the app).
//
// Threads: ReserveWhenFull runs on application threads (the would-drop slow path of BeginRecord,
// out of line, never for a record that fits); the Drain* functions run on the drain thread; the
// policy is set by the thread that starts or ends a session, and by the fork child handler.
#pragma once

#include <cstdint>

#include "collector/ring_pool.h"

namespace gt {

// Longest time a producer waits without any sign of life from the drain thread. Paid once per
// silence (later full rings drop at once until the heartbeat moves), so it can be long enough for a
// loaded machine to schedule a woken drain thread (a few ms at load average 10-20 on 2 cores)
// without letting a dead one cost more than one such wait.
inline constexpr uint64_t kFullRingNoProgressNs = 10000000;  // 10 ms
// Longest time one record waits while the drain thread works but releases nothing of this ring.
// A full ring takes records again only once the drain thread has read what is in front of them:
// with 8 threads sharing the default 256 MiB (4 M records of 64 B, 30-55 ns of drain CPU each) that
// is 150 ms to over 1 s on a loaded 2-core machine, so a cap on the whole wait (200 ms, then 1 s)
// dropped records (bench/results/2026-11-26-burst-8-threads.md). While someone waits, the drain
// thread releases every ring in slices, round after round, so a ring that is being drained sees a
// release every few ms; 1 s without one bounds a drain thread that runs but never gets to it.
inline constexpr uint64_t kFullRingMaxWaitNs = 1000000000;  // 1 s
// While a producer waits on a ring, the drain thread releases that ring's space every this many
// records (about 20 us of drain work), so the producer resumes long before the ring is empty.
inline constexpr uint32_t kReleaseStepRecords = 512;

enum class FullRingPolicy : uint32_t { kDrop = 0, kWait = 1 };

// Session start (kWait only when a drain thread runs; the counters below restart), session end and
// the fork child (kDrop).
void SetFullRingPolicy(FullRingPolicy policy);
FullRingPolicy CurrentFullRingPolicy();

// Application thread, out of line: BeginRecord's reservation of `n` slots failed. Under kWait,
// waits (bounded, see above) and retries; returns the reserved position when room was found.
// Otherwise counts the drop and returns kNoRoom (also for an `n` no ring can hold). Keeps errno.
inline constexpr uint64_t kNoRoom = ~uint64_t{0};
uint64_t ReserveWhenFull(ThreadBuffer* buffer, uint32_t n);

// Application thread, AcquireBufferSlow: no buffer was free. Under kWait, while some buffer is
// retired (its thread exited) and not yet freed, waits for the drain thread to free it (bounded as
// above; woken after each drain pass) and takes it: a thread per task, one alive at a time, lost
// 2-11 % of its records while exited threads' buffers waited for the 10 ms round (issue 28 item 5).
// nullptr when waiting cannot help (no retired buffer: the limit is live threads or the budget) or
// the policy is kDrop. Keeps errno.
ThreadBuffer* AcquireWhenNoneFree(RingPool* pool, uint32_t tid, const char* thread_name);
// Drain thread, at the end of every pass (after freeing retired buffers): wakes threads waiting in
// AcquireWhenNoneFree.
void DrainPassDone();

// Drain thread, at its start (its OS tid, so a waiting producer can tell a drain thread that waits
// for a CPU from a stopped one), and 0 when it ends.
void DrainThreadStarted(uint32_t tid);
// Drain thread: a sign of life (every few hundred records and every pass).
void DrainHeartbeat();
// Drain thread: some producer waits for room now. The drain thread then empties rings in slices of
// kDrainSliceRecords, round after round, so no waiting producer waits for every other ring to be
// emptied first (8 rings grown within 256 MiB hold up to 4 M records, ~150 ms of drain work).
bool ProducersWaiting();
inline constexpr uint64_t kDrainSliceRecords = 8192;
// Drain thread, right after ring.Release(): wakes the ring's producer when it waits.
void DrainReleasedRing(ThreadRing& ring);

// Counters for tests and the exit line: records that waited and found room, and waits given up.
struct FullRingStats {
  uint64_t waits_kept;      // records kept thanks to a wait
  uint64_t waits_dropped;   // waits that ended in a drop (heartbeat stopped or kMaxWaitNs)
  uint64_t wait_ns_total;   // time spent waiting by all producers
};
FullRingStats FullRingCounters();

}  // namespace gt
