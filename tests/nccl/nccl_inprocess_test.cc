// The plugin linked into the test program (gt_inject_static, no LD_PRELOAD): the fake NCCL host
// finds it with NCCL_PROFILER_PLUGIN=STATIC_PLUGIN (dlopen(NULL), the program exports the symbols)
// and drives it from several application threads and proxy threads at once, with every event type
// recorded. Built as its own binary (one session per process); under GT_SANITIZE=thread this is the
// race check of the plugin's hot path, pools and the drain thread.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <map>
#include <set>
#include <thread>
#include <vector>

#include "collector/session.h"
#include "inject/nccl/nccl_plugin.h"
#include "tests/common/test_util.h"
#include "tests/fakes/fake_nccl_host.h"
#include "tools/stream/stream_reader.h"

namespace {

TEST(NcclInProcess, ManyThreadsAndCommunicatorsThroughStaticPlugin) {
  gt::test::TempDir dir;
  setenv("GTRACE_OUTPUT", dir.File("s-%p").c_str(), 1);
  setenv("GTRACE_TRACE", "nccl", 1);
  setenv("GTRACE_NCCL_TRACE", "all", 1);
  setenv("NCCL_PROFILER_PLUGIN", "STATIC_PLUGIN", 1);
  fake_nccl::Host host;
  std::string error;
  ASSERT_TRUE(host.Load(22907, &error)) << error;
  ASSERT_EQ(host.abi(), 6);
  constexpr int kComms = 4, kCalls = 40;
  std::vector<fake_nccl::Comm*> comms;
  for (int k = 0; k < kComms; ++k) comms.push_back(host.InitComm("c", 0x100 + k, 2, 8, k));
  EXPECT_EQ(host.mask(), 0x7fff);
  EXPECT_EQ(gt::nccl::TrackedMask(), 0x7fffu);  // (also links the plugin object into this program)
  std::vector<std::thread> threads;
  for (int k = 0; k < kComms; ++k) {
    threads.emplace_back([&host, &comms, k] {
      fake_nccl::Op op;
      op.gpu_ns = 20000;
      op.proxy_steps = 2;
      for (int i = 0; i < kCalls; ++i) {
        if (i % 10 == 9) {
          fake_nccl::Op send = op, recv = op;
          send.func = "Send";
          send.peer = 1;
          recv.func = "Recv";
          recv.peer = 1;
          host.Group(comms[k], {send, recv});
        } else {
          host.Call(comms[k], op);
        }
        if (i % 8 == 0) host.ProxyCtrl(comms[k]);
      }
      host.ForeignProxyOp(comms[k]);
      host.CeCollective(comms[k], op);
    });
  }
  for (auto& t : threads) t.join();
  for (auto* c : comms) host.FinalizeComm(c);
  EXPECT_EQ(host.null_handles(), 0);
  gt::EndSession("test");

  std::vector<std::string> streams = dir.Find(".gtrace");
  ASSERT_EQ(streams.size(), 1u);
  gt::stream::StreamReader reader;
  ASSERT_TRUE(reader.Open(streams[0]).ok());
  std::map<int, int> starts;
  std::set<uint64_t> started, stopped;
  int finalized = 0, comm_rows = 0, drops = 0;
  gt::schema::Chunk chunk;
  while (true) {
    bool has = false;
    ASSERT_TRUE(reader.Next(&chunk, &has).ok());
    if (!has) break;
    comm_rows += chunk.nccl_comms_size();
    drops += chunk.drops_size();
    for (const auto& e : chunk.nccl()) {
      if (e.kind() == gt::schema::NCCL_EVENT_KIND_START) {
        ++starts[e.type()];
        EXPECT_TRUE(started.insert(e.event_id()).second) << "id " << e.event_id() << " started twice";
      } else if (e.kind() == gt::schema::NCCL_EVENT_KIND_STOP) {
        EXPECT_TRUE(started.count(e.event_id())) << "stop before start";
        stopped.insert(e.event_id());
      } else if (e.kind() == gt::schema::NCCL_EVENT_KIND_FINALIZE) {
        ++finalized;
      }
    }
  }
  EXPECT_EQ(comm_rows, kComms);
  EXPECT_EQ(finalized, kComms);
  EXPECT_EQ(drops, 0);
  EXPECT_EQ(started, stopped) << "every event that started also stopped";
  const int colls = kComms * (kCalls - kCalls / 10), p2ps = kComms * (kCalls / 10) * 2;
  EXPECT_EQ(starts[gt::schema::NCCL_EVENT_TYPE_COLL], colls);
  EXPECT_EQ(starts[gt::schema::NCCL_EVENT_TYPE_P2P], p2ps);
  EXPECT_EQ(starts[gt::schema::NCCL_EVENT_TYPE_KERNEL_CH], (colls + p2ps) * 2);
  EXPECT_EQ(starts[gt::schema::NCCL_EVENT_TYPE_PROXY_OP], (colls + p2ps) * 2 + kComms);
  EXPECT_EQ(starts[gt::schema::NCCL_EVENT_TYPE_PROXY_STEP], (colls + p2ps) * 2 * 2 + kComms);
  EXPECT_EQ(starts[gt::schema::NCCL_EVENT_TYPE_PROXY_CTRL], kComms * (kCalls / 8));
  EXPECT_EQ(starts[gt::schema::NCCL_EVENT_TYPE_CE_COLL], kComms);
  EXPECT_EQ(starts[gt::schema::NCCL_EVENT_TYPE_GROUP_API], kComms * (kCalls + 1));
}

}  // namespace
