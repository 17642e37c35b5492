// Every field-number constant of inject/callstack/callstack_fields.h equals the protoc descriptor's,
// every field of callstack.proto (and every Chunk field in 120-139) has a constant, and every field is
// mapped to the export or listed as deliberately not exported (tools/export/callstack_field_map.h).
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "callstack.pb.h"
#include "gtrace.pb.h"
#include "inject/callstack/callstack_fields.h"
#include "tools/export/callstack_field_map.h"

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

TEST(CallStackFields, ChunkFieldsMatchDescriptor) {
  namespace c = field::chunk;
  EXPECT_FIELD(Chunk, "callstack_config", c::kCallStackConfig);
  EXPECT_FIELD(Chunk, "loaded_modules", c::kLoadedModules);
  EXPECT_FIELD(Chunk, "module_unloads", c::kModuleUnloads);
  EXPECT_FIELD(Chunk, "callstack_defs", c::kCallStackDefs);
  EXPECT_FIELD(Chunk, "cuda_api_backtraces", c::kCudaApiBacktraces);
  EXPECT_FIELD(Chunk, "callstack_losses", c::kCallStackLosses);
  const google::protobuf::Descriptor* chunk = schema::Chunk::descriptor();
  int in_range = 0;
  for (int i = 0; i < chunk->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* f = chunk->field(i);
    if (f->number() < 120 || f->number() > 139)
      continue;
    ++in_range;
    EXPECT_TRUE(Checked()["Chunk"].count(f->name())) << "Chunk." << f->name() << " (call-stack range) has no constant";
  }
  EXPECT_EQ(in_range, 6);
}

TEST(CallStackFields, MessageFieldsMatchDescriptor) {
  {
    namespace f = field::callstack_config;
    EXPECT_FIELD(CallStackConfig, "spec", f::kSpec);
    EXPECT_FIELD(CallStackConfig, "classes", f::kClasses);
    EXPECT_FIELD(CallStackConfig, "max_frames", f::kMaxFrames);
    EXPECT_FIELD(CallStackConfig, "unwinder_path", f::kUnwinderPath);
    EXPECT_FIELD(CallStackConfig, "runtime_apis_selected", f::kRuntimeApisSelected);
    EXPECT_FIELD(CallStackConfig, "driver_apis_selected", f::kDriverApisSelected);
    EXPECT_FIELD(CallStackConfig, "max_nesting", f::kMaxNesting);
    EXPECT_FIELD(CallStackConfig, "python_backtrace", f::kPythonBacktrace);
    EXPECT_FIELD(CallStackConfig, "python_version", f::kPythonVersion);
  }
  EXPECT_FIELD(CallStackClassThreshold, "api_class", field::callstack_class_threshold::kApiClass);
  EXPECT_FIELD(CallStackClassThreshold, "threshold_ns", field::callstack_class_threshold::kThresholdNs);
  {
    namespace f = field::loaded_module;
    EXPECT_FIELD(LoadedModule, "module_id", f::kModuleId);
    EXPECT_FIELD(LoadedModule, "path", f::kPath);
    EXPECT_FIELD(LoadedModule, "build_id", f::kBuildId);
    EXPECT_FIELD(LoadedModule, "load_bias", f::kLoadBias);
    EXPECT_FIELD(LoadedModule, "start_address", f::kStartAddress);
    EXPECT_FIELD(LoadedModule, "end_address", f::kEndAddress);
    EXPECT_FIELD(LoadedModule, "loaded_ts_ns", f::kLoadedTsNs);
    EXPECT_FIELD(LoadedModule, "main_executable", f::kMainExecutable);
  }
  EXPECT_FIELD(ModuleUnload, "module_id", field::module_unload::kModuleId);
  EXPECT_FIELD(ModuleUnload, "ts_ns", field::module_unload::kTsNs);
  EXPECT_FIELD(CallStackDef, "stack_id", field::callstack_def::kStackId);
  EXPECT_FIELD(CallStackDef, "addresses", field::callstack_def::kAddresses);
  EXPECT_FIELD(CallStackDef, "truncated", field::callstack_def::kTruncated);
  EXPECT_FIELD(CallStackDef, "python_frames", field::callstack_def::kPythonFrames);
  EXPECT_FIELD(CallStackDef, "python_truncated", field::callstack_def::kPythonTruncated);
  EXPECT_FIELD(PythonFrame, "file_id", field::python_frame::kFileId);
  EXPECT_FIELD(PythonFrame, "function_id", field::python_frame::kFunctionId);
  EXPECT_FIELD(PythonFrame, "line", field::python_frame::kLine);
  {
    namespace f = field::cuda_api_backtrace;
    EXPECT_FIELD(CudaApiBacktrace, "start_delta_ns", f::kStartDeltaNs);
    EXPECT_FIELD(CudaApiBacktrace, "duration_ns", f::kDurationNs);
    EXPECT_FIELD(CudaApiBacktrace, "kind", f::kKind);
    EXPECT_FIELD(CudaApiBacktrace, "cbid", f::kCbid);
    EXPECT_FIELD(CudaApiBacktrace, "correlation_id", f::kCorrelationId);
    EXPECT_FIELD(CudaApiBacktrace, "stack_id", f::kStackId);
    EXPECT_FIELD(CudaApiBacktrace, "name_id", f::kNameId);
    EXPECT_FIELD(CudaApiBacktrace, "return_value", f::kReturnValue);
  }
  EXPECT_FIELD(CallStackLoss, "ts_ns", field::callstack_loss::kTsNs);
  EXPECT_FIELD(CallStackLoss, "nesting_overflow", field::callstack_loss::kNestingOverflow);
  EXPECT_FIELD(CallStackLoss, "unwind_failures", field::callstack_loss::kUnwindFailures);
  // Every field of every message in callstack.proto has a constant.
  const google::protobuf::FileDescriptor* file = schema::CallStackDef::descriptor()->file();
  for (int m = 0; m < file->message_type_count(); ++m) {
    const google::protobuf::Descriptor* d = file->message_type(m);
    for (int i = 0; i < d->field_count(); ++i) {
      EXPECT_TRUE(Checked()[d->name()].count(d->field(i)->name()))
          << d->name() << "." << d->field(i)->name() << " has no encoder constant";
    }
  }
  // Packed encoding of the addresses (the encoder writes them as one length-delimited field).
  const google::protobuf::FieldDescriptor* addresses = schema::CallStackDef::descriptor()->FindFieldByName("addresses");
  ASSERT_NE(addresses, nullptr);
  EXPECT_TRUE(addresses->is_packed());
}

TEST(CallStackFields, EnumValuesMatchDescriptor) {
  EXPECT_EQ(field::enums::kApiClassKernel, static_cast<uint32_t>(schema::CALL_STACK_API_CLASS_KERNEL));
  EXPECT_EQ(field::enums::kApiClassMemory, static_cast<uint32_t>(schema::CALL_STACK_API_CLASS_MEMORY));
  EXPECT_EQ(field::enums::kApiClassSync, static_cast<uint32_t>(schema::CALL_STACK_API_CLASS_SYNC));
  EXPECT_EQ(field::enums::kApiClassOther, static_cast<uint32_t>(schema::CALL_STACK_API_CLASS_OTHER));
}

TEST(CallStackExportMap, EveryFieldIsMappedOrListedAsNotExported) {
  std::set<std::pair<std::string, std::string>> listed;
  for (const exporter::CallStackFieldDestination& d : exporter::kCallStackFieldMap) {
    EXPECT_TRUE(listed.insert({d.message, d.field}).second) << d.message << "." << d.field << " listed twice";
    EXPECT_NE(std::string(d.destination), "") << d.message << "." << d.field;
  }
  const google::protobuf::FileDescriptor* file = schema::CallStackDef::descriptor()->file();
  size_t fields = 0;
  for (int m = 0; m < file->message_type_count(); ++m) {
    const google::protobuf::Descriptor* d = file->message_type(m);
    for (int i = 0; i < d->field_count(); ++i) {
      ++fields;
      EXPECT_TRUE(listed.count({d->name(), d->field(i)->name()}))
          << d->name() << "." << d->field(i)->name() << " is neither exported nor listed as not exported";
    }
  }
  EXPECT_EQ(fields, listed.size()) << "the map names fields callstack.proto does not have";
}

}  // namespace
}  // namespace gt
