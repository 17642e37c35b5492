// GPU-idle attribution (issue 18): for each GPU idle gap of at least AnalyzeOptions::gap_cause_min_ns,
// what the launching thread did while the GPU waited.
//
//  - the gap ends where the GPU's next work starts (a kernel, copy or set of the same process whose
//    start is the gap's end: gpu_time.cc ends a gap exactly at an activity's start); its
//    correlationId finds the CUDA API call that launched it (CUPTI_ACTIVITY_KIND_RUNTIME, same
//    process, not the eventClass-67 backtrace rows), whose globalTid is the launching thread;
//  - that thread's OS runtime calls overlapping the gap (OSRT_API, -t osrt), longest time inside
//    the gap first, at most kMaxOsCalls, each with the innermost frame of its OSRT_CALLCHAINS stack
//    when it has one (--osrt-backtrace-threshold);
//  - when the database has CPU samples (COMPOSITE_EVENTS + SAMPLING_CALLCHAINS, nsys's --sample),
//    the thread's samples inside the gap, grouped by their innermost frame (stackDepth 0), most
//    frequent first, at most kMaxFrames.
// Databases without these tables give gaps without causes (the table says what is missing).
//
// Called by RunAnalysis after the other passes (single-threaded); reads each database once more,
// read-only. Memory: the attributed gaps (at most kMaxCauseGaps) and their causes.
#pragma once

#include <cstdint>
#include <vector>

#include "schema/status.h"
#include "tools/analyze/analysis.h"
#include "tools/analyze/gpu_time.h"

namespace gt::analyze {

inline constexpr size_t kMaxOsCallsPerGap = 5;
inline constexpr size_t kMaxFramesPerGap = 5;

// Adds one rank's gaps to attribute (longest first overall, at most kMaxCauseGaps kept).
void AddCauseGaps(int32_t rank, int64_t global_pid, const std::vector<GpuGap>& gaps, Analysis* a);
// A note when more gaps qualified than were kept.
void NoteCauseGaps(const AnalyzeOptions& o, uint64_t gaps_seen, Analysis* a);
// Fills Analysis::gap_causes (launching thread, OS calls, sampled frames) from the databases.
Status AttributeGaps(const AnalyzeOptions& o, Analysis* a);

}  // namespace gt::analyze
