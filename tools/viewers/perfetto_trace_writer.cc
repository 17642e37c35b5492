#include "tools/viewers/perfetto_trace_writer.h"

#include "tools/viewers/perfetto_fields.h"

namespace gt::viewers {

void PerfettoTraceWriter::BeginPacket(bool has_timestamp, int64_t ts_ns, uint32_t sequence_flags) {
  w_.BeginNested(pf::kTracePacket);
  if (has_timestamp)
    w_.Varint(pf::kPacketTimestamp, static_cast<uint64_t>(ts_ns));
  w_.Varint(pf::kPacketTrustedPacketSequenceId, kSequenceId);
  if (first_packet_) {
    // Readers drop interned references on a sequence until they have seen its state cleared.
    sequence_flags |= pf::kSeqIncrementalStateCleared;
    w_.Bool(pf::kPacketFirstPacketOnSequence, true);
    first_packet_ = false;
  }
  if (sequence_flags != 0)
    w_.Varint(pf::kPacketSequenceFlags, sequence_flags);
}

void PerfettoTraceWriter::EndPacket() {
  w_.EndNested();
  ++packets_;
  if (w_.size() >= (1 << 20))
    Flush();
}

void PerfettoTraceWriter::Flush() {
  if (w_.size() == 0)
    return;
  out_->Write(w_.bytes());
  w_.Clear();
}

void PerfettoTraceWriter::ClockSnapshot(int64_t utc_at_zero_ns) {
  BeginPacket(false, 0, 0);
  w_.BeginNested(pf::kPacketClockSnapshot);
  w_.BeginNested(pf::kClockSnapshotClocks);
  w_.Varint(pf::kClockId, pf::kBuiltinClockBoottime);
  w_.Varint(pf::kClockTimestamp, 0);
  w_.EndNested();
  w_.BeginNested(pf::kClockSnapshotClocks);
  w_.Varint(pf::kClockId, pf::kBuiltinClockRealtime);
  w_.Varint(pf::kClockTimestamp, static_cast<uint64_t>(utc_at_zero_ns));
  w_.EndNested();
  w_.Varint(pf::kClockSnapshotPrimaryTraceClock, pf::kBuiltinClockBoottime);
  w_.EndNested();
  EndPacket();
}

void PerfettoTraceWriter::ProcessTrack(uint64_t uuid,
                                       int32_t pid,
                                       std::string_view name,
                                       const std::vector<std::string>& labels) {
  BeginPacket(false, 0, 0);
  w_.BeginNested(pf::kPacketTrackDescriptor);
  w_.Varint(pf::kTrackUuid, uuid);
  w_.BeginNested(pf::kTrackProcess);
  w_.Int(pf::kProcessPid, pid);
  w_.String(pf::kProcessName, name);
  for (const std::string& label : labels)
    w_.String(pf::kProcessLabels, label);
  w_.EndNested();
  w_.EndNested();
  EndPacket();
}

void PerfettoTraceWriter::ThreadTrack(uint64_t uuid, int32_t pid, int64_t tid, std::string_view name) {
  BeginPacket(false, 0, 0);
  w_.BeginNested(pf::kPacketTrackDescriptor);
  w_.Varint(pf::kTrackUuid, uuid);
  w_.BeginNested(pf::kTrackThread);
  w_.Int(pf::kThreadPid, pid);
  w_.Int(pf::kThreadTid, tid);
  w_.String(pf::kThreadName, name);
  w_.EndNested();
  w_.EndNested();
  EndPacket();
}

void PerfettoTraceWriter::Track(uint64_t uuid,
                                uint64_t parent_uuid,
                                std::string_view name,
                                std::string_view description,
                                bool explicit_child_order,
                                int32_t sibling_rank) {
  BeginPacket(false, 0, 0);
  w_.BeginNested(pf::kPacketTrackDescriptor);
  w_.Varint(pf::kTrackUuid, uuid);
  if (parent_uuid != 0)
    w_.Varint(pf::kTrackParentUuid, parent_uuid);
  w_.String(pf::kTrackName, name);
  if (!description.empty())
    w_.String(pf::kTrackDescription, description);
  if (explicit_child_order)
    w_.Varint(pf::kTrackChildOrdering, pf::kChildOrderingExplicit);
  if (sibling_rank >= 0)
    w_.Int(pf::kTrackSiblingOrderRank, sibling_rank);
  w_.EndNested();
  EndPacket();
}

void PerfettoTraceWriter::CounterTrack(uint64_t uuid,
                                       uint64_t parent_uuid,
                                       std::string_view name,
                                       std::string_view unit_name) {
  BeginPacket(false, 0, 0);
  w_.BeginNested(pf::kPacketTrackDescriptor);
  w_.Varint(pf::kTrackUuid, uuid);
  if (parent_uuid != 0)
    w_.Varint(pf::kTrackParentUuid, parent_uuid);
  w_.String(pf::kTrackName, name);
  w_.BeginNested(pf::kTrackCounter);
  if (!unit_name.empty())
    w_.String(pf::kCounterUnitName, unit_name);
  w_.EndNested();
  w_.EndNested();
  EndPacket();
}

void PerfettoTraceWriter::TrackEvent(int64_t ts_ns,
                                     uint32_t type,
                                     uint64_t track,
                                     std::string_view category,
                                     std::string_view name,
                                     const std::vector<Arg>* args,
                                     Flows flows) {
  // Intern first: new entries go into this packet's InternedData.
  bool new_category = false, new_name = false;
  uint64_t category_iid = category.empty() ? 0 : categories_.Lookup(category, &new_category);
  uint64_t name_iid = name.empty() ? 0 : names_.Lookup(name, &new_name);
  std::vector<std::pair<uint64_t, std::string_view>> new_annotations;
  std::vector<uint64_t> annotation_iids;
  if (args != nullptr) {
    for (const Arg& a : *args) {
      bool added = false;
      uint64_t iid = annotation_names_.Lookup(a.name, &added);
      annotation_iids.push_back(iid);
      if (added)
        new_annotations.emplace_back(iid, a.name);
    }
  }
  bool interned = category_iid != 0 || name_iid != 0 || !annotation_iids.empty();
  BeginPacket(true, ts_ns, interned ? pf::kSeqNeedsIncrementalState : 0);
  w_.BeginNested(pf::kPacketTrackEvent);
  w_.Varint(pf::kEventType, type);
  w_.Varint(pf::kEventTrackUuid, track);
  if (category_iid != 0)
    w_.Varint(pf::kEventCategoryIids, category_iid);
  if (name_iid != 0) {
    w_.Varint(pf::kEventNameIid, name_iid);
  } else if (!name.empty()) {
    w_.String(pf::kEventName, name);  // past the interning budget
  }
  if (args != nullptr) {
    for (size_t i = 0; i < args->size(); ++i) {
      const Arg& a = (*args)[i];
      w_.BeginNested(pf::kEventDebugAnnotations);
      if (annotation_iids[i] != 0) {
        w_.Varint(pf::kAnnotationNameIid, annotation_iids[i]);
      } else {
        w_.String(10, a.name);  // DebugAnnotation.name
      }
      if (a.is_string) {
        w_.String(pf::kAnnotationStringValue, a.string_value);
      } else {
        w_.Int(pf::kAnnotationIntValue, a.int_value);
      }
      w_.EndNested();
    }
  }
  if (flows.out != 0)
    w_.Fixed64(pf::kEventFlowIds, flows.out);
  if (flows.terminating != 0)
    w_.Fixed64(pf::kEventTerminatingFlowIds, flows.terminating);
  w_.EndNested();
  if (new_category || new_name || !new_annotations.empty()) {
    w_.BeginNested(pf::kPacketInternedData);
    if (new_category) {
      w_.BeginNested(pf::kInternedEventCategories);
      w_.Varint(pf::kInternedIid, category_iid);
      w_.String(pf::kInternedName, category);
      w_.EndNested();
    }
    if (new_name) {
      w_.BeginNested(pf::kInternedEventNames);
      w_.Varint(pf::kInternedIid, name_iid);
      w_.String(pf::kInternedName, name);
      w_.EndNested();
    }
    for (const auto& [iid, text] : new_annotations) {
      w_.BeginNested(pf::kInternedDebugAnnotationNames);
      w_.Varint(pf::kInternedIid, iid);
      w_.String(pf::kInternedName, text);
      w_.EndNested();
    }
    w_.EndNested();
  }
  EndPacket();
}

void PerfettoTraceWriter::SliceBegin(int64_t ts_ns,
                                     uint64_t track,
                                     std::string_view category,
                                     std::string_view name,
                                     const std::vector<Arg>& args,
                                     Flows flows) {
  TrackEvent(ts_ns, pf::kTypeSliceBegin, track, category, name, &args, flows);
}

void PerfettoTraceWriter::SliceEnd(int64_t ts_ns, uint64_t track) {
  TrackEvent(ts_ns, pf::kTypeSliceEnd, track, {}, {}, nullptr, {});
}

void PerfettoTraceWriter::Instant(int64_t ts_ns,
                                  uint64_t track,
                                  std::string_view category,
                                  std::string_view name,
                                  const std::vector<Arg>& args) {
  TrackEvent(ts_ns, pf::kTypeInstant, track, category, name, &args, {});
}

void PerfettoTraceWriter::Counter(int64_t ts_ns, uint64_t track, int64_t value) {
  BeginPacket(true, ts_ns, 0);
  w_.BeginNested(pf::kPacketTrackEvent);
  w_.Varint(pf::kEventType, pf::kTypeCounter);
  w_.Varint(pf::kEventTrackUuid, track);
  w_.Int(pf::kEventCounterValue, value);
  w_.EndNested();
  EndPacket();
}

}  // namespace gt::viewers
