// OS runtime tracing, unit level: the field numbers of inject/osrt/osrt_fields.h against the protoc
// descriptor (every field of osrt.proto and every Chunk field in 140-159 has a constant), the export
// field map (every field mapped or listed as not exported), the configuration (trace list,
// GTRACE_OSRT_THRESHOLD, the backtrace variables), the record decoder, and the interposed names:
// the X-macro list, inject/gtrace.map and tests/integration/symbols_test.sh hold exactly the same set.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "collector/chunk_builder.h"
#include "collector/config.h"
#include "collector/string_interner.h"
#include "collector/thread_ring.h"
#include "gtrace.pb.h"
#include "inject/osrt/osrt_fields.h"
#include "inject/osrt/osrt_functions.h"
#include "inject/osrt/osrt_tracer.h"
#include "osrt.pb.h"
#include "tests/common/test_util.h"
#include "tools/export/osrt_field_map.h"

namespace gt {
namespace {

std::map<std::string, std::set<std::string>>& Checked() {
  static std::map<std::string, std::set<std::string>> checked;
  return checked;
}

void ExpectField(const google::protobuf::Descriptor* d, const std::string& name, uint32_t number) {
  const google::protobuf::FieldDescriptor* f = d->FindFieldByName(name);
  ASSERT_NE(f, nullptr) << d->name() << "." << name << " is not in the schema";
  EXPECT_EQ(static_cast<uint32_t>(f->number()), number) << d->name() << "." << name;
  Checked()[d->name()].insert(name);
}

#define EXPECT_FIELD(Message, name, constant) ExpectField(schema::Message::descriptor(), name, constant)

TEST(OsrtFields, MatchDescriptorAndMap) {
  EXPECT_FIELD(Chunk, "osrt_config", field::chunk::kOsrtConfig);
  EXPECT_FIELD(Chunk, "osrt_calls", field::chunk::kOsrtCalls);
  EXPECT_FIELD(OsrtConfig, "threshold_ns", field::osrt_config::kThresholdNs);
  EXPECT_FIELD(OsrtConfig, "functions_traced", field::osrt_config::kFunctionsTraced);
  EXPECT_FIELD(OsrtCall, "start_delta_ns", field::osrt_call::kStartDeltaNs);
  EXPECT_FIELD(OsrtCall, "duration_ns", field::osrt_call::kDurationNs);
  EXPECT_FIELD(OsrtCall, "name_id", field::osrt_call::kNameId);
  EXPECT_FIELD(OsrtCall, "return_value", field::osrt_call::kReturnValue);
  EXPECT_FIELD(OsrtCall, "stack_id", field::osrt_call::kStackId);
  EXPECT_FIELD(OsrtConfig, "backtrace_threshold_ns", field::osrt_config::kBacktraceThresholdNs);
  EXPECT_FIELD(OsrtConfig, "backtrace_depth", field::osrt_config::kBacktraceDepth);
  EXPECT_FIELD(OsrtConfig, "unwinder_path", field::osrt_config::kUnwinderPath);
  const google::protobuf::Descriptor* chunk = schema::Chunk::descriptor();
  int in_range = 0;
  for (int i = 0; i < chunk->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* f = chunk->field(i);
    if (f->number() < 140 || f->number() > 159)
      continue;
    ++in_range;
    EXPECT_TRUE(Checked()["Chunk"].count(f->name())) << "Chunk." << f->name() << " (OSRT range) has no constant";
  }
  EXPECT_EQ(in_range, 2);
  // Every field of every message has a constant and a destination in the export.
  std::set<std::pair<std::string, std::string>> mapped;
  for (const auto& d : exporter::kOsrtFieldMap)
    mapped.insert({d.message, d.field});
  for (const google::protobuf::Descriptor* d : {schema::OsrtConfig::descriptor(), schema::OsrtCall::descriptor()}) {
    for (int i = 0; i < d->field_count(); ++i) {
      EXPECT_TRUE(Checked()[d->name()].count(d->field(i)->name())) << d->name() << "." << d->field(i)->name();
      EXPECT_TRUE(mapped.count({d->name(), d->field(i)->name()})) << d->name() << "." << d->field(i)->name()
                                                                   << " is not in osrt_field_map.h";
    }
  }
  EXPECT_EQ(mapped.size(), 10u);
}

std::map<std::string, std::string>* g_env;
const char* FakeGetenv(const char* name) {
  auto it = g_env->find(name);
  return it != g_env->end() ? it->second.c_str() : nullptr;
}

Config Load(std::map<std::string, std::string> env) {
  g_env = &env;
  std::vector<std::string> storage;
  for (auto& [k, v] : env)
    storage.push_back(k + "=" + v);
  std::vector<char*> list;
  for (auto& s : storage)
    list.push_back(s.data());
  list.push_back(nullptr);
  Config c = LoadConfig(FakeGetenv, list.data());
  g_env = nullptr;
  return c;
}

TEST(OsrtConfig, TraceListThresholdAndBacktraceVariables) {
  Config c = Load({{"GTRACE_TRACE", "osrt"}});
  EXPECT_EQ(c.sources, static_cast<uint32_t>(kSourceOsrt));
  EXPECT_EQ(c.osrt_threshold_ns, 1000u);  // nsys's default
  EXPECT_TRUE(c.warnings.empty());
  c = Load({{"GTRACE_TRACE", "cuda,osrt"}, {"GTRACE_OSRT_THRESHOLD", "250000"}});
  EXPECT_EQ(c.sources, static_cast<uint32_t>(kSourceCuda | kSourceOsrt));
  EXPECT_EQ(c.osrt_threshold_ns, 250000u);
  c = Load({{"GTRACE_OSRT_THRESHOLD", "0"}});
  EXPECT_EQ(c.osrt_threshold_ns, 0u);
  EXPECT_EQ(c.sources & kSourceOsrt, 0u);  // the default trace list has no osrt (as nsys's)
  c = Load({{"GTRACE_OSRT_THRESHOLD", "1ms"}});
  EXPECT_EQ(c.osrt_threshold_ns, 1000u);
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_NE(c.warnings[0].find("GTRACE_OSRT_THRESHOLD"), std::string::npos);
  // OS runtime backtraces: off unless the threshold is given; nsys's defaults otherwise.
  EXPECT_FALSE(c.osrt_backtrace);
  EXPECT_EQ(c.osrt_backtrace_threshold_ns, 80000u);
  EXPECT_EQ(c.osrt_backtrace_depth, 24u);
  c = Load({{"GTRACE_OSRT_BACKTRACE_THRESHOLD", "5000000"}, {"GTRACE_OSRT_BACKTRACE_DEPTH", "12"}});
  EXPECT_TRUE(c.warnings.empty());
  EXPECT_TRUE(c.osrt_backtrace);
  EXPECT_EQ(c.osrt_backtrace_threshold_ns, 5000000u);
  EXPECT_EQ(c.osrt_backtrace_depth, 12u);
  c = Load({{"GTRACE_OSRT_BACKTRACE_THRESHOLD", "0"}, {"GTRACE_OSRT_BACKTRACE_DEPTH", "65"}});
  EXPECT_TRUE(c.osrt_backtrace);
  EXPECT_EQ(c.osrt_backtrace_threshold_ns, 0u);
  EXPECT_EQ(c.osrt_backtrace_depth, 24u);  // out of 1..64: the default, with a warning
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_NE(c.warnings[0].find("GTRACE_OSRT_BACKTRACE_DEPTH"), std::string::npos);
}

TEST(OsrtDecoder, RecordBecomesOneOsrtCall) {
  StringInterner interner;
  ChunkBuilder chunk(&interner);
  chunk.Begin(7, 4242, 1000);
  unsigned char bytes[kSlotBytes] = {};
  RecordHeader h{};
  h.type = kRecordOsrt;
  h.aux16 = osrt::kFn_pthread_mutex_lock;
  h.ts_ns = 1500;
  struct {
    uint64_t duration_ns;
    int64_t return_value;
  } p = {5000000, -4};
  std::memcpy(bytes, &h, sizeof(h));
  std::memcpy(bytes + sizeof(h), &p, sizeof(p));
  RecordView view{reinterpret_cast<const RecordHeader*>(bytes), bytes, sizeof(bytes), 4242};
  osrt::DecodeRecord(view, &chunk);
  h.aux16 = osrt::kFunctionCount;  // unknown function: nothing written
  std::memcpy(bytes, &h, sizeof(h));
  osrt::DecodeRecord(view, &chunk);
  chunk.End();
  schema::StreamFile f;
  ASSERT_TRUE(f.ParseFromString(*chunk.output()));
  ASSERT_EQ(f.chunk_size(), 1);
  const schema::Chunk& c = f.chunk(0);
  ASSERT_EQ(c.osrt_calls_size(), 1);
  EXPECT_EQ(c.base_ns() + c.osrt_calls(0).start_delta_ns(), 1500u);
  EXPECT_EQ(c.osrt_calls(0).duration_ns(), 5000000u);
  EXPECT_EQ(c.osrt_calls(0).return_value(), -4);
  ASSERT_EQ(c.strings_size(), 1);
  EXPECT_EQ(c.strings(0).id(), c.osrt_calls(0).name_id());
  EXPECT_EQ(c.strings(0).text(), "pthread_mutex_lock");
  EXPECT_EQ(chunk.intern_misuse(), 0u);
}

std::set<std::string> Words(const std::string& text, const std::regex& re) {
  std::set<std::string> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it)
    out.insert((*it)[1].str());
  return out;
}

TEST(OsrtSymbols, FunctionListMapAndSymbolTestAgree) {
  std::set<std::string> names;
  for (uint32_t i = 0; i < osrt::kFunctionCount; ++i) {
    ASSERT_NE(osrt::FunctionName(i), nullptr);
    EXPECT_TRUE(names.insert(osrt::FunctionName(i)).second) << "duplicate " << osrt::FunctionName(i);
  }
  EXPECT_EQ(osrt::FunctionName(osrt::kFunctionCount), nullptr);
  EXPECT_EQ(names.size(), 87u);
  // gtrace.map: the OSRT block lists exactly these names.
  std::string map = test::ReadFile(test::SourceDir() + "/inject/gtrace.map");
  size_t begin = map.find("Issue 18");
  size_t end = map.find("local:");
  ASSERT_NE(begin, std::string::npos);
  ASSERT_NE(end, std::string::npos);
  std::string block = map.substr(map.find("*/", begin) + 2, end - map.find("*/", begin) - 2);
  EXPECT_EQ(Words(block, std::regex("([A-Za-z_0-9]+);")), names);
  // symbols_test.sh: its osrt= lines list exactly these names too.
  std::string sh = test::ReadFile(test::SourceDir() + "/tests/integration/symbols_test.sh");
  std::set<std::string> listed;
  std::istringstream lines(sh);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("osrt=\"", 0) != 0)
      continue;
    std::istringstream words(line.substr(6, line.size() - 7));
    for (std::string w; words >> w;) {
      if (w != "$osrt")
        listed.insert(w);
    }
  }
  EXPECT_EQ(listed, names);
}

}  // namespace
}  // namespace gt
