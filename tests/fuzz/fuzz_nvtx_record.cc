// libFuzzer target: arbitrary bytes as an NVTX ring record (what a corrupted ring could hold)
// through the drain thread's decoder. The chunk it produces must still parse with the protoc
// decoder.
#include <cstdint>
#include <cstring>
#include <vector>

#include "collector/chunk_builder.h"
#include "collector/session.h"
#include "gtrace.pb.h"
#include "inject/nvtx/nvtx_record.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > gt::kMaxRecordBytes) size = gt::kMaxRecordBytes;
  size_t slots = (size + gt::kSlotBytes - 1) / gt::kSlotBytes;
  if (slots == 0) slots = 1;
  std::vector<gt::Slot> record(slots);
  std::memcpy(record.data(), data, size);
  gt::RecordView view{reinterpret_cast<const gt::RecordHeader*>(record[0].bytes), record[0].bytes,
                      slots * gt::kSlotBytes, 1234};
  gt::StringInterner interner;
  gt::ChunkBuilder chunk(&interner);
  chunk.Begin(1, 1234, view.header->ts_ns);
  gt::nvtx::DecodeRecord(view, &chunk);
  chunk.End();
  gt::schema::StreamFile file;
  if (!chunk.output()->empty() && !file.ParseFromString(*chunk.output())) __builtin_trap();
  return 0;
}
