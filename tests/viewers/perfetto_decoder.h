// Decodes a .pftrace with the protoc classes of tests/viewers/protos/perfetto_subset.proto and
// rebuilds what a viewer would show: tracks, complete slices (BEGIN/END matched per track),
// instants, counters, flows, with interned names resolved. Records every structural problem it
// finds (unknown fields, unresolved iids, unmatched ENDs, time going backwards, ...) in errors.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace gt::viewers::testing {

struct DecodedTrack {
  uint64_t uuid = 0;
  uint64_t parent_uuid = 0;
  std::string name;  // TrackDescriptor.name, or process/thread name
  int kind = 0;      // 0 plain, 1 process, 2 thread, 3 counter
  int64_t pid = 0, tid = 0;
  std::vector<std::string> labels;
};

struct DecodedSlice {
  uint64_t track = 0;
  std::string name, category;
  int64_t start_ns = 0, end_ns = 0;
  std::map<std::string, std::string> args;  // values as text
  std::vector<uint64_t> flow_ids, terminating_flow_ids;
};

struct DecodedTrace {
  std::vector<std::string> errors;
  size_t packets = 0, clock_snapshots = 0, descriptors = 0, begins = 0, ends = 0, instants_count = 0,
         counters_count = 0;
  size_t interned_names = 0;
  int64_t utc_at_zero_ns = -1;
  std::map<uint64_t, DecodedTrack> tracks;
  std::vector<DecodedSlice> slices;  // in BEGIN order
  std::vector<DecodedSlice> instants;
  std::vector<std::pair<uint64_t, std::pair<int64_t, int64_t>>> counters;  // track, (ts, value)

  // Tracks whose name is `name`; children of `parent` when parent != 0.
  std::vector<uint64_t> TracksNamed(const std::string& name, uint64_t parent = 0) const;
  uint64_t ProcessTrack(int64_t pid) const;              // 0 if none
  uint64_t ThreadTrack(int64_t pid, int64_t tid) const;  // 0 if none
  std::vector<const DecodedSlice*> SlicesOn(uint64_t track) const;
};

DecodedTrace DecodePerfetto(const std::string& bytes);

}  // namespace gt::viewers::testing
