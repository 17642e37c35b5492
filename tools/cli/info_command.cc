// `gtrace info STREAM...`: what a stream holds — header, chunk and event counts, drops, whether it
// was closed or cut. Exit 1 when a stream is unreadable or damaged.
#include <iostream>
#include <map>

#include "tools/cli/args.h"
#include "tools/cli/commands.h"
#include "tools/stream/stream_reader.h"

namespace gt::cli {
namespace {

int Describe(const std::string& path, bool json) {
  stream::StreamReader r;
  Status st = r.Open(path);
  if (!st.ok()) {
    std::cerr << "gtrace: info: " << st.message() << "\n";
    return 1;
  }
  const schema::StreamHeader& h = r.header();
  std::map<std::string, uint64_t> events;
  std::map<std::string, uint64_t> drops;
  uint64_t strings = 0, threads = 0;
  schema::StreamStats stats;
  bool has_stats = false;
  schema::Chunk c;
  while (true) {
    bool has = false;
    st = r.Next(&c, &has);
    if (!st.ok()) {
      std::cerr << "gtrace: info: " << st.message() << "\n";
      return 1;
    }
    if (!has) break;
    strings += static_cast<uint64_t>(c.strings_size());
    threads += c.has_thread() ? 1 : 0;
    // Every repeated message field of the chunk, by name: new subsystems show up without edits.
    const google::protobuf::Reflection* refl = c.GetReflection();
    const google::protobuf::Descriptor* desc = c.GetDescriptor();
    for (int i = 0; i < desc->field_count(); ++i) {
      const google::protobuf::FieldDescriptor* f = desc->field(i);
      if (!f->is_repeated() || f->type() != google::protobuf::FieldDescriptor::TYPE_MESSAGE) continue;
      if (f->number() == schema::Chunk::kStringsFieldNumber || f->number() == schema::Chunk::kDropsFieldNumber) continue;
      int n = refl->FieldSize(c, f);
      if (n > 0) events[f->name()] += static_cast<uint64_t>(n);
    }
    for (const auto& d : c.drops()) drops[schema::DropSource_Name(d.source())] += d.dropped_records();
    if (c.has_stats()) {
      stats = c.stats();
      has_stats = true;
    }
  }
  const stream::ReadSummary& s = r.summary();
  std::string cmd;
  for (const auto& a : h.command_line()) cmd += (cmd.empty() ? "" : " ") + a;
  uint64_t dropped_total = 0;
  for (auto& [k, v] : drops) dropped_total += v;
  // The clock on disk (the reader converts tick streams to CLOCK_MONOTONIC ns for everything else).
  std::string clock = r.recorded_clock() == schema::CLOCK_ID_TSC ? "tsc" : "monotonic";
  std::string clock_detail;
  if (r.tick_clock().active()) {
    char b[96];
    snprintf(b, sizeof(b), " (%zu calibration pairs, %.3f MHz)", r.tick_clock().pair_count(),
             r.tick_clock().ticks_per_second() / 1e6);
    clock_detail = b;
  }
  if (json) {
    auto q = [](const std::string& t) {
      std::string o = "\"";
      for (char ch : t) {
        if (ch == '"' || ch == '\\') o += '\\';
        if (static_cast<unsigned char>(ch) < 0x20) {
          char b[8];
          snprintf(b, sizeof(b), "\\u%04x", ch);
          o += b;
          continue;
        }
        o += ch;
      }
      return o + "\"";
    };
    std::cout << "{\"file\":" << q(path) << ",\"format\":\"" << h.format_major() << "." << h.format_minor()
              << "\",\"gtrace_version\":" << q(h.gtrace_version()) << ",\"host\":" << q(h.host_name())
              << ",\"pid\":" << h.pid() << ",\"ppid\":" << h.ppid() << ",\"rank\":" << h.rank()
              << ",\"local_rank\":" << h.local_rank() << ",\"world_size\":" << h.world_size()
              << ",\"command\":" << q(cmd) << ",\"trace\":" << q(h.trace()) << ",\"clock\":" << q(clock) << ",\"bytes\":" << s.file_bytes
              << ",\"chunks\":" << s.chunks << ",\"complete\":" << (s.end_of_stream ? "true" : "false")
              << ",\"end_reason\":" << q(s.end_of_stream ? stats.close_reason() : std::string("cut"))
              << ",\"last_chunk_ns\":" << s.last_chunk_ns
              << ",\"truncated_bytes\":" << s.truncated_bytes << ",\"strings\":" << strings
              << ",\"threads\":" << threads << ",\"dropped_records\":" << dropped_total << ",\"events\":{";
    bool first = true;
    for (auto& [k, v] : events) {
      std::cout << (first ? "" : ",") << q(k) << ":" << v;
      first = false;
    }
    std::cout << "}}\n";
    return 0;
  }
  std::cout << path << "\n"
            << "  format         " << h.format_major() << "." << h.format_minor() << " (gtrace " << h.gtrace_version()
            << ")\n"
            << "  process        pid " << h.pid() << " (parent " << h.ppid() << ") on " << h.host_name() << "\n"
            << "  command        " << cmd << "\n"
            << "  rank           " << (h.rank() >= 0 ? std::to_string(h.rank()) : "-") << " (local "
            << (h.local_rank() >= 0 ? std::to_string(h.local_rank()) : "-") << ", world "
            << (h.world_size() >= 0 ? std::to_string(h.world_size()) : "-") << ")"
            << (h.rank_source().empty() ? "" : " from " + h.rank_source()) << "\n"
            << "  traced         " << h.trace() << "\n"
            << "  clock          " << clock << clock_detail << "\n"
            << "  size           " << s.file_bytes << " bytes, " << s.chunks << " chunks\n"
            << "  threads        " << threads << "\n"
            << "  strings        " << strings << "\n";
  for (auto& [k, v] : events) {
    std::cout << "  " << k << std::string(k.size() < 15 ? 15 - k.size() : 1, ' ') << v << "\n";
  }
  std::cout << "  dropped        " << dropped_total;
  for (auto& [k, v] : drops) std::cout << " (" << k << ": " << v << ")";
  std::cout << "\n";
  if (has_stats && s.end_of_stream) {
    std::cout << "  closed         yes (" << stats.close_reason() << "), " << stats.records_written()
              << " records written\n";
  } else {
    // Cut (SIGKILL, or still running): when the kept data ends, relative to the stream's start.
    uint64_t start = h.start_clock().stream_clock_ns();
    uint64_t last = s.last_chunk_ns > start ? s.last_chunk_ns - start : 0;
    std::cout << "  closed         no; last complete chunk at +" << last / 1000000 << " ms ("
              << s.last_chunk_ns << " ns on the stream clock)\n";
  }
  std::string warning = r.TruncationWarning();
  if (!warning.empty()) std::cout << "  warning        " << warning << "\n";
  return 0;
}

}  // namespace

int RunInfo(const std::vector<std::string>& args) {
  bool json = false;
  ArgParser p("info", "gtrace info [--json] <stream.gtrace>...",
              "Describes gtrace streams: header (process, rank, command), counts, drops, completeness.");
  p.Add({"json", 0, false, "", "one JSON object per stream", [&](std::string_view v) {
           ParseBoolValue(v, &json);
           return Status::Ok();
         }});
  std::vector<std::string> files;
  bool help = false;
  Status st = p.Parse(args, false, &files, &help);
  if (help) {
    std::cout << p.Help();
    return 0;
  }
  if (!st.ok()) {
    std::cerr << "gtrace: " << st.message() << "\n";
    return 2;
  }
  if (files.empty()) {
    std::cerr << "gtrace: info: no stream given\n";
    return 2;
  }
  int rc = 0;
  for (const std::string& f : files) rc |= Describe(f, json);
  return rc;
}

}  // namespace gt::cli
