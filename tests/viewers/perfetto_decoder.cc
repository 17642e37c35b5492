#include "tests/viewers/perfetto_decoder.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/reflection.h>
#include <google/protobuf/unknown_field_set.h>

#include <functional>

#include "perfetto_subset.pb.h"

namespace gt::viewers::testing {
namespace {

namespace pb = perfetto::protos;
using google::protobuf::Message;

// Fields the subset does not declare would show up here: the encoder wrote a wrong number or type.
void CheckNoUnknownFields(const Message& m, const std::string& where, std::vector<std::string>* errors) {
  const auto* reflection = m.GetReflection();
  if (!reflection->GetUnknownFields(m).empty())
    errors->push_back(where + ": unknown fields in " + m.GetTypeName());
  std::vector<const google::protobuf::FieldDescriptor*> fields;
  reflection->ListFields(m, &fields);
  for (const auto* f : fields) {
    if (f->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE)
      continue;
    if (f->is_repeated()) {
      for (int i = 0; i < reflection->FieldSize(m, f); ++i) {
        CheckNoUnknownFields(reflection->GetRepeatedMessage(m, f, i), where, errors);
      }
    } else {
      CheckNoUnknownFields(reflection->GetMessage(m, f), where, errors);
    }
  }
}

}  // namespace

std::vector<uint64_t> DecodedTrace::TracksNamed(const std::string& name, uint64_t parent) const {
  std::vector<uint64_t> out;
  for (const auto& [uuid, t] : tracks) {
    if (t.name == name && (parent == 0 || t.parent_uuid == parent))
      out.push_back(uuid);
  }
  return out;
}

uint64_t DecodedTrace::ProcessTrack(int64_t pid) const {
  for (const auto& [uuid, t] : tracks) {
    if (t.kind == 1 && t.pid == pid)
      return uuid;
  }
  return 0;
}

uint64_t DecodedTrace::ThreadTrack(int64_t pid, int64_t tid) const {
  for (const auto& [uuid, t] : tracks) {
    if (t.kind == 2 && t.pid == pid && t.tid == tid)
      return uuid;
  }
  return 0;
}

std::vector<const DecodedSlice*> DecodedTrace::SlicesOn(uint64_t track) const {
  std::vector<const DecodedSlice*> out;
  for (const DecodedSlice& s : slices) {
    if (s.track == track)
      out.push_back(&s);
  }
  return out;
}

DecodedTrace DecodePerfetto(const std::string& bytes) {
  DecodedTrace d;
  pb::Trace trace;
  if (!trace.ParseFromString(bytes)) {
    d.errors.push_back("not a Trace message");
    return d;
  }
  CheckNoUnknownFields(trace, "trace", &d.errors);
  std::map<uint64_t, std::string> names, categories, annotation_names;
  std::map<uint64_t, std::vector<size_t>> open;  // track -> indices of open slices
  bool state_cleared = false;
  int64_t last_ts = -1;
  for (int i = 0; i < trace.packet_size(); ++i) {
    const pb::TracePacket& p = trace.packet(i);
    const std::string where = "packet " + std::to_string(i);
    ++d.packets;
    if (p.trusted_packet_sequence_id() != 1)
      d.errors.push_back(where + ": sequence id " + std::to_string(p.trusted_packet_sequence_id()));
    if (i == 0) {
      state_cleared = (p.sequence_flags() & 1) != 0 && p.first_packet_on_sequence();
      if (!state_cleared)
        d.errors.push_back("first packet does not clear the incremental state");
    }
    if (p.has_interned_data()) {
      for (const auto& e : p.interned_data().event_names())
        names[e.iid()] = e.name(), ++d.interned_names;
      for (const auto& e : p.interned_data().event_categories())
        categories[e.iid()] = e.name();
      for (const auto& e : p.interned_data().debug_annotation_names())
        annotation_names[e.iid()] = e.name();
    }
    if (p.has_clock_snapshot()) {
      ++d.clock_snapshots;
      for (const auto& c : p.clock_snapshot().clocks()) {
        if (c.clock_id() == 1)
          d.utc_at_zero_ns = static_cast<int64_t>(c.timestamp());
      }
    }
    if (p.has_track_descriptor()) {
      ++d.descriptors;
      const pb::TrackDescriptor& t = p.track_descriptor();
      DecodedTrack track;
      track.uuid = t.uuid();
      track.parent_uuid = t.parent_uuid();
      track.name = t.name();
      if (t.has_process()) {
        track.kind = 1;
        track.pid = t.process().pid();
        track.name = t.process().process_name();
        track.labels.assign(t.process().process_labels().begin(), t.process().process_labels().end());
      } else if (t.has_thread()) {
        track.kind = 2;
        track.pid = t.thread().pid();
        track.tid = t.thread().tid();
        track.name = t.thread().thread_name();
      } else if (t.has_counter()) {
        track.kind = 3;
      }
      if (d.tracks.count(track.uuid) != 0)
        d.errors.push_back(where + ": uuid declared twice");
      if (track.parent_uuid != 0 && d.tracks.count(track.parent_uuid) == 0) {
        d.errors.push_back(where + ": parent " + std::to_string(track.parent_uuid) + " not declared before");
      }
      d.tracks[track.uuid] = track;
    }
    if (!p.has_track_event())
      continue;
    const pb::TrackEvent& e = p.track_event();
    if (!p.has_timestamp())
      d.errors.push_back(where + ": track event without timestamp");
    int64_t ts = static_cast<int64_t>(p.timestamp());
    if (ts < last_ts)
      d.errors.push_back(where + ": timestamp goes backwards");
    last_ts = ts;
    if (d.tracks.count(e.track_uuid()) == 0)
      d.errors.push_back(where + ": event on undeclared track");
    bool uses_interning = e.name_iid() != 0 || e.category_iids_size() > 0 || e.debug_annotations_size() > 0;
    if (uses_interning && (p.sequence_flags() & 2) == 0)
      d.errors.push_back(where + ": interned ids without SEQ_NEEDS_INCREMENTAL_STATE");
    DecodedSlice s;
    s.track = e.track_uuid();
    s.start_ns = s.end_ns = ts;
    if (e.name_iid() != 0) {
      auto it = names.find(e.name_iid());
      if (it == names.end())
        d.errors.push_back(where + ": name iid " + std::to_string(e.name_iid()) + " not interned");
      else
        s.name = it->second;
    } else {
      s.name = e.name();
    }
    for (uint64_t c : e.category_iids()) {
      auto it = categories.find(c);
      if (it == categories.end())
        d.errors.push_back(where + ": category iid not interned");
      else
        s.category = it->second;
    }
    for (const auto& a : e.debug_annotations()) {
      std::string key = a.name();
      if (a.name_iid() != 0) {
        auto it = annotation_names.find(a.name_iid());
        if (it == annotation_names.end())
          d.errors.push_back(where + ": annotation name iid not interned");
        else
          key = it->second;
      }
      s.args[key] = a.has_string_value() ? a.string_value() : std::to_string(a.int_value());
    }
    s.flow_ids.assign(e.flow_ids().begin(), e.flow_ids().end());
    s.terminating_flow_ids.assign(e.terminating_flow_ids().begin(), e.terminating_flow_ids().end());
    switch (e.type()) {
      case pb::TrackEvent::TYPE_SLICE_BEGIN:
        ++d.begins;
        open[s.track].push_back(d.slices.size());
        d.slices.push_back(std::move(s));
        break;
      case pb::TrackEvent::TYPE_SLICE_END: {
        ++d.ends;
        auto& stack = open[e.track_uuid()];
        if (stack.empty()) {
          d.errors.push_back(where + ": END without an open slice");
          break;
        }
        d.slices[stack.back()].end_ns = ts;
        stack.pop_back();
        break;
      }
      case pb::TrackEvent::TYPE_INSTANT:
        ++d.instants_count;
        d.instants.push_back(std::move(s));
        break;
      case pb::TrackEvent::TYPE_COUNTER:
        ++d.counters_count;
        d.counters.push_back({e.track_uuid(), {ts, e.counter_value()}});
        break;
      default:
        d.errors.push_back(where + ": unexpected event type");
    }
  }
  for (const auto& [track, stack] : open) {
    if (!stack.empty())
      d.errors.push_back("track " + std::to_string(track) + ": slices left open");
  }
  return d;
}

}  // namespace gt::viewers::testing
