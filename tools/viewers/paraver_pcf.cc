#include "tools/viewers/paraver_pcf.h"

namespace gt::viewers::prv {
namespace {

struct StateLabel {
  int value;
  const char* label;
  const char* color;
};

// Extrae's state table (labels and colors), so Paraver's stock configurations read our traces.
constexpr StateLabel kStates[] = {
    {0, "Idle", "{117,195,255}"},
    {1, "Running", "{0,0,255}"},
    {2, "Not created", "{255,255,255}"},
    {3, "Waiting a message", "{255,0,0}"},
    {4, "Blocking Send", "{255,0,174}"},
    {5, "Synchronization", "{179,0,0}"},
    {6, "Test/Probe", "{0,255,0}"},
    {7, "Scheduling and Fork/Join", "{255,255,0}"},
    {8, "Wait/WaitAll", "{235,0,0}"},
    {9, "Blocked", "{0,162,0}"},
    {10, "Immediate Send", "{255,0,255}"},
    {11, "Immediate Receive", "{100,100,177}"},
    {12, "I/O", "{172,174,41}"},
    {13, "Group Communication", "{255,144,26}"},
    {14, "Tracing Disabled", "{2,255,177}"},
    {15, "Others", "{192,224,0}"},
    {16, "Send Receive", "{66,66,66}"},
    {17, "Memory transfer", "{255,0,96}"},
    {18, "Profiling", "{169,169,169}"},
    {19, "On-line analysis", "{169,0,0}"},
    {20, "Remote memory access", "{0,109,255}"},
    {21, "Atomic memory operation", "{200,61,68}"},
    {22, "Memory ordering operation", "{200,66,0}"},
    {23, "Distributed locking", "{0,41,0}"},
    {24, "Overhead", "{139,121,177}"},
    {25, "One-sided op", "{116,116,116}"},
    {26, "Startup latency", "{200,50,89}"},
    {27, "Waiting links", "{255,171,98}"},
    {28, "Data copy", "{0,68,189}"},
    {29, "RTT", "{52,43,0}"},
    {30, "Allocating memory", "{255,46,0}"},
    {31, "Freeing memory", "{100,216,32}"},
    {32, "Configuring accelerator", "{118,185,0}"},
    {33, "Stream Registration", "{80,185,160}"},
};

// Labels are one line in the .pcf: no newlines.
std::string OneLine(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c == '\n' || c == '\r')
      c = ' ';
  }
  return out;
}

}  // namespace

void ParaverLabels::NamedType(int64_t type, std::string label) {
  Type& t = types_[type];
  t.label = std::move(label);
  t.named = true;
}

void ParaverLabels::NumericType(int64_t type, std::string label) {
  types_[type].label = std::move(label);
}

uint64_t ParaverLabels::Value(int64_t type, std::string_view name) {
  Type& t = types_[type];
  bool added = false;
  uint64_t id = t.values.Lookup(name, &added);
  return id != 0 ? id : t.values.names().size() + 1;  // past the bound: "(more names)"
}

std::string ParaverLabels::PcfText() const {
  std::string out =
      "DEFAULT_OPTIONS\n\n"
      "LEVEL               THREAD\n"
      "UNITS               NANOSEC\n"
      "LOOK_BACK           100\n"
      "SPEED               1\n"
      "FLAG_ICONS          ENABLED\n"
      "NUM_OF_STATE_COLORS 1000\n"
      "YMAX_SCALE          37\n\n\n"
      "DEFAULT_SEMANTIC\n\n"
      "THREAD_FUNC          State As Is\n\n\n"
      "STATES\n";
  for (const StateLabel& s : kStates)
    out += std::to_string(s.value) + "    " + s.label + "\n";
  out += "\n\nSTATES_COLOR\n";
  for (const StateLabel& s : kStates)
    out += std::to_string(s.value) + "    " + s.color + "\n";
  out += "\n\n";
  for (const auto& [type, t] : types_) {
    out += "EVENT_TYPE\n0    " + std::to_string(type) + "    " + OneLine(t.label) + "\n";
    if (t.named) {
      out += "VALUES\n0      End\n";
      const auto& names = t.values.names();
      for (size_t i = 0; i < names.size(); ++i)
        out += std::to_string(i + 1) + "      " + OneLine(names[i]) + "\n";
      if (t.values.full())
        out += std::to_string(names.size() + 1) + "      (more names)\n";
    }
    out += "\n\n";
  }
  return out;
}

}  // namespace gt::viewers::prv
