// End to end without a GPU: the fake NCCL host (tests/fakes) runs under LD_PRELOAD=libgtrace.so and
// loads the plugin the way NCCL does (NCCL_PROFILER_PLUGIN, set by the preload constructor; dlopen;
// dlsym of ncclProfiler_v6/_v5/_v4); the stream goes through `gtrace export`; SQL asserts the rows
// of our GTRACE_NCCL_* tables, the NVTX ranges in domain "NCCL" with NCCL's payload-schema rows,
// and `gtrace stats --report nccl_sum` prints exact values.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "tests/common/test_util.h"

namespace gt::test {
namespace {

struct Traced {
  RunResult run;
  std::string db;
  RunResult exported;
};

std::string FakeHost() { return SamplePath("fake_nccl_host"); }

// Runs the fake host with `args` under preload, exports the stream to dir/out.sqlite.
Traced RunAndExport(const TempDir& dir, const std::vector<std::string>& args,
                    const std::map<std::string, std::string>& env = {}) {
  Traced t;
  RunOptions o = TracedRun(dir);
  for (const auto& [k, v] : env) o.env[k] = v;
  std::vector<std::string> argv = {FakeHost()};
  argv.insert(argv.end(), args.begin(), args.end());
  t.run = gt::test::RunProgram(argv, o);
  std::vector<std::string> streams = dir.Find(".gtrace");
  if (streams.size() != 1) return t;
  t.db = dir.File("out.sqlite");
  t.exported = gt::test::RunProgram({CliPath(), "export", "-o", t.db, streams[0]});
  return t;
}

std::vector<std::string> Q(const std::string& db, const std::string& sql) { return Db(db).Rows(sql); }
int64_t I(const std::string& db, const std::string& sql) { return Db(db).Int(sql).value_or(-999); }

TEST(NcclPlugin, V5CollectivesEndToEnd) {
  TempDir dir;
  Traced t = RunAndExport(dir, {"--nccl", "22809", "--scenario", "basic"});
  ASSERT_EQ(t.run.exit_code, 0) << t.run.err;
  EXPECT_EQ(t.run.out, "abi=5 mask=0x7f47 null_handles=0\n");
  EXPECT_EQ(t.run.err, "");
  ASSERT_EQ(t.exported.exit_code, 0) << t.exported.err;
  const std::string& db = t.db;

  EXPECT_EQ(Q(db, "SELECT commIdHex, commName, nNodes, nRanks, rank, pluginVersion, activationMask, "
                  "finalizeTime > initTime, globalTid = globalPid + (globalPid >> 24 & 0xFFFFFF) "
                  "FROM GTRACE_NCCL_COMMUNICATORS"),
            std::vector<std::string>({"0x0000000000001111|world|1|4|1|5|32583|1|1"}));

  // One row per operation, as the application called it, with exact GPU time from the channels.
  EXPECT_EQ(Q(db, "SELECT kind, func, commId, rank, nRanks, seqNumber, count, datatype, typeSize, messageBytes, "
                  "algBytes, root, peer, algo, proto, nChannels, nWarps, kernelChannels, gpuEnd - gpuStart, "
                  "graphCaptured FROM GTRACE_NCCL_OPERATIONS ORDER BY enqueueStart"),
            std::vector<std::string>({
                "Coll|AllReduce|4369|1|4|0|262144|ncclFloat32|4|1048576|1048576|0|NULL|RING|SIMPLE|2|16|2|100000|0",
                "Coll|AllReduce|4369|1|4|1|262144|ncclFloat32|4|1048576|1048576|0|NULL|RING|SIMPLE|2|16|2|120000|0",
                "Coll|AllGather|4369|1|4|0|65536|ncclFloat32|4|262144|1048576|0|NULL|RING|SIMPLE|2|16|2|80000|0",
                "Coll|ReduceScatter|4369|1|4|0|65536|ncclFloat32|4|262144|1048576|0|NULL|RING|SIMPLE|2|16|2|60000|0",
                "Coll|Broadcast|4369|1|4|0|1024|ncclFloat64|8|8192|8192|2|NULL|TREE|LL|1|16|1|10000|0",
                "P2p|Send|4369|1|4|NULL|4096|ncclFloat32|4|16384|16384|NULL|2|NULL|NULL|1|NULL|1|30000|0",
                "P2p|Recv|4369|1|4|NULL|4096|ncclFloat32|4|16384|16384|NULL|0|NULL|NULL|1|NULL|1|30000|0",
            }));
  // Buffer sizes; no reduction operation without NCCL's NVTX payloads (the plugin ABI has none).
  EXPECT_EQ(Q(db, "SELECT func, sendBytes, recvBytes, redOp FROM GTRACE_NCCL_OPERATIONS ORDER BY enqueueStart"),
            std::vector<std::string>({"AllReduce|1048576|1048576|NULL", "AllReduce|1048576|1048576|NULL",
                                      "AllGather|262144|1048576|NULL", "ReduceScatter|1048576|262144|NULL",
                                      "Broadcast|8192|8192|NULL", "Send|16384|NULL|NULL", "Recv|NULL|16384|NULL"}));
  // NCCL's own view of AllGather/Broadcast: count in bytes of ncclInt8 (kept in GTRACE_NCCL_EVENTS).
  EXPECT_EQ(Q(db, "SELECT func, datatype, count FROM GTRACE_NCCL_EVENTS WHERE eventType = 'Coll' AND "
                  "func IN ('AllGather', 'Broadcast') ORDER BY start"),
            std::vector<std::string>({"AllGather|ncclInt8|262144", "Broadcast|ncclInt8|8192"}));
  EXPECT_EQ(Q(db, "SELECT eventType, count(*) FROM GTRACE_NCCL_EVENTS GROUP BY 1 ORDER BY 1"),
            std::vector<std::string>({"Coll|5", "CollApi|5", "Group|6", "GroupApi|6", "KernelCh|11", "KernelLaunch|6",
                                      "P2p|2", "P2pApi|2"}));
  // The hierarchy: GroupApi -> CollApi -> Coll -> KernelCh, Coll.groupId -> Group, KernelLaunch -> GroupApi.
  EXPECT_EQ(I(db, "SELECT count(*) FROM GTRACE_NCCL_EVENTS c JOIN GTRACE_NCCL_EVENTS a ON a.eventId = c.parentId "
                  "JOIN GTRACE_NCCL_EVENTS g ON g.eventId = a.parentId JOIN GTRACE_NCCL_EVENTS p ON p.eventId = c.groupId "
                  "WHERE c.eventType IN ('Coll', 'P2p') AND a.eventType IN ('CollApi', 'P2pApi') AND "
                  "g.eventType = 'GroupApi' AND p.eventType = 'Group'"),
            7);
  EXPECT_EQ(I(db, "SELECT count(*) FROM GTRACE_NCCL_EVENTS k JOIN GTRACE_NCCL_EVENTS c ON c.eventId = k.parentId "
                  "WHERE k.eventType = 'KernelCh' AND c.eventType IN ('Coll', 'P2p')"),
            11);
  EXPECT_EQ(I(db, "SELECT count(*) FROM GTRACE_NCCL_EVENTS k JOIN GTRACE_NCCL_EVENTS g ON g.eventId = k.parentId "
                  "WHERE k.eventType = 'KernelLaunch' AND g.eventType = 'GroupApi'"),
            6);
  // Kernel channels start after their Coll was enqueued-and-stopped or not: either way the GPU times
  // are causal: after the API call, before the proxy's observation; channels run on the proxy thread.
  EXPECT_EQ(I(db, "SELECT count(*) FROM GTRACE_NCCL_EVENTS WHERE eventType = 'KernelCh' AND "
                  "(gpuStart > start OR gpuEnd > end OR gpuEnd - gpuStart != gpuEndRaw - gpuStartRaw)"),
            0);
  EXPECT_EQ(I(db, "SELECT count(*) FROM GTRACE_NCCL_OPERATIONS WHERE NOT (apiStart <= apiEnd AND apiEnd <= enqueueStart "
                  "AND enqueueStart <= enqueueEnd AND apiStart <= gpuStart)"),
            0);
  EXPECT_EQ(I(db, "SELECT count(DISTINCT k.globalTid) FROM GTRACE_NCCL_EVENTS k, GTRACE_NCCL_EVENTS c "
                  "WHERE k.eventType = 'KernelCh' AND c.eventType = 'Coll' AND k.globalTid != c.globalTid"),
            1);
  EXPECT_EQ(Q(db, "SELECT eventId, state, stateName FROM GTRACE_NCCL_EVENT_STATES WHERE eventId = "
                  "(SELECT min(eventId) FROM GTRACE_NCCL_EVENTS WHERE eventType = 'GroupApi') ORDER BY timestamp")
                .size(),
            2u);
  EXPECT_EQ(Q(db, "SELECT DISTINCT stateName FROM GTRACE_NCCL_EVENT_STATES ORDER BY 1"),
            std::vector<std::string>({"GroupEndApiStart", "GroupStartApiStop"}));
  EXPECT_EQ(Q(db, "SELECT count(*), min(method IN ('base', 'upper-bound')), sum(samples) FROM GTRACE_NCCL_GPU_CLOCK"),
            std::vector<std::string>({"1|1|33"}));
  EXPECT_EQ(I(db, "SELECT sum(droppedEvents) FROM GTRACE_NCCL_POOLS"), 0);

  // nsys's view: NCCL API calls as NVTX push/pop ranges in domain "NCCL" (no NCCL NVTX in this run).
  EXPECT_EQ(Q(db, "SELECT eventType, text, domainId FROM NVTX_EVENTS WHERE eventType = 75"),
            std::vector<std::string>({"75|NCCL|1"}));
  EXPECT_EQ(Q(db, "SELECT s.value, e.domainId, e.text IS NULL, e.\"end\" > e.start FROM NVTX_EVENTS e "
                  "JOIN StringIds s ON s.id = e.textId WHERE e.eventType = 59 ORDER BY e.start"),
            std::vector<std::string>({"ncclAllReduce|1|1|1", "ncclAllReduce|1|1|1", "ncclAllGather|1|1|1",
                                      "ncclReduceScatter|1|1|1", "ncclBroadcast|1|1|1", "ncclSend|1|1|1",
                                      "ncclRecv|1|1|1", "ncclGroupEnd|1|1|1"}));
  // The payload-schema rows of real NCCL (fact sheet §4.8) for AllGather and Send/Recv.
  EXPECT_EQ(Q(db, "SELECT domainId, schemaId, name, type, flags, numEntries, payloadSize, alignTo FROM "
                  "NVTX_PAYLOAD_SCHEMAS WHERE schemaId IN (16777220, 16777225, 16777226) ORDER BY schemaId"),
            std::vector<std::string>({"1|16777220|NULL|1|NULL|2|16|NULL", "1|16777225|NULL|1|NULL|3|24|NULL",
                                      "1|16777226|NULL|1|NULL|3|24|NULL"}));
  EXPECT_EQ(Q(db, "SELECT schemaId, idx, flags, type, name, description, arrayOrUnionDetail, offset FROM "
                  "NVTX_PAYLOAD_SCHEMA_ENTRIES WHERE schemaId IN (16777220, 16777225) ORDER BY schemaId, idx"),
            std::vector<std::string>({"16777220|0|0|18|NCCL communicator ID|NULL|0|NULL",
                                      "16777220|1|0|22|Message size [bytes]|NULL|0|8",
                                      "16777225|0|0|18|NCCL communicator ID|NULL|0|NULL",
                                      "16777225|1|0|22|Message size [bytes]|NULL|0|8",
                                      "16777225|2|0|5|Peer rank|NULL|0|16"}));
  // binaryData: {domainId, schemaId, size, offset 32} + {commId, message bytes[, root/peer]}.
  EXPECT_EQ(Q(db, "SELECT hex(e.binaryData) FROM NVTX_EVENTS e JOIN StringIds s ON s.id = e.textId "
                  "WHERE s.value IN ('ncclAllGather', 'ncclSend') ORDER BY e.start"),
            std::vector<std::string>(
                {"0100000000000000" "0400000100000000" "1000000000000000" "2000000000000000" "1111000000000000"
                 "0000040000000000",
                 "0100000000000000" "0900000100000000" "1800000000000000" "2000000000000000" "1111000000000000"
                 "0040000000000000" "0200000000000000"}));

  RunResult stats = gt::test::RunProgram({CliPath(), "stats", "--report", "nccl_sum", "--format", "csv", db});
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  EXPECT_EQ(stats.out,
            "Collective,Size Range,Ranks,Rank,Count,Total Time (ns),Avg (ns),Med (ns),Min (ns),Max (ns),"
            "Total Size (B),AlgBW (GB/s),BusBW (GB/s),Untimed,Source\n"
            "AllGather,\"[1 MiB, 2 MiB)\",4,all,1,80000,80000.0,80000.0,80000,80000,1048576,13.11,9.83,0,plugin\n"
            "AllReduce,\"[1 MiB, 2 MiB)\",4,all,2,220000,110000.0,110000.0,100000,120000,2097152,9.53,14.30,0,plugin\n"
            "Broadcast,\"[8 KiB, 16 KiB)\",4,all,1,10000,10000.0,10000.0,10000,10000,8192,0.82,0.82,0,plugin\n"
            "Recv,\"[16 KiB, 32 KiB)\",4,all,1,30000,30000.0,30000.0,30000,30000,16384,0.55,0.55,0,plugin\n"
            "ReduceScatter,\"[1 MiB, 2 MiB)\",4,all,1,60000,60000.0,60000.0,60000,60000,1048576,17.48,13.11,0,plugin\n"
            "Send,\"[16 KiB, 32 KiB)\",4,all,1,30000,30000.0,30000.0,30000,30000,16384,0.55,0.55,0,plugin\n");
}

TEST(NcclPlugin, SeveralCommunicatorsAndThreads) {
  TempDir dir;
  Traced t = RunAndExport(dir, {"--scenario", "threads"});
  ASSERT_EQ(t.run.exit_code, 0) << t.run.err;
  ASSERT_EQ(t.exported.exit_code, 0) << t.exported.err;
  const std::string& db = t.db;
  EXPECT_EQ(Q(db, "SELECT c.commName, c.nRanks, c.rank, count(*), sum(o.kernelChannels), min(o.gpuEnd - o.gpuStart), "
                  "max(o.gpuEnd - o.gpuStart), min(o.seqNumber), max(o.seqNumber), count(DISTINCT o.globalTid) "
                  "FROM GTRACE_NCCL_OPERATIONS o JOIN GTRACE_NCCL_COMMUNICATORS c ON c.commId = o.commId "
                  "GROUP BY 1 ORDER BY 1"),
            std::vector<std::string>({"dp|2|0|5|10|20000|20000|0|4|1", "pp|4|2|5|10|20000|20000|0|4|1",
                                      "tp|8|3|5|10|20000|20000|0|4|1"}));
  // Each communicator ran on its own application thread, and its kernel channels on its own proxy.
  EXPECT_EQ(I(db, "SELECT count(DISTINCT globalTid) FROM GTRACE_NCCL_OPERATIONS"), 3);
  EXPECT_EQ(I(db, "SELECT count(DISTINCT globalTid) FROM GTRACE_NCCL_EVENTS WHERE eventType = 'KernelCh'"), 3);
  EXPECT_EQ(I(db, "SELECT count(*) FROM GTRACE_NCCL_EVENTS k LEFT JOIN GTRACE_NCCL_EVENTS c ON c.eventId = k.parentId "
                  "WHERE k.eventType = 'KernelCh' AND (c.eventId IS NULL OR c.commIndex != k.commIndex)"),
            0);
  EXPECT_EQ(I(db, "SELECT count(*) FROM GTRACE_NCCL_COMMUNICATORS WHERE finalizeTime IS NULL"), 0);
  RunResult stats = gt::test::RunProgram({CliPath(), "stats", "--report", "nccl_sum", "--format", "csv", db});
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  EXPECT_EQ(stats.out,
            "Collective,Size Range,Ranks,Rank,Count,Total Time (ns),Avg (ns),Med (ns),Min (ns),Max (ns),"
            "Total Size (B),AlgBW (GB/s),BusBW (GB/s),Untimed,Source\n"
            "AllReduce,\"[4 KiB, 8 KiB)\",2,all,5,100000,20000.0,20000.0,20000,20000,20480,0.20,0.20,0,plugin\n"
            "AllReduce,\"[8 KiB, 16 KiB)\",8,all,5,100000,20000.0,20000.0,20000,20000,40960,0.41,0.72,0,plugin\n"
            "AllReduce,\"[16 KiB, 32 KiB)\",4,all,5,100000,20000.0,20000.0,20000,20000,81920,0.82,1.23,0,plugin\n");
}

TEST(NcclPlugin, PoolExhaustionGivesNullHandlesAndCountedDrops) {
  TempDir dir;
  Traced t = RunAndExport(dir, {"--scenario", "exhaust"}, {{"GTRACE_NCCL_POOL_EVENTS", "4"}});
  ASSERT_EQ(t.run.exit_code, 0) << t.run.err;
  EXPECT_EQ(t.run.out, "abi=5 mask=0x7f47 null_handles=4\n");
  EXPECT_EQ(t.run.err, "");  // a known variable; exhaustion is reported in the stream, not on stderr
  ASSERT_EQ(t.exported.exit_code, 0) << t.exported.err;
  const std::string& db = t.db;
  EXPECT_EQ(Q(db, "SELECT eventType, capacity, droppedEvents FROM GTRACE_NCCL_POOLS WHERE eventType IN "
                  "('Coll', 'CollApi', 'KernelCh') ORDER BY 1"),
            std::vector<std::string>({"Coll|4|4", "CollApi|4|0", "KernelCh|16|0"}));
  EXPECT_EQ(I(db, "SELECT count(*) FROM GTRACE_NCCL_OPERATIONS"), 4);
  EXPECT_EQ(I(db, "SELECT sum(kernelChannels) FROM GTRACE_NCCL_OPERATIONS"), 8);
  // Channels of the untracked collectives have no parent: kept, not attributed.
  EXPECT_EQ(I(db, "SELECT count(*) FROM GTRACE_NCCL_EVENTS WHERE eventType = 'KernelCh' AND parentId IS NULL"), 8);
  EXPECT_GE(I(db, "SELECT count(*) FROM DIAGNOSTIC_EVENT WHERE text LIKE '%NCCL event pool exhausted%'"), 1);
  EXPECT_NE(t.exported.err.find("4 NCCL Coll events were not tracked: the pool of 4 was exhausted"), std::string::npos)
      << t.exported.err;
  EXPECT_NE(t.exported.err.find("8 NCCL kernel-channel events have no recorded operation"), std::string::npos);
}

TEST(NcclPlugin, ProxyEventsStatesAndAnotherProcessesProxyOp) {
  TempDir dir;
  Traced t = RunAndExport(dir, {"--scenario", "proxy"}, {{"GTRACE_NCCL_TRACE", "default,proxy-step,proxy-ctrl"}});
  ASSERT_EQ(t.run.exit_code, 0) << t.run.err;
  EXPECT_EQ(t.run.out, "abi=5 mask=0x7f7f null_handles=0\n");
  ASSERT_EQ(t.exported.exit_code, 0) << t.exported.err;
  const std::string& db = t.db;
  const std::string pid = std::to_string(I(db, "SELECT globalPid >> 24 & 0xFFFFFF FROM GTRACE_NCCL_COMMUNICATORS"));
  // Local proxy ops are children of the Coll; the PXN one keeps its origin and touches nothing of ours.
  EXPECT_EQ(Q(db, "SELECT o.channelId, o.peer, o.nSteps, o.chunkSize, o.isSend, o.commIndex, p.eventType, "
                  "o.proxyPid - " + pid + " FROM GTRACE_NCCL_EVENTS o LEFT JOIN GTRACE_NCCL_EVENTS p ON "
                  "p.eventId = o.parentId WHERE o.eventType = 'ProxyOp' ORDER BY o.start"),
            std::vector<std::string>({"0|1|3|131072|1|1|Coll|0", "1|1|3|131072|1|1|Coll|0",
                                      "3|0|1|4096|0|NULL|NULL|100000"}));
  EXPECT_EQ(Q(db, "SELECT p.eventType, s.commIndex IS NULL, count(*), min(s.step), max(s.step) FROM "
                  "GTRACE_NCCL_EVENTS s JOIN GTRACE_NCCL_EVENTS p ON p.eventId = s.parentId "
                  "WHERE s.eventType = 'ProxyStep' GROUP BY 1, 2 ORDER BY 2"),
            std::vector<std::string>({"ProxyOp|0|6|0|2", "ProxyOp|1|1|0|0"}));
  EXPECT_EQ(Q(db, "SELECT e.eventType, x.stateName, count(*), sum(x.transSize), sum(x.appendedProxyOps) FROM "
                  "GTRACE_NCCL_EVENT_STATES x JOIN GTRACE_NCCL_EVENTS e ON e.eventId = x.eventId "
                  "WHERE e.eventType LIKE 'Proxy%' GROUP BY 1, 2 ORDER BY 1, 2"),
            std::vector<std::string>({"ProxyCtrl|ProxyCtrlAppend|1|NULL|0", "ProxyCtrl|ProxyCtrlAppendEnd|1|NULL|2",
                                      "ProxyOp|ProxyOpInProgress|2|NULL|NULL",
                                      "ProxyStep|ProxyStepRecvWait|1|4096|NULL",
                                      "ProxyStep|ProxyStepSendGPUWait|6|393216|NULL",
                                      "ProxyStep|ProxyStepSendWait|6|393216|NULL"}));
  EXPECT_EQ(I(db, "SELECT count(*) FROM GTRACE_NCCL_OPERATIONS WHERE proxyEnd >= enqueueEnd"), 1);
}

TEST(NcclPlugin, V6CopyEngineCollectives) {
  TempDir dir;
  Traced t = RunAndExport(dir, {"--nccl", "22907", "--scenario", "ce"});
  ASSERT_EQ(t.run.exit_code, 0) << t.run.err;
  EXPECT_EQ(t.run.out, "abi=6 mask=0x7f47 null_handles=0\n");
  ASSERT_EQ(t.exported.exit_code, 0) << t.exported.err;
  const std::string& db = t.db;
  EXPECT_EQ(Q(db, "SELECT pluginVersion FROM GTRACE_NCCL_COMMUNICATORS"), std::vector<std::string>({"6"}));
  EXPECT_EQ(Q(db, "SELECT e.eventType, p.eventType, e.func, e.count, e.seqNumber, e.detail FROM GTRACE_NCCL_EVENTS e "
                  "JOIN GTRACE_NCCL_EVENTS p ON p.eventId = e.parentId WHERE e.eventType LIKE 'Ce%' ORDER BY e.start"),
            std::vector<std::string>(
                {"CeColl|CollApi|AllGather|1024|7|syncStrategy=MC;intraBatchSync=0;batchSize=0;numBatches=0;ceSeqNum=7",
                 "CeSync|CeColl|NULL|NULL|NULL|isComplete=1;nRanks=4",
                 "CeBatch|CeColl|NULL|NULL|NULL|numOps=3;totalBytes=4096;useIntraSync=0"}));
  EXPECT_EQ(Q(db, "SELECT kind, func, count, messageBytes, algBytes, gpuStart IS NULL, kernelChannels FROM "
                  "GTRACE_NCCL_OPERATIONS ORDER BY enqueueStart"),
            std::vector<std::string>({"CeColl|AllGather|1024|4096|16384|1|0", "Coll|AllReduce|1024|4096|4096|0|2"}));
}

TEST(NcclPlugin, V4IsAdaptedWithGroupsAsParents) {
  TempDir dir;
  Traced t = RunAndExport(dir, {"--nccl", "22709", "--scenario", "basic"});
  ASSERT_EQ(t.run.exit_code, 0) << t.run.err;
  EXPECT_EQ(t.run.out, "abi=4 mask=0x7f47 null_handles=0\n");
  ASSERT_EQ(t.exported.exit_code, 0) << t.exported.err;
  const std::string& db = t.db;
  EXPECT_EQ(Q(db, "SELECT pluginVersion FROM GTRACE_NCCL_COMMUNICATORS"), std::vector<std::string>({"4"}));
  EXPECT_EQ(Q(db, "SELECT eventType, count(*) FROM GTRACE_NCCL_EVENTS GROUP BY 1 ORDER BY 1"),
            std::vector<std::string>({"Coll|5", "Group|6", "KernelCh|11", "P2p|2"}));
  EXPECT_EQ(I(db, "SELECT count(*) FROM GTRACE_NCCL_EVENTS c JOIN GTRACE_NCCL_EVENTS g ON g.eventId = c.parentId "
                  "WHERE c.eventType IN ('Coll', 'P2p') AND g.eventType = 'Group' AND c.groupId = c.parentId"),
            7);
  // Without API events the operation keeps NCCL's own count/datatype (AllGather in bytes of ncclInt8).
  EXPECT_EQ(Q(db, "SELECT func, count, datatype, messageBytes, algBytes, gpuEnd - gpuStart, apiStart FROM "
                  "GTRACE_NCCL_OPERATIONS WHERE func IN ('AllGather', 'Send') ORDER BY enqueueStart"),
            std::vector<std::string>({"AllGather|262144|ncclInt8|262144|1048576|80000|NULL",
                                      "Send|4096|ncclFloat32|16384|16384|30000|NULL"}));
  // NVTX ranges then span the enqueue (no API events in v4).
  EXPECT_EQ(I(db, "SELECT count(*) FROM NVTX_EVENTS e JOIN StringIds s ON s.id = e.textId WHERE e.eventType = 59 "
                  "AND s.value LIKE 'nccl%'"),
            7);
}

TEST(NcclPlugin, NcclsOwnNvtxRangesAreNotDuplicated) {
  TempDir dir;
  Traced t = RunAndExport(dir, {"--scenario", "basic", "--nvtx"});
  ASSERT_EQ(t.run.exit_code, 0) << t.run.err;
  ASSERT_EQ(t.exported.exit_code, 0) << t.exported.err;
  const std::string& db = t.db;
  // NCCL's own ranges (NVTX module): one per API call, none added by the plugin export.
  EXPECT_EQ(Q(db, "SELECT s.value, count(*) FROM NVTX_EVENTS e JOIN StringIds s ON s.id = e.textId "
                  "WHERE e.eventType = 59 GROUP BY 1 ORDER BY 1"),
            std::vector<std::string>({"ncclAllGather|1", "ncclAllReduce|2", "ncclBroadcast|1", "ncclRecv|1",
                                      "ncclReduceScatter|1", "ncclSend|1"}));
  EXPECT_EQ(I(db, "SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 75 AND text = 'NCCL'"), 1);
  // NCCL's registration of the AllGather/Send schemas equals the rows the plugin export writes
  // without NVTX (V5CollectivesEndToEnd), domain aside; AllReduce adds the reduction operation.
  EXPECT_EQ(Q(db, "SELECT schemaId, idx, flags, type, name, description, arrayOrUnionDetail, offset FROM "
                  "NVTX_PAYLOAD_SCHEMA_ENTRIES WHERE schemaId IN (16777220, 16777225, 16777221) ORDER BY schemaId, idx"),
            std::vector<std::string>({"16777220|0|0|18|NCCL communicator ID|NULL|0|NULL",
                                      "16777220|1|0|22|Message size [bytes]|NULL|0|8",
                                      "16777221|0|0|18|NCCL communicator ID|NULL|0|NULL",
                                      "16777221|1|0|22|Message size [bytes]|NULL|0|8",
                                      "16777221|2|0|16777236|Reduction operation|NULL|0|16",
                                      "16777225|0|0|18|NCCL communicator ID|NULL|0|NULL",
                                      "16777225|1|0|22|Message size [bytes]|NULL|0|8",
                                      "16777225|2|0|5|Peer rank|NULL|0|16"}));
  // The reduction operation comes from NCCL's NVTX payload of the same call.
  EXPECT_EQ(Q(db, "SELECT func, redOp FROM GTRACE_NCCL_OPERATIONS WHERE redOp IS NOT NULL ORDER BY enqueueStart"),
            std::vector<std::string>({"AllReduce|sum", "AllReduce|sum", "ReduceScatter|max"}));
  // nccl_sum reads the plugin's operations: 2 AllReduces, not 4.
  RunResult stats = gt::test::RunProgram({CliPath(), "stats", "--report", "nccl_sum", "--format", "csv", db});
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  EXPECT_NE(stats.out.find("AllReduce,\"[1 MiB, 2 MiB)\",4,all,2,220000,"), std::string::npos) << stats.out;
  RunResult nvtx = gt::test::RunProgram({CliPath(), "stats", "--report", "nvtx_sum", "--format", "csv", db});
  EXPECT_NE(nvtx.out.find(",2,"), std::string::npos);
  EXPECT_NE(nvtx.out.find("PushPop,NCCL:ncclAllReduce"), std::string::npos) << nvtx.out;
}

TEST(NcclPlugin, SkewedGpuTimerIsAlignedCausally) {
  TempDir dir;
  Traced t = RunAndExport(dir, {"--scenario", "basic", "--skew-ns", "5000000000"});
  ASSERT_EQ(t.run.exit_code, 0) << t.run.err;
  ASSERT_EQ(t.exported.exit_code, 0) << t.exported.err;
  const std::string& db = t.db;
  // The GPU timer is 5 s ahead of CLOCK_REALTIME: the correction brings it back to within the
  // proxy's observation latency (well under 50 ms even on a loaded CI machine).
  EXPECT_EQ(Q(db, "SELECT method, correction BETWEEN -5000000000 AND -4950000000 FROM GTRACE_NCCL_GPU_CLOCK"),
            std::vector<std::string>({"upper-bound|1"}));
  EXPECT_EQ(I(db, "SELECT count(*) FROM GTRACE_NCCL_EVENTS WHERE eventType = 'KernelCh' AND "
                  "(gpuStart > start OR gpuEnd > end)"),
            0);
  EXPECT_EQ(I(db, "SELECT count(*) FROM GTRACE_NCCL_OPERATIONS WHERE gpuStart < apiStart"), 0);
  EXPECT_EQ(Q(db, "SELECT gpuEnd - gpuStart FROM GTRACE_NCCL_OPERATIONS ORDER BY enqueueStart LIMIT 2"),
            std::vector<std::string>({"100000", "120000"}));
}

TEST(NcclPlugin, WithoutFinalizeTheDataIsStillWritten) {
  TempDir dir;
  Traced t = RunAndExport(dir, {"--scenario", "basic", "--no-finalize"});
  ASSERT_EQ(t.run.exit_code, 0) << t.run.err;
  ASSERT_EQ(t.exported.exit_code, 0) << t.exported.err;
  EXPECT_EQ(Q(t.db, "SELECT finalizeTime FROM GTRACE_NCCL_COMMUNICATORS"), std::vector<std::string>({"NULL"}));
  EXPECT_EQ(I(t.db, "SELECT count(*) FROM GTRACE_NCCL_OPERATIONS"), 7);
}

TEST(NcclPlugin, SwitchesOffCleanly) {
  {
    // NCCL not in the trace list: init succeeds with an empty event mask (the session itself starts,
    // as any entry point starts it, and records no NCCL data).
    TempDir dir;
    Traced t = RunAndExport(dir, {"--scenario", "basic"}, {{"GTRACE_TRACE", "cuda"}});
    EXPECT_EQ(t.run.exit_code, 0);
    EXPECT_EQ(t.run.out, "abi=5 mask=0x0 null_handles=0\n");
    EXPECT_FALSE(Db(t.db).Int("SELECT count(*) FROM GTRACE_NCCL_EVENTS").has_value());
  }
  {
    TempDir dir;
    RunOptions o = TracedRun(dir);
    o.env["GTRACE_DISABLE"] = "1";
    RunResult r = gt::test::RunProgram({FakeHost(), "--scenario", "threads"}, o);
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_EQ(r.out, "abi=0 mask=0x0 null_handles=0 (no profiler plugin: libnccl-profiler.so: cannot open shared "
                     "object file: No such file or directory)\n");
    EXPECT_TRUE(dir.Find(".gtrace").empty());
  }
  {
    TempDir dir;  // an output that cannot be opened: one gtrace line, NCCL runs on without events
    RunOptions o = TracedRun(dir);
    o.env["GTRACE_OUTPUT"] = "/nonexistent-dir/x-%p";
    RunResult r = gt::test::RunProgram({FakeHost(), "--scenario", "basic"}, o);
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_EQ(r.out, "abi=5 mask=0x0 null_handles=0\n");
    EXPECT_NE(r.err.find("gtrace: "), std::string::npos);
  }
  {
    TempDir dir;  // a bad event list: a warning and the default events
    Traced t = RunAndExport(dir, {"--scenario", "basic"}, {{"GTRACE_NCCL_TRACE", "coll,bogus"}});
    EXPECT_EQ(t.run.out, "abi=5 mask=0x7f47 null_handles=0\n");
    EXPECT_NE(t.run.err.find("gtrace: GTRACE_NCCL_TRACE: unknown NCCL event 'bogus'"), std::string::npos) << t.run.err;
  }
  {
    // Only collectives. NCCL still starts the ancestors of what the mask asks for (6 GroupApi, 5 CollApi,
    // 6 Group events here); the plugin returns NULL handles for them and keeps the Coll events.
    TempDir dir;
    Traced t = RunAndExport(dir, {"--scenario", "basic"}, {{"GTRACE_NCCL_TRACE", "coll"}});
    EXPECT_EQ(t.run.out, "abi=5 mask=0x2 null_handles=17\n");
    EXPECT_EQ(Q(t.db, "SELECT eventType, count(*) FROM GTRACE_NCCL_EVENTS GROUP BY 1"),
              std::vector<std::string>({"Coll|5"}));
  }
}

TEST(NcclPlugin, PreloadPointsNcclAtTheLibraryUnlessTheUserChoseAPlugin) {
  char resolved[4096];
  ASSERT_NE(realpath(LibraryPath().c_str(), resolved), nullptr);
  {
    TempDir dir;
    RunResult r = gt::test::RunProgram({"/usr/bin/env"}, TracedRun(dir));
    EXPECT_NE(r.out.find(std::string("NCCL_PROFILER_PLUGIN=") + resolved + "\n"), std::string::npos) << r.out;
    EXPECT_EQ(r.err, "");
  }
  {
    TempDir dir;  // the user's plugin wins, with one note
    RunOptions o = TracedRun(dir);
    o.env["NCCL_PROFILER_PLUGIN"] = "/opt/their/libnccl-profiler-x.so";
    RunResult r = gt::test::RunProgram({FakeHost()}, o);
    EXPECT_EQ(r.err, "gtrace: NCCL_PROFILER_PLUGIN=/opt/their/libnccl-profiler-x.so is set: NCCL loads that plugin, "
                     "not gtrace's; NCCL collectives are not traced\n");
    EXPECT_NE(r.out.find("abi=0"), std::string::npos);
  }
  {
    TempDir dir;
    RunOptions o = TracedRun(dir);
    o.env["NCCL_PROFILER_PLUGIN"] = "none";
    RunResult r = gt::test::RunProgram({FakeHost()}, o);
    EXPECT_EQ(r.err, "gtrace: NCCL_PROFILER_PLUGIN=none turns NCCL's profiler plugins off; NCCL collectives are not "
                     "traced\n");
  }
  {
    TempDir dir;  // the user named our library by another path (a symlink): ours, no note
    std::string link = dir.File("libnccl-profiler-gtrace.so");
    ASSERT_EQ(symlink(resolved, link.c_str()), 0);
    RunOptions o = TracedRun(dir);
    o.env["NCCL_PROFILER_PLUGIN"] = link;
    RunResult r = gt::test::RunProgram({FakeHost()}, o);
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(r.out, "abi=5 mask=0x7f47 null_handles=0\n");
  }
  {
    TempDir dir;  // STATIC_PLUGIN: NCCL dlopen(NULL)s and finds our preloaded symbols
    RunOptions o = TracedRun(dir);
    o.env["NCCL_PROFILER_PLUGIN"] = "STATIC_PLUGIN";
    RunResult r = gt::test::RunProgram({FakeHost()}, o);
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(r.out, "abi=5 mask=0x7f47 null_handles=0\n");
    EXPECT_EQ(dir.Find(".gtrace").size(), 1u);
  }
}

TEST(NcclPlugin, ProfileFlagSetsTheEventMask) {
  TempDir dir;
  RunOptions o = TracedRun(dir);
  RunResult r = gt::test::RunProgram({CliPath(), "profile", "-o", dir.File("p-%p"), "--nccl-trace=coll,kernel", "--",
                               FakeHost(), "--scenario", "basic"},
                              o);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // Coll|P2p|KernelCh; NCCL still starts 6 GroupApi, 5 CollApi, 2 P2pApi and 6 Group events (NULL handles).
  EXPECT_EQ(r.out, "abi=5 mask=0x46 null_handles=19\n");
  RunResult bad = gt::test::RunProgram({CliPath(), "profile", "--nccl-trace=coll,bogus", "--", FakeHost()}, o);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--nccl-trace: unknown NCCL event 'bogus'"), std::string::npos) << bad.err;
}

// Tables only when nsys writes them (issue 15): an NCCL-only process has NCCL's NVTX ranges and
// payload schemas and gtrace's NCCL tables that have rows; no CUDA table, no empty GTRACE_NCCL_*.
TEST(NsysTables, NcclOnlyProcess) {
  TempDir dir;
  Traced t = RunAndExport(dir, {"--nccl", "22809", "--scenario", "basic"});
  ASSERT_EQ(t.run.exit_code, 0) << t.run.err;
  ASSERT_EQ(t.exported.exit_code, 0) << t.exported.err;
  EXPECT_EQ(Q(t.db, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'ENUM_%' ORDER BY name"),
            std::vector<std::string>({"ANALYSIS_DETAILS", "GTRACE_CLOCK_ALIGNMENT", "GTRACE_NCCL_COMMUNICATORS",
                                      "GTRACE_NCCL_EVENTS", "GTRACE_NCCL_EVENT_STATES", "GTRACE_NCCL_GPU_CLOCK",
                                      "GTRACE_NCCL_OPERATIONS", "GTRACE_NCCL_POOLS", "GTRACE_PROCESS_TREE",
                                      "GTRACE_RANKS", "META_DATA_CAPTURE", "META_DATA_EXPORT", "NVTX_EVENTS",
                                      "NVTX_PAYLOAD_SCHEMAS", "NVTX_PAYLOAD_SCHEMA_ENTRIES", "PROCESSES",
                                      "PROFILER_OVERHEAD", "StringIds", "TARGET_INFO_SESSION_START_TIME", "TARGET_INFO_SYSTEM_ENV", "ThreadNames"}));
  EXPECT_EQ(I(t.db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name LIKE 'ENUM_%'"), 24);
  // Every non-ENUM table but the always-written ones has rows (none is there empty).
  for (const std::string& table : Q(t.db, "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE "
                                          "'GTRACE_NCCL_%' OR name LIKE 'NVTX_%'")) {
    EXPECT_GT(I(t.db, "SELECT count(*) FROM \"" + table + "\""), 0) << table;
  }
}

}  // namespace
}  // namespace gt::test
