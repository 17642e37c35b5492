// libFuzzer target: arbitrary bytes as a stream file through the reader (and, for inputs that
// read cleanly, the whole SQLite export). Must never crash, hang or leak; errors are fine.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "tools/export/exporter.h"
#include "tools/stream/stream_reader.h"

namespace {

std::string TempPath(const char* suffix) {
  static const std::string dir = [] {
    const char* shm = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    return std::string(shm) + "/gtrace-fuzz-" + std::to_string(getpid());
  }();
  return dir + suffix;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string in = TempPath(".gtrace");
  FILE* f = fopen(in.c_str(), "wb");
  if (f == nullptr) return 0;
  fwrite(data, 1, size, f);
  fclose(f);
  bool clean = false;
  {
    gt::stream::StreamReader r;
    if (r.Open(in).ok()) {
      gt::schema::Chunk c;
      bool has = true;
      clean = true;
      while (has) {
        if (!r.Next(&c, &has).ok()) {
          clean = false;
          break;
        }
      }
    }
  }
  // The export is ~100x slower than reading: run it on inputs that got through the reader.
  if (clean && getenv("GT_FUZZ_EXPORT") != nullptr) {
    gt::exporter::ExportOptions o;
    o.inputs = {in};
    o.output = TempPath(".sqlite");
    o.force = true;
    gt::exporter::ExportResult result;
    gt::exporter::ExportSqlite(o, &result);
    unlink(o.output.c_str());
  }
  unlink(in.c_str());
  return 0;
}
