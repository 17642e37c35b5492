#include "tools/export/rank_tables.h"

namespace gt::exporter {
namespace {

constexpr const char* kRanksDdl = R"sql(CREATE TABLE GTRACE_RANKS (
    -- gtrace: one row per process (rank) of the export.
    globalPid                   INTEGER   NOT NULL,                    -- Serialized GlobalId.
    pid                         INTEGER   NOT NULL,
    rank                        INTEGER,                               -- Launcher rank (NULL: none detected).
    localRank                   INTEGER,                               -- Rank on its node (NULL: none detected).
    worldSize                   INTEGER,                               -- Launcher world size (NULL: none detected).
    rankSource                  TEXT,                                  -- Variable the rank came from (SLURM_PROCID, RANK, ...).
    hostName                    TEXT      NOT NULL,
    bootId                      TEXT      NOT NULL,                    -- Streams with one host name and boot id share CLOCK_MONOTONIC.
    hostIndex                   INTEGER   NOT NULL,                    -- Host (+boot) index: the hw byte of globalTid/globalPid.
    clockDomain                 INTEGER   NOT NULL,                    -- GTRACE_CLOCK_ALIGNMENT.domain.
    streamFile                  TEXT,                                  -- Input stream.
    startMonotonicNs            INTEGER   NOT NULL,                    -- Stream start clock pair: CLOCK_MONOTONIC (ns) ...
    startRealtimeNs             INTEGER   NOT NULL,                    -- ... and CLOCK_REALTIME (ns since the epoch).
    clockOffsetNs               INTEGER   NOT NULL,                    -- Session ns = stream clock ns + clockOffsetNs, before alignment.
    alignOffsetNs               INTEGER   NOT NULL,                    -- Applied correction: aligned = t + alignOffsetNs + (t - alignRefNs) * alignDriftPpb / 1e9.
    alignDriftPpb               INTEGER   NOT NULL,
    alignRefNs                  INTEGER   NOT NULL,
    alignMethod                 TEXT      NOT NULL,                    -- reference, collectives, clock-pairs, none, not-aligned.
    anchors                     INTEGER   NOT NULL,                    -- Collective ends of this process the alignment used.
    residualRmsNs               INTEGER,                               -- RMS of its aligned collective ends around each instance's end (ns).
    residualMaxNs               INTEGER,                               -- Largest of those deviations (ns).
    alignErrorNs                INTEGER,                               -- Statistical error of its clock domain's correction (ns).
    clockPairs                  INTEGER   NOT NULL,                    -- Clock pairs in the stream used for the drift fit (header + snapshots >= 0.9 s apart).
    realtimeDriftPpb            INTEGER,                               -- Slope of CLOCK_REALTIME - CLOCK_MONOTONIC over them (ns/s; nonzero: the wall clock was stepped or slewed apart); NULL under 3 pairs or 2 s.
    sessionId                   TEXT      NOT NULL,                    -- Shared by every database of one export.
    endReason                   TEXT      NOT NULL,                    -- How the stream ended: its close reason (exit, _exit, exec, abort, signal SIGSEGV, ...) or cut.
    endMonotonicNs              INTEGER                                -- CLOCK_MONOTONIC (ns) at the end marker, or of the last complete chunk when cut; NULL if none.
))sql";

constexpr const char* kAlignmentDdl = R"sql(CREATE TABLE GTRACE_CLOCK_ALIGNMENT (
    -- gtrace: one row per clock domain (host+boot, or process with --align-domain=rank).
    domain                      INTEGER   NOT NULL,
    hostName                    TEXT      NOT NULL,
    bootId                      TEXT      NOT NULL,
    hostIndex                   INTEGER   NOT NULL,
    globalPid                   INTEGER,                               -- Per-rank domains: the process.
    method                      TEXT      NOT NULL,                    -- reference, collectives, clock-pairs, none, not-aligned.
    alignedTo                   INTEGER   NOT NULL,                    -- Domain whose clock this one was aligned to.
    offsetNs                    INTEGER   NOT NULL,                    -- Correction at refNs (ns).
    driftPpb                    INTEGER   NOT NULL,                    -- Its growth (ns per s).
    refNs                       INTEGER   NOT NULL,                    -- Session ns, before alignment.
    driftEstimated              INTEGER   NOT NULL,                    -- 0: anchors spanned < 200 ms (or < 8 instances); drift not fitted.
    anchors                     INTEGER   NOT NULL,                    -- Collective ends in instances shared with other domains.
    outliers                    INTEGER   NOT NULL,                    -- Ends dropped as outliers (> 6 robust sigmas).
    instances                   INTEGER   NOT NULL,                    -- Collective instances shared with other domains.
    residualRmsNs               INTEGER,                               -- RMS of the domain's aligned ends around the instance ends.
    stderrNs                    INTEGER                                -- residualRmsNs / sqrt(instances).
))sql";

}  // namespace

Status CreateRankTables(SqliteDb& db) {
  Status st = db.Exec(kRanksDdl);
  if (!st.ok())
    return st;
  return db.Exec(kAlignmentDdl);
}

Status WriteRankTables(ExportContext& ctx, const SessionPlan& plan) {
  Status st = CreateRankTables(ctx.db());
  if (!st.ok())
    return st;
  Statement* ins = ctx.db().Prepare(
      "INSERT INTO GTRACE_RANKS (globalPid, pid, rank, localRank, worldSize, rankSource, hostName, bootId, hostIndex, "
      "clockDomain, streamFile, startMonotonicNs, startRealtimeNs, clockOffsetNs, alignOffsetNs, alignDriftPpb, "
      "alignRefNs, alignMethod, anchors, residualRmsNs, residualMaxNs, alignErrorNs, clockPairs, realtimeDriftPpb, "
      "sessionId, endReason, endMonotonicNs) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
      &st);
  if (ins == nullptr)
    return st;
  for (size_t i = 0; i < ctx.streams().size(); ++i) {
    const StreamContext& s = *ctx.streams()[i];
    const schema::StreamHeader& h = s.header;
    StreamPlacement def;
    const StreamPlacement& p = i < plan.streams.size() ? plan.streams[i] : def;
    ins->Int(1, s.GlobalPid()).Int(2, s.pid);
    if (h.rank() >= 0)
      ins->Int(3, h.rank());
    if (h.local_rank() >= 0)
      ins->Int(4, h.local_rank());
    if (h.world_size() >= 0)
      ins->Int(5, h.world_size());
    if (!h.rank_source().empty())
      ins->Text(6, h.rank_source());
    ins->Text(7, h.host_name()).Text(8, h.boot_id()).Int(9, s.hw_id).Int(10, p.clock_domain).Text(11, s.path);
    ins->Int(12, static_cast<int64_t>(h.start_clock().stream_clock_ns()));
    ins->Int(13, static_cast<int64_t>(h.start_clock().realtime_ns())).Int(14, s.offset_ns);
    ins->Int(15, s.correction.offset_ns).Int(16, s.correction.drift_ppb).Int(17, s.correction.ref_ns);
    ins->Text(18, plan.aligned ? p.method : "not-aligned").Int(19, static_cast<int64_t>(p.residual.anchors));
    if (p.residual.anchors > 0)
      ins->Int(20, p.residual.rms_ns).Int(21, p.residual.max_abs_ns);
    if (plan.aligned)
      ins->Int(22, p.align_error_ns);
    ins->Int(23, static_cast<int64_t>(s.clock_pairs.pairs));
    int64_t drift = 0;
    if (s.clock_pairs.DriftPpb(&drift))
      ins->Int(24, drift);
    ins->Text(25, plan.session_id);
    // The merge uses these to accept the two images of one pid around an exec (db_merge.cc, Plan).
    ins->Text(26, s.end_of_stream ? s.stats.close_reason() : std::string("cut"));
    uint64_t end_ns = s.end_of_stream ? s.stats.end_ns() : s.last_chunk_ns;
    if (end_ns != 0)
      ins->Int(27, static_cast<int64_t>(end_ns));
    if (!(st = ins->Run()).ok())
      return st;
  }
  Statement* dom = ctx.db().Prepare(
      "INSERT INTO GTRACE_CLOCK_ALIGNMENT (domain, hostName, bootId, hostIndex, globalPid, method, alignedTo, "
      "offsetNs, "
      "driftPpb, refNs, driftEstimated, anchors, outliers, instances, residualRmsNs, stderrNs) VALUES "
      "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
      &st);
  if (dom == nullptr)
    return st;
  for (size_t i = 0; i < plan.domains.size(); ++i) {
    const ClockDomain& d = plan.domains[i];
    const DomainAlignment& a = d.alignment;
    dom->Int(1, static_cast<int64_t>(i)).Text(2, d.host_name).Text(3, d.boot_id).Int(4, d.host_index);
    if (d.global_pid != 0)
      dom->Int(5, d.global_pid);
    dom->Text(6, plan.aligned ? a.method : "not-aligned").Int(7, a.aligned_to);
    dom->Int(8, a.correction.offset_ns).Int(9, a.correction.drift_ppb).Int(10, a.correction.ref_ns);
    dom->Int(11, a.drift_estimated ? 1 : 0).Int(12, static_cast<int64_t>(a.anchors));
    dom->Int(13, static_cast<int64_t>(a.outliers)).Int(14, static_cast<int64_t>(a.instances));
    if (a.anchors > 0)
      dom->Int(15, a.residual_rms_ns).Int(16, a.stderr_ns);
    if (!(st = dom->Run()).ok())
      return st;
  }
  return Status::Ok();
}

}  // namespace gt::exporter
