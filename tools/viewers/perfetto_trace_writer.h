// PerfettoTraceWriter: encodes Perfetto TracePackets (track descriptors, track events, counters,
// flows, interned names) with our ProtoWriter and streams them to an OutputFile. All packets go on
// one trusted sequence, so interning is per that sequence: the first packet clears the incremental
// state, and names, categories and annotation names are sent once, in the packet that first uses
// them. Names past the interning budget are written inline (bounded memory).
//
// Used by one thread; borrows the OutputFile.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "schema/proto_writer.h"
#include "tools/viewers/name_table.h"
#include "tools/viewers/output_file.h"

namespace gt::viewers {

// Flow ids of one slice (0 = none).
struct PerfettoFlows {
  uint64_t out = 0;          // flow_ids: this slice starts (or continues) a flow
  uint64_t terminating = 0;  // terminating_flow_ids: this slice ends one
};

class PerfettoTraceWriter {
 public:
  using Flows = PerfettoFlows;
  struct Arg {
    std::string_view name;
    int64_t int_value = 0;
    std::string_view string_value;
    bool is_string = false;
  };
  static Arg Int(std::string_view name, int64_t value) { return Arg{name, value, {}, false}; }
  static Arg Str(std::string_view name, std::string_view value) { return Arg{name, 0, value, true}; }

  static constexpr uint32_t kSequenceId = 1;

  explicit PerfettoTraceWriter(OutputFile* out, size_t name_budget = 1 << 16) : out_(out), names_(name_budget) {}
  PerfettoTraceWriter(const PerfettoTraceWriter&) = delete;
  PerfettoTraceWriter& operator=(const PerfettoTraceWriter&) = delete;

  // The first packet: maps the trace's time zero (BOOTTIME 0) to UTC so the UI can show wall time.
  void ClockSnapshot(int64_t utc_at_zero_ns);
  void ProcessTrack(uint64_t uuid, int32_t pid, std::string_view name, const std::vector<std::string>& labels);
  void ThreadTrack(uint64_t uuid, int32_t pid, int64_t tid, std::string_view name);
  // parent_uuid 0: a top-level track. sibling_rank >= 0 orders it under a parent with explicit order.
  void Track(uint64_t uuid,
             uint64_t parent_uuid,
             std::string_view name,
             std::string_view description = {},
             bool explicit_child_order = false,
             int32_t sibling_rank = -1);
  void CounterTrack(uint64_t uuid, uint64_t parent_uuid, std::string_view name, std::string_view unit_name);

  void SliceBegin(int64_t ts_ns,
                  uint64_t track,
                  std::string_view category,
                  std::string_view name,
                  const std::vector<Arg>& args,
                  Flows flows = {});
  void SliceEnd(int64_t ts_ns, uint64_t track);
  void Instant(int64_t ts_ns,
               uint64_t track,
               std::string_view category,
               std::string_view name,
               const std::vector<Arg>& args);
  void Counter(int64_t ts_ns, uint64_t track, int64_t value);

  // Writes what is buffered to the file (the caller commits the file).
  void Flush();
  uint64_t packets() const { return packets_; }

 private:
  void BeginPacket(bool has_timestamp, int64_t ts_ns, uint32_t sequence_flags);
  void EndPacket();
  void TrackEvent(int64_t ts_ns,
                  uint32_t type,
                  uint64_t track,
                  std::string_view category,
                  std::string_view name,
                  const std::vector<Arg>* args,
                  Flows flows);

  OutputFile* out_;
  ProtoWriter w_;
  NameTable names_;                      // event names (InternedData.event_names)
  NameTable categories_{1 << 12};        // InternedData.event_categories
  NameTable annotation_names_{1 << 12};  // InternedData.debug_annotation_names
  bool first_packet_ = true;
  uint64_t packets_ = 0;
};

}  // namespace gt::viewers
