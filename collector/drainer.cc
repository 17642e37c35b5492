#include "collector/drainer.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "collector/clock.h"
#include "collector/full_ring_wait.h"
#include "collector/schema_fields.h"
#include "collector/session_internal.h"
#include "collector/thread_names.h"

namespace gt {
namespace {

constexpr size_t kMaxChunkBodyBytes = 1u << 20;
constexpr uint64_t kThreadNameRecheckNs = 1000000000ull;
// A drain pass shorter than this is not reported as overhead (one every 10 ms otherwise).
constexpr uint64_t kDrainOverheadMinNs = 100000;

std::string ReadThreadName(uint32_t tid) {
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/self/task/%u/comm", tid);
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  char buf[64];
  ssize_t n = ::read(fd, buf, sizeof(buf) - 1);
  ::close(fd);
  if (n <= 0) return {};
  std::string name(buf, static_cast<size_t>(n));
  while (!name.empty() && name.back() == '\n') name.pop_back();
  return name;
}

}  // namespace

bool EmitThreadInfo(ChunkBuilder* chunk, uint32_t tid) {
  std::string name = ReadThreadName(tid);
  if (name.empty()) name = NotedThreadName(tid);  // the thread exited: the name it had when noted
  if (name.empty() || chunk->body().nesting_depth() != 0) return false;
  errno = 0;
  int nice = ::getpriority(PRIO_PROCESS, tid);
  if (errno != 0) nice = 0;
  // Chunk.thread is a singular field: each announcement gets a chunk of its own.
  chunk->End();
  chunk->Begin(0, 0, 0);
  ProtoWriter& w = chunk->body();
  w.BeginNested(field::chunk::kThread);
  w.Varint(field::thread_info::kTid, tid);
  w.String(field::thread_info::kName, name);
  w.Int(field::thread_info::kNice, nice);
  w.EndNested();
  chunk->End();
  chunk->Begin(0, 0, 0);
  return true;
}

Drainer::Drainer(RingPool* pool, uint64_t session_id)
    : pool_(pool), session_id_(session_id), chunk_(&interner_) {
  tracks_.resize(pool_->count());
  heads_.resize(pool_->count());
  scratch_.resize(kMaxExtSlots + 1);
  chunk_.output()->reserve(1u << 20);
}

void Drainer::DrainOnce(bool final) {
  const uint64_t pass_start_ns = NowNs();
  const uint64_t pass_start = StreamNow();
  DrainHeartbeat();  // producers waiting on a full ring see the drain thread alive
  EmitOverheads();
  // Heads first, registrations second, records third: every registration a record depends on was
  // made before the record was committed, so definitions land in the file before their use.
  order_.clear();
  for (uint32_t i = 0; i < pool_->count(); ++i) {
    ThreadBuffer* b = pool_->at(i);
    bool is_free = b->state.load(std::memory_order_acquire) == static_cast<uint32_t>(BufferState::kFree);
    heads_[i] = is_free ? 0 : b->ring.ConsumerHead();
    if (!is_free) order_.push_back(i);
  }
  // Fullest rings first: they are the ones about to drop (issue 20).
  std::stable_sort(order_.begin(), order_.end(), [this](uint32_t a, uint32_t b) {
    return heads_[a] - pool_->at(a)->ring.ConsumerTail() > heads_[b] - pool_->at(b)->ring.ConsumerTail();
  });
  int n_emitters = internal::EmitterCount();
  if (n_emitters > 0) {
    chunk_.Begin(0, 0, 0);
    for (int i = 0; i < n_emitters; ++i) {
      if (EmitFn fn = internal::EmitterAt(i)) fn(&chunk_, session_id_);
    }
    chunk_.End();
  }
  // While a producer waits for room (GTRACE_FULL_RING=wait), owned rings are drained in slices,
  // round after round up to their snapshot heads, so each waiting producer gets room within a
  // round instead of after every fuller ring was emptied.
  sliced_.clear();
  for (uint32_t i : order_) {
    ThreadBuffer* b = pool_->at(i);
    uint32_t state = b->state.load(std::memory_order_acquire);
    if (state == static_cast<uint32_t>(BufferState::kFree)) continue;
    if (state == static_cast<uint32_t>(BufferState::kOwned)) {
      MaybeGrow(i, b);
      if (!DrainBuffer(i, heads_[i], final, ProducersWaiting() ? kDrainSliceRecords : UINT64_MAX)) sliced_.push_back(i);
      continue;
    }
    DrainBuffer(i, heads_[i], final);
    // The owner is gone: take whatever it committed after the snapshot too, then free it.
    DrainBuffer(i, b->ring.ConsumerHead(), final);
    tracks_[i].serial = 0;
    pool_->Free(b);
  }
  // Only the drain thread frees a buffer, so a ring sliced above is still its owner's (perhaps
  // retired by now: the next pass frees it).
  while (!sliced_.empty()) {
    size_t kept = 0;
    for (uint32_t i : sliced_) {
      if (!DrainBuffer(i, heads_[i], final, ProducersWaiting() ? kDrainSliceRecords : UINT64_MAX)) sliced_[kept++] = i;
    }
    sliced_.resize(kept);
  }
  pool_->RefillSpare();
  pool_->ReleaseIdleBlocks(NowNs());
  DrainPassDone();
  EmitNoBufferDrops(internal::NoBufferDrops());
  if (NowNs() - pass_start_ns >= kDrainOverheadMinNs)
    NoteOverhead(field::profiler_overhead::kKindDrain, pass_start, StreamNow());
}

void Drainer::NoteOverhead(uint32_t kind, uint64_t start_ns, uint64_t end_ns) {
  if (pending_overheads_ == kMaxPendingOverheads) {
    ++overheads_lost_;
    return;
  }
  overheads_[pending_overheads_++] = {start_ns, end_ns, kind, static_cast<uint32_t>(::syscall(SYS_gettid))};
}

void Drainer::EmitOverheads() {
  if (pending_overheads_ == 0) return;
  chunk_.Begin(0, 0, 0);
  for (uint32_t i = 0; i < pending_overheads_; ++i) {
    const Overhead& o = overheads_[i];
    ProtoWriter& w = chunk_.body();
    w.BeginNested(field::chunk::kProfilerOverheads);
    w.Varint(field::profiler_overhead::kStartNs, o.start_ns);
    w.Varint(field::profiler_overhead::kEndNs, o.end_ns);
    w.Varint(field::profiler_overhead::kKind, o.kind);
    w.Varint(field::profiler_overhead::kTid, o.tid);
    w.EndNested();
  }
  chunk_.End();
  pending_overheads_ = 0;
}

void Drainer::MaybeGrow(uint32_t index, ThreadBuffer* b) {
  ThreadRing& ring = b->ring;
  BufferTrack& t = tracks_[index];
  uint64_t dropped = ring.dropped();
  if (t.serial != b->serial) {  // a new owner starts without history
    t.pressured = false;
    t.dropped_at_growth_check = b->dropped_base;
  }
  // Pressure: the ring ran full (its producer took the spare or an offer, or dropped) or dropped,
  // at least once: from then on it always has a bigger segment waiting, as before (a burst
  // needs the room at once: without it, 2 M pairs at default settings lost up to 12 %). A poke
  // alone is not pressure: a ring this thread drains before it runs full keeps wrapping over
  // storage that is already faulted in, where a new segment would make the producer fault in
  // every page again (2-3 us per 4 KiB page on the build VM, more than the records on it cost;
  // bench/results/2026-11-26-nvtx-pair-floor.md).
  uint64_t newest = ring.ConsumerNewestCapacity();
  if (ring.TakeRanFull() || dropped != t.dropped_at_growth_check) t.pressured = true;
  t.dropped_at_growth_check = dropped;
  if (!t.pressured || ring.HasOffer()) return;
  uint64_t max_slots = pool_->max_ring_bytes() / kSlotBytes;
  uint64_t want = newest * 4 > max_slots ? max_slots : newest * 4;
  // Budget permitting; a smaller step when four times is too much. At the largest size the chain
  // goes on with segments of that size or smaller, while older ones are still being drained.
  for (; want >= newest / 4 && want >= 2; want /= 2) {
    RingSegment* segment = pool_->AllocSegment(static_cast<uint32_t>(want));
    if (segment == nullptr) continue;
    if (ring.Offer(segment)) {
      ++rings_grown_;
    } else {
      pool_->FreeSegment(segment);
    }
    return;
  }
}

void Drainer::FreeLeftSegments(ThreadRing& ring, uint64_t tail) {
  while (RingSegment* old = ring.ConsumerAdvance(tail)) pool_->FreeSegment(old);
}

void Drainer::MaybeEmitThreadInfo(uint32_t index, ThreadBuffer* b, bool force_read) {
  BufferTrack& t = tracks_[index];
  bool is_new = t.serial != b->serial;
  uint64_t now = NowNs();
  std::string name;
  if (is_new) {
    t.serial = b->serial;
    t.dropped_reported = b->dropped_base;  // drops before this owner belong to earlier owners
    t.name_checked_ns = now;
    ++threads_seen_;
    name = b->name_at_acquire;
    std::string live = ReadThreadName(b->tid);
    if (!live.empty()) name = live;
  } else if (force_read || now - t.name_checked_ns > kThreadNameRecheckNs) {
    t.name_checked_ns = now;
    name = ReadThreadName(b->tid);
    if (name.empty() || name == t.name) return;
  } else {
    return;
  }
  t.name = name;
  errno = 0;
  int nice = ::getpriority(PRIO_PROCESS, b->tid);
  if (errno != 0) nice = 0;
  ProtoWriter& w = chunk_.body();
  w.BeginNested(field::chunk::kThread);
  w.Varint(field::thread_info::kTid, b->tid);
  w.String(field::thread_info::kName, name);
  w.Int(field::thread_info::kNice, nice);
  w.EndNested();
}

bool Drainer::DrainBuffer(uint32_t index, uint64_t head, bool final, uint64_t max_records) {
  ThreadBuffer* b = pool_->at(index);
  ThreadRing& ring = b->ring;
  uint64_t tail = ring.ConsumerTail();
  FreeLeftSegments(ring, tail);
  bool new_owner = tracks_[index].serial != b->serial;
  uint64_t dropped_now = ring.dropped();
  bool has_drops = !new_owner && dropped_now != tracks_[index].dropped_reported;
  if (tail == head && !new_owner && !has_drops &&
      NowNs() - tracks_[index].name_checked_ns <= kThreadNameRecheckNs) {
    ring.ClearPoked();
    return true;
  }
  uint64_t base = 0;
  if (tail < head) base = reinterpret_cast<const RecordHeader*>(ring.ConsumerAt(tail)->bytes)->ts_ns;
  chunk_.Begin(b->serial, b->tid, base);
  MaybeEmitThreadInfo(index, b, final);
  uint32_t since_step = 0;
  uint64_t records = 0;
  bool past_deadline = PastDeadline();
  // Past the end's deadline the rest of the ring is counted, not read: by its slots, one per record
  // except a record with a long message (an upper bound, and O(1): reading every header of a 2 M
  // record backlog with 1/65 of a CPU took 0.8 s, as long as decoding it).
  uint64_t cut = 0;
  while (tail < head && records++ < max_records) {
    if (past_deadline) {
      cut += head - tail;
      tail = head;
      break;
    }
    FreeLeftSegments(ring, tail);  // the producer moved to a larger segment at `tail`
    const Slot* first = ring.ConsumerAt(tail);
    const auto* h = reinterpret_cast<const RecordHeader*>(first->bytes);
    uint64_t n = 1u + h->ext_slots;
    if (h->type == kRecordInvalid || h->type >= kRecordTypeCount || tail + n > head) {
      // Cannot happen with a correct producer; skip the rest rather than decode garbage.
      ++corrupt_records_;
      tail = head;
      break;
    }
    if (h->type != kRecordPadding) {
      RecordDecodeFn fn = internal::DecoderFor(h->type);
      if (fn != nullptr) {
        // A record that does not wrap around the end of the storage is decoded where it lies (the
        // producer does not reuse its slots before Release below); only a wrapped one is copied.
        const unsigned char* bytes = first->bytes;
        if (!ring.ConsumerContiguous(tail, n)) {
          ring.CopyOut(tail, n, scratch_.data());
          bytes = scratch_[0].bytes;
        }
        RecordView view{reinterpret_cast<const RecordHeader*>(bytes), bytes, n * kSlotBytes, b->tid};
        fn(view, &chunk_);
        chunk_.CountRecord();
      }
    }
    tail += n;
    if (++since_step == kReleaseStepRecords) {
      // A sign of life every few hundred records, and room at once for a producer that waits on
      // this ring (GTRACE_FULL_RING=wait): it resumes while the rest is being drained.
      since_step = 0;
      past_deadline = past_deadline || PastDeadline();
      DrainHeartbeat();
      if (ring.ProducerWaiting()) {
        ring.Release(tail);
        DrainReleasedRing(ring);
      }
    }
    if (chunk_.body().size() > kMaxChunkBodyBytes) {
      ring.Release(tail);  // free ring space early on big drains
      DrainReleasedRing(ring);
      chunk_.SplitIfLarger(kMaxChunkBodyBytes);
    }
  }
  ring.Release(tail);
  DrainReleasedRing(ring);
  FreeLeftSegments(ring, tail);
  bool reached = tail >= head;
  if (reached) ring.ClearPoked();  // emptied up to the snapshot: the next crossing may poke again
  if (cut > 0) {
    ProtoWriter& w = chunk_.body();
    w.BeginNested(field::chunk::kDrops);
    w.Varint(field::drop_report::kSource, field::enums::kDropProcessEnd);
    w.Varint(field::drop_report::kTid, b->tid);
    w.Varint(field::drop_report::kDroppedRecords, cut);
    w.Varint(field::drop_report::kTsNs, StreamNow());
    w.EndNested();
    dropped_total_ += cut;
    end_drops_ += cut;
  }
  dropped_now = ring.dropped();
  BufferTrack& t = tracks_[index];
  if (dropped_now != t.dropped_reported) {
    ProtoWriter& w = chunk_.body();
    w.BeginNested(field::chunk::kDrops);
    w.Varint(field::drop_report::kSource, field::enums::kDropThreadBuffer);
    w.Varint(field::drop_report::kTid, b->tid);
    w.Varint(field::drop_report::kDroppedRecords, dropped_now - t.dropped_reported);
    w.Varint(field::drop_report::kTsNs, StreamNow());
    w.EndNested();
    dropped_total_ += dropped_now - t.dropped_reported;
    thread_buffer_drops_ += dropped_now - t.dropped_reported;
    t.dropped_reported = dropped_now;
  }
  chunk_.End();
  return reached;
}

void Drainer::EmitClockSnapshot() {
  ClockPair pair = ReadClockPair();
  chunk_.Begin(0, 0, 0);
  ProtoWriter& w = chunk_.body();
  w.BeginNested(field::chunk::kClock);
  w.Varint(field::clock_snapshot::kStreamClockNs, pair.stream_ns);
  w.Varint(field::clock_snapshot::kRealtimeNs, pair.realtime_ns);
  w.Varint(field::clock_snapshot::kUncertaintyNs, pair.uncertainty_ns);
  if (StreamClockIsTicks()) w.Varint(field::clock_snapshot::kMonotonicNs, pair.monotonic_ns);
  w.EndNested();
  chunk_.End();
}

void Drainer::EmitDiagnostic(uint64_t ts_ns, uint32_t severity, const std::string& source, const std::string& text) {
  chunk_.Begin(0, 0, 0);
  ProtoWriter& w = chunk_.body();
  w.BeginNested(field::chunk::kDiagnostics);
  w.Varint(field::diagnostic::kTsNs, ts_ns);
  w.Varint(field::diagnostic::kSeverity, severity);
  w.String(field::diagnostic::kSource, source);
  w.String(field::diagnostic::kText, text);
  w.EndNested();
  chunk_.End();
}

void Drainer::EmitNoBufferDrops(uint64_t total_dropped) {
  if (total_dropped == no_buffer_reported_) return;
  chunk_.Begin(0, 0, 0);
  ProtoWriter& w = chunk_.body();
  w.BeginNested(field::chunk::kDrops);
  w.Varint(field::drop_report::kSource, field::enums::kDropNoBuffer);
  w.Varint(field::drop_report::kDroppedRecords, total_dropped - no_buffer_reported_);
  w.Varint(field::drop_report::kTsNs, StreamNow());
  w.EndNested();
  chunk_.End();
  dropped_total_ += total_dropped - no_buffer_reported_;
  no_buffer_reported_ = total_dropped;
}

void Drainer::EmitWriterDrops(uint64_t records) {
  if (records == 0) return;
  chunk_.Begin(0, 0, 0);
  ProtoWriter& w = chunk_.body();
  w.BeginNested(field::chunk::kDrops);
  w.Varint(field::drop_report::kSource, field::enums::kDropWriter);
  w.Varint(field::drop_report::kDroppedRecords, records);
  w.Varint(field::drop_report::kTsNs, StreamNow());
  w.EndNested();
  chunk_.End();
  dropped_total_ += records;
  writer_drops_ += records;
}

void Drainer::EmitEnd(const std::string& reason, uint32_t kind, uint32_t signal, uint64_t bytes_written_before) {
  chunk_.Begin(0, 0, 0);
  ProtoWriter& w = chunk_.body();
  w.BeginNested(field::chunk::kStats);
  w.Varint(field::stream_stats::kRecordsWritten, records_written());
  w.Varint(field::stream_stats::kRecordsDropped, dropped_total_);
  w.Varint(field::stream_stats::kChunksWritten, chunk_.chunks_total());
  w.Varint(field::stream_stats::kBytesWritten, bytes_written_before);
  w.Varint(field::stream_stats::kThreadsSeen, threads_seen_);
  w.Varint(field::stream_stats::kEndNs, StreamNow());
  w.String(field::stream_stats::kCloseReason, reason);
  if (kind != 0) w.Varint(field::stream_stats::kEndReason, kind);
  if (signal != 0) w.Varint(field::stream_stats::kEndSignal, signal);
  w.EndNested();
  w.Bool(field::chunk::kEndOfStream, true);
  chunk_.End();
}

}  // namespace gt
