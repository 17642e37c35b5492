// Drainer: the drain thread's work for one session. Each cycle it snapshots every ring's head,
// runs the module emitters (registrations, CUPTI buffers), decodes the snapshot's records into
// chunks, reports drops and thread names, and hands finished chunk bytes to the writer.
// Owned by the Session; every method runs on the drain thread (or, after it stopped, on the
// thread that ends the session).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "collector/chunk_builder.h"
#include "collector/clock.h"
#include "collector/ring_pool.h"
#include "collector/session.h"
#include "collector/string_interner.h"

namespace gt {

class Drainer {
 public:
  Drainer(RingPool* pool, uint64_t session_id);
  Drainer(const Drainer&) = delete;
  Drainer& operator=(const Drainer&) = delete;

  // One pass over everything. `final` also drains retired-and-owned buffers completely and
  // reports per-thread totals.
  void DrainOnce(bool final);
  // Process-level chunk with a clock snapshot (every second, and at start).
  void EmitClockSnapshot();
  void EmitDiagnostic(uint64_t ts_ns, uint32_t severity, const std::string& source, const std::string& text);
  void EmitNoBufferDrops(uint64_t total_dropped);
  void EmitWriterDrops(uint64_t records);
  // gtrace's own work (field::profiler_overhead::kKind*, stream-clock times), done by the calling
  // thread: kept (at most kMaxPendingOverheads, more are dropped and counted in overheads_lost) and
  // sent at the next DrainOnce.
  void NoteOverhead(uint32_t kind, uint64_t start_ns, uint64_t end_ns);
  // The process is ending (issue 28 item 3): records still in the rings at CLOCK_MONOTONIC
  // `deadline_ns` are counted (DROP_SOURCE_PROCESS_END, by ring slots), not decoded, so threads that go on running
  // (and take the drain thread's CPU) cannot hold up the end. 0: no deadline. Any thread (the one
  // that ends the session, a signal handler): a pass already under way sees it within 512 records.
  void SetDeadline(uint64_t deadline_ns) { deadline_ns_.store(deadline_ns, std::memory_order_relaxed); }
  bool PastDeadline() const {
    uint64_t d = deadline_ns_.load(std::memory_order_relaxed);
    return d != 0 && NowNs() >= d;
  }
  uint64_t overheads_lost() const { return overheads_lost_; }
  // An end-of-stream chunk: `reason` as text and as field::enums::kEnd* `kind` (0: not set) with
  // `signal` for kEndSignal.
  void EmitEnd(const std::string& reason, uint32_t kind, uint32_t signal, uint64_t bytes_written_before);

  std::string* output() { return chunk_.output(); }
  uint64_t records_total() const { return chunk_.records_total(); }
  uint64_t records_dropped_total() const { return dropped_total_; }
  // The parts of records_dropped_total() by cause.
  uint64_t thread_buffer_drops() const { return thread_buffer_drops_; }
  uint64_t no_buffer_drops() const { return no_buffer_reported_; }
  uint64_t writer_drops() const { return writer_drops_; }
  uint64_t end_drops() const { return end_drops_; }
  // Records in the stream: decoded, less those whose bytes the writer could not write.
  uint64_t records_written() const { return chunk_.records_total() - writer_drops_; }
  uint64_t rings_grown() const { return rings_grown_; }
  uint64_t chunks_total() const { return chunk_.chunks_total(); }
  uint32_t threads_seen() const { return threads_seen_; }
  uint64_t intern_misuse() const { return chunk_.intern_misuse(); }
  uint64_t corrupt_records() const { return corrupt_records_; }

 private:
  struct BufferTrack {
    uint64_t serial = 0;  // owner we last reported on (0: none yet)
    uint64_t dropped_reported = 0;
    std::string name;
    uint64_t name_checked_ns = 0;
    uint64_t dropped_at_growth_check = 0;  // ring.dropped() when growth was last considered
    bool pressured = false;                // this owner's ring ran full or dropped at least once
  };
  // Decodes ring `index` up to `head_snapshot`, at most `max_records` records; true when it got there.
  bool DrainBuffer(uint32_t index, uint64_t head_snapshot, bool final, uint64_t max_records = UINT64_MAX);
  void MaybeEmitThreadInfo(uint32_t index, ThreadBuffer* b, bool force_read);
  // A ring under pressure (it ran full or dropped at least once) always has a segment four times
  // the size of its newest one waiting, within the pool's budget: the producer moves to it at its next crossing without waiting for this thread
  // to be scheduled (an offer costs address space and budget, not resident memory, until it is
  // used).
  void MaybeGrow(uint32_t index, ThreadBuffer* b);
  void FreeLeftSegments(ThreadRing& ring, uint64_t tail);
  void EmitOverheads();

  struct Overhead {
    uint64_t start_ns, end_ns;
    uint32_t kind, tid;
  };
  static constexpr uint32_t kMaxPendingOverheads = 64;

  RingPool* pool_;
  uint64_t session_id_;
  StringInterner interner_;
  ChunkBuilder chunk_;
  std::vector<BufferTrack> tracks_;
  std::vector<uint64_t> heads_;
  std::vector<uint32_t> order_;  // buffer indexes, fullest ring first
  std::vector<uint32_t> sliced_;  // owned rings not yet drained to their snapshot head this pass
  std::vector<Slot> scratch_;  // contiguous copy of a record that wraps around its ring
  uint64_t dropped_total_ = 0;
  uint64_t thread_buffer_drops_ = 0;
  uint64_t writer_drops_ = 0;
  uint64_t end_drops_ = 0;
  std::atomic<uint64_t> deadline_ns_{0};
  uint64_t rings_grown_ = 0;
  uint64_t no_buffer_reported_ = 0;
  uint32_t threads_seen_ = 0;
  uint64_t corrupt_records_ = 0;
  Overhead overheads_[kMaxPendingOverheads] = {};
  uint32_t pending_overheads_ = 0;
  uint64_t overheads_lost_ = 0;
};

}  // namespace gt
