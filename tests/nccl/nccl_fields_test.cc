// The hand-written encoder of the NCCL plugin against schema/nccl.proto: every field-number
// constant of inject/nccl/nccl_fields.h equals the protoc descriptor's, every proto field has a
// constant, and records decoded by the drain-thread decoder parse back, field by field, with the
// generated classes.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>

#include "collector/chunk_builder.h"
#include "collector/string_interner.h"
#include "gtrace.pb.h"
#include "inject/nccl/nccl_abi.h"
#include "inject/nccl/nccl_fields.h"
#include "inject/nccl/nccl_record.h"

namespace {

namespace f = gt::nccl::field;
using google::protobuf::Descriptor;

void ExpectFields(const Descriptor* d, const std::map<std::string, uint32_t>& ours) {
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(static_cast<size_t>(d->field_count()), ours.size()) << d->full_name() << ": a field has no constant";
  for (const auto& [name, number] : ours) {
    const auto* field = d->FindFieldByName(name);
    ASSERT_NE(field, nullptr) << d->full_name() << " has no field " << name;
    EXPECT_EQ(static_cast<uint32_t>(field->number()), number) << d->full_name() << "." << name;
  }
}

TEST(NcclFields, ChunkFields) {
  const Descriptor* c = gt::schema::Chunk::descriptor();
  EXPECT_EQ(static_cast<uint32_t>(c->FindFieldByName("nccl")->number()), f::chunk::kNccl);
  EXPECT_EQ(static_cast<uint32_t>(c->FindFieldByName("nccl_comms")->number()), f::chunk::kNcclComms);
  EXPECT_EQ(static_cast<uint32_t>(c->FindFieldByName("nccl_pools")->number()), f::chunk::kNcclPools);
  for (uint32_t n : {f::chunk::kNccl, f::chunk::kNcclComms, f::chunk::kNcclPools}) {
    EXPECT_GE(n, 80u);
    EXPECT_LE(n, 99u);
  }
}

TEST(NcclFields, EventFields) {
  namespace e = f::event;
  ExpectFields(gt::schema::NcclEvent::descriptor(),
               {{"kind", e::kKind},
                {"ts_delta_ns", e::kTsDeltaNs},
                {"event_id", e::kEventId},
                {"type", e::kType},
                {"comm_index", e::kCommIndex},
                {"parent_id", e::kParentId},
                {"group_id", e::kGroupId},
                {"rank", e::kRank},
                {"func_string_id", e::kFuncStringId},
                {"datatype_string_id", e::kDatatypeStringId},
                {"algo_string_id", e::kAlgoStringId},
                {"proto_string_id", e::kProtoStringId},
                {"seq_number", e::kSeqNumber},
                {"count", e::kCount},
                {"root", e::kRoot},
                {"peer", e::kPeer},
                {"n_channels", e::kNChannels},
                {"n_warps", e::kNWarps},
                {"channel_id", e::kChannelId},
                {"gpu_timer_ns", e::kGpuTimerNs},
                {"graph_captured", e::kGraphCaptured},
                {"group_depth", e::kGroupDepth},
                {"stream", e::kStream},
                {"state", e::kState},
                {"trans_size_bytes", e::kTransSizeBytes},
                {"appended_proxy_ops", e::kAppendedProxyOps},
                {"proxy_pid", e::kProxyPid},
                {"n_steps", e::kNSteps},
                {"chunk_size_bytes", e::kChunkSizeBytes},
                {"is_send", e::kIsSend},
                {"step", e::kStep},
                {"net_plugin_id", e::kNetPluginId},
                {"sync_strategy_string_id", e::kSyncStrategyStringId},
                {"intra_batch_sync", e::kIntraBatchSync},
                {"batch_size", e::kBatchSize},
                {"num_batches", e::kNumBatches},
                {"ce_seq_number", e::kCeSeqNumber},
                {"sync_complete", e::kSyncComplete},
                {"n_ranks", e::kNRanks},
                {"total_bytes", e::kTotalBytes}});
}

TEST(NcclFields, CommAndPoolFields) {
  namespace c = f::comm;
  ExpectFields(gt::schema::NcclComm::descriptor(), {{"comm_index", c::kCommIndex},
                                                    {"comm_hash", c::kCommHash},
                                                    {"name", c::kName},
                                                    {"n_nodes", c::kNNodes},
                                                    {"n_ranks", c::kNRanks},
                                                    {"rank", c::kRank},
                                                    {"plugin_version", c::kPluginVersion},
                                                    {"init_ts_ns", c::kInitTsNs},
                                                    {"init_tid", c::kInitTid},
                                                    {"activation_mask", c::kActivationMask},
                                                    {"name_truncated", c::kNameTruncated}});
  namespace p = f::pool_stats;
  ExpectFields(gt::schema::NcclPoolStats::descriptor(), {{"type", p::kType},
                                                         {"capacity_events", p::kCapacityEvents},
                                                         {"dropped_events", p::kDroppedEvents},
                                                         {"ts_ns", p::kTsNs}});
}

TEST(NcclFields, KindAndTypeValuesMatchTheEnums) {
  EXPECT_EQ(f::kind::kStart, static_cast<uint32_t>(gt::schema::NCCL_EVENT_KIND_START));
  EXPECT_EQ(f::kind::kStop, static_cast<uint32_t>(gt::schema::NCCL_EVENT_KIND_STOP));
  EXPECT_EQ(f::kind::kState, static_cast<uint32_t>(gt::schema::NCCL_EVENT_KIND_STATE));
  EXPECT_EQ(f::kind::kFinalize, static_cast<uint32_t>(gt::schema::NCCL_EVENT_KIND_FINALIZE));
  // The stream's event types are NCCL's ncclProfile* bits.
  const auto* types = gt::schema::NcclEventType_descriptor();
  EXPECT_EQ(types->value_count(), 1 + static_cast<int>(gt::nccl::abi::kEventTypeCount));
  for (uint32_t t = 0; t < gt::nccl::abi::kEventTypeCount; ++t) {
    EXPECT_NE(types->FindValueByNumber(1 << t), nullptr) << "no NcclEventType with value " << (1 << t);
  }
  EXPECT_EQ(static_cast<uint32_t>(gt::schema::NCCL_EVENT_TYPE_KERNEL_CH), gt::nccl::abi::kKernelCh);
  EXPECT_EQ(static_cast<uint32_t>(gt::schema::NCCL_EVENT_TYPE_CE_BATCH), gt::nccl::abi::kCeBatch);
}

// Decodes records with the drain-thread decoder and parses the chunk with the generated classes.
class Decoded {
 public:
  Decoded() : chunk_(&interner_) { chunk_.Begin(1, 4242, 1000); }
  template <typename R>
  void Add(const R& r) {
    alignas(64) unsigned char bytes[128] = {};
    std::memcpy(bytes, &r, sizeof(r));
    gt::RecordView v{reinterpret_cast<const gt::RecordHeader*>(bytes), bytes, sizeof(bytes), 4242};
    gt::nccl::DecodeRecord(v, &chunk_);
  }
  gt::schema::Chunk Parse() {
    chunk_.End();
    gt::schema::StreamFile file;
    EXPECT_TRUE(file.ParseFromString(*chunk_.output()));
    EXPECT_EQ(file.chunk_size(), 1);
    EXPECT_EQ(chunk_.intern_misuse(), 0u);
    return file.chunk_size() == 1 ? file.chunk(0) : gt::schema::Chunk();
  }
  std::string Text(const gt::schema::Chunk& c, uint64_t id) {
    for (const auto& s : c.strings()) {
      if (s.id() == id) return s.text();
    }
    return "?";
  }

 private:
  gt::StringInterner interner_;
  gt::ChunkBuilder chunk_;
};

gt::RecordHeader Head(uint8_t kind, uint32_t type_bit, uint32_t comm, uint64_t ts) {
  gt::RecordHeader h{};
  h.type = gt::kRecordNccl;
  h.aux16 = static_cast<uint16_t>(kind | (__builtin_ctz(type_bit) << 8));
  h.aux32 = comm;
  h.ts_ns = ts;
  return h;
}

TEST(NcclRecords, RoundTripThroughTheGeneratedDecoder) {
  using namespace gt::nccl;
  Decoded d;
  WideStart coll{};
  coll.p.h = Head(kKindStart, gt::nccl::abi::kColl, 3, 1500);
  coll.p.h.ext_slots = 1;
  coll.p.id = 66;
  coll.p.parent_id = 65;
  coll.p.rank = 5;
  coll.group_id = 64;
  coll.seq_number = 9;
  coll.count = 262144;
  coll.func = "AllReduce";
  coll.datatype = "ncclFloat32";
  coll.algo = "RING";
  coll.proto = "LL128";
  coll.root = 0;
  coll.n_channels = 24;
  coll.n_warps = 16;
  d.Add(coll);
  SmallStart ch{};
  ch.p.h = Head(kKindStart, gt::nccl::abi::kKernelCh, 3, 2000);
  ch.p.id = 70;
  ch.p.parent_id = 66;
  ch.u64 = 1795315964282559703ull;
  ch.u32 = 23;
  d.Add(ch);
  StopRecord stop{};
  stop.h = Head(kKindStop, gt::nccl::abi::kKernelCh, 3, 2600);
  stop.id = 70;
  stop.gpu_timer_ns = 1795315964282659703ull;
  stop.flags = kRecHasGpuTimer;
  d.Add(stop);
  StateRecord state{};
  state.h = Head(kKindState, gt::nccl::abi::kProxyStep, 3, 2700);
  state.id = 80;
  state.value = 65536;
  state.state = gt::nccl::abi::kProxyStepSendWait;
  d.Add(state);
  SmallStart pxn{};
  pxn.p.h = Head(kKindStart, gt::nccl::abi::kProxyOp, 0, 2800);
  pxn.p.id = 90;
  pxn.p.rank = 2;
  pxn.i0 = 1;
  pxn.i1 = 8;
  pxn.i2 = 131072;
  pxn.u32 = 31337;
  pxn.u64 = 5;
  pxn.p.flags = kRecIsSend;
  d.Add(pxn);
  gt::RecordHeader fin = Head(kKindFinalize, 1, 3, 3000);
  fin.aux16 = kKindFinalize;
  d.Add(fin);

  gt::schema::Chunk c = d.Parse();
  ASSERT_EQ(c.nccl_size(), 6);
  const auto& e0 = c.nccl(0);
  EXPECT_EQ(e0.kind(), gt::schema::NCCL_EVENT_KIND_START);
  EXPECT_EQ(e0.ts_delta_ns(), 500);
  EXPECT_EQ(e0.event_id(), 66u);
  EXPECT_EQ(e0.type(), gt::schema::NCCL_EVENT_TYPE_COLL);
  EXPECT_EQ(e0.comm_index(), 3u);
  EXPECT_EQ(e0.parent_id(), 65u);
  EXPECT_EQ(e0.group_id(), 64u);
  EXPECT_EQ(e0.rank(), 5);
  EXPECT_EQ(d.Text(c, e0.func_string_id()), "AllReduce");
  EXPECT_EQ(d.Text(c, e0.datatype_string_id()), "ncclFloat32");
  EXPECT_EQ(d.Text(c, e0.algo_string_id()), "RING");
  EXPECT_EQ(d.Text(c, e0.proto_string_id()), "LL128");
  EXPECT_EQ(e0.seq_number(), 9u);
  EXPECT_EQ(e0.count(), 262144u);
  EXPECT_EQ(e0.n_channels(), 24u);
  EXPECT_EQ(e0.n_warps(), 16u);
  const auto& e1 = c.nccl(1);
  EXPECT_EQ(e1.type(), gt::schema::NCCL_EVENT_TYPE_KERNEL_CH);
  EXPECT_EQ(e1.ts_delta_ns(), 500);
  EXPECT_EQ(e1.parent_id(), 66u);
  EXPECT_EQ(e1.channel_id(), 23u);
  EXPECT_EQ(e1.gpu_timer_ns(), 1795315964282559703ull);
  const auto& e2 = c.nccl(2);
  EXPECT_EQ(e2.kind(), gt::schema::NCCL_EVENT_KIND_STOP);
  EXPECT_EQ(e2.event_id(), 70u);
  EXPECT_EQ(e2.gpu_timer_ns(), 1795315964282659703ull);
  const auto& e3 = c.nccl(3);
  EXPECT_EQ(e3.kind(), gt::schema::NCCL_EVENT_KIND_STATE);
  EXPECT_EQ(e3.type(), gt::schema::NCCL_EVENT_TYPE_PROXY_STEP);
  EXPECT_EQ(e3.state(), static_cast<uint32_t>(gt::nccl::abi::kProxyStepSendWait));
  EXPECT_EQ(e3.trans_size_bytes(), 65536u);
  const auto& e4 = c.nccl(4);
  EXPECT_EQ(e4.type(), gt::schema::NCCL_EVENT_TYPE_PROXY_OP);
  EXPECT_EQ(e4.comm_index(), 0u);
  EXPECT_EQ(e4.peer(), 1);
  EXPECT_EQ(e4.n_steps(), 8);
  EXPECT_EQ(e4.chunk_size_bytes(), 131072);
  EXPECT_EQ(e4.proxy_pid(), 31337u);
  EXPECT_EQ(e4.channel_id(), 5u);
  EXPECT_TRUE(e4.is_send());
  const auto& e5 = c.nccl(5);
  EXPECT_EQ(e5.kind(), gt::schema::NCCL_EVENT_KIND_FINALIZE);
  EXPECT_EQ(e5.comm_index(), 3u);
  EXPECT_EQ(e5.event_id(), 0u);
}

TEST(NcclRecords, NonAsciiStringsStayValidUtf8) {
  using namespace gt::nccl;
  Decoded d;
  WideStart api{};
  api.p.h = Head(kKindStart, gt::nccl::abi::kCollApi, 1, 1000);
  api.p.id = 1;
  api.func = "All\xffReduce";
  api.datatype = nullptr;
  api.count = 3;
  d.Add(api);
  gt::schema::Chunk c = d.Parse();
  ASSERT_EQ(c.nccl_size(), 1);
  EXPECT_EQ(d.Text(c, c.nccl(0).func_string_id()), "All?Reduce");
  EXPECT_EQ(c.nccl(0).datatype_string_id(), 0u);
}

}  // namespace
