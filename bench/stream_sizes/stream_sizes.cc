// stream_sizes: bytes on disk per record, by event kind, for one or more streams. Each repeated
// message field of a chunk is one kind; its bytes are the encoded events (with their tags and
// lengths); interned strings and chunk framing are reported separately, and the total is the file.
// Compact CUDA records are counted as on disk (configs and batches), and two lines give the bytes per
// kernel and per CUDA API call record whichever form they are in (full messages, or batch columns plus
// their share of the configs): the figures issue 16 budgets (<= 16 and <= 12 bytes).
//   stream_sizes STREAM...
#include <cstdio>
#include <initializer_list>
#include <map>
#include <string>

#include "gtrace.pb.h"
#include "tools/stream/stream_reader.h"

namespace {

size_t VarintSize(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) v >>= 7, ++n;
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  struct Kind {
    uint64_t count = 0, bytes = 0;
  };
  std::map<std::string, Kind> kinds;
  uint64_t file_bytes = 0;
  uint64_t batch_kernels = 0, batch_calls = 0;
  for (int i = 1; i < argc; ++i) {
    gt::stream::StreamReader r;
    r.set_expand_compact(false);
    gt::Status st = r.Open(argv[i]);
    if (!st.ok()) {
      std::fprintf(stderr, "%s\n", st.message().c_str());
      return 1;
    }
    file_bytes += r.summary().file_bytes;
    gt::schema::Chunk c;
    while (true) {
      bool has = false;
      if (!r.Next(&c, &has).ok() || !has) break;
      const auto* refl = c.GetReflection();
      const auto* desc = c.GetDescriptor();
      for (int f = 0; f < desc->field_count(); ++f) {
        const auto* fd = desc->field(f);
        if (!fd->is_repeated() || fd->type() != google::protobuf::FieldDescriptor::TYPE_MESSAGE) continue;
        int n = refl->FieldSize(c, fd);
        Kind& k = kinds[fd->name()];
        // Records inside batches: counted apart (the batch itself is one "record" of its kind).
        if (fd->name() == "cuda_kernel_batches") {
          for (const auto& b : c.cuda_kernel_batches()) batch_kernels += b.config_id_size();
        }
        if (fd->name() == "cuda_api_batches") {
          for (const auto& b : c.cuda_api_batches()) batch_calls += b.config_id_size();
        }
        for (int j = 0; j < n; ++j) {
          size_t body = refl->GetRepeatedMessage(c, fd, j).ByteSizeLong();
          k.bytes += body + VarintSize(body) + VarintSize(static_cast<uint64_t>(fd->number()) << 3);
          ++k.count;
        }
      }
    }
  }
  uint64_t accounted = 0;
  std::printf("| kind | records | bytes | bytes/record |\n|---|---|---|---|\n");
  for (auto& [name, k] : kinds) {
    if (k.count == 0) continue;
    accounted += k.bytes;
    std::printf("| %s | %llu | %llu | %.2f |\n", name.c_str(), static_cast<unsigned long long>(k.count),
                static_cast<unsigned long long>(k.bytes), static_cast<double>(k.bytes) / static_cast<double>(k.count));
  }
  std::printf("| (headers, chunk framing, CRCs, other fields) | | %llu | |\n| total file | | %llu | |\n",
              static_cast<unsigned long long>(file_bytes - accounted), static_cast<unsigned long long>(file_bytes));
  auto per_record = [&](const char* what, uint64_t records, std::initializer_list<const char*> fields) {
    uint64_t bytes = 0;
    for (const char* f : fields) bytes += kinds[f].bytes;
    if (records == 0) return;
    std::printf("| **per %s record** (messages, or batch columns + configs) | %llu | %llu | %.2f |\n", what,
                static_cast<unsigned long long>(records), static_cast<unsigned long long>(bytes),
                static_cast<double>(bytes) / static_cast<double>(records));
  };
  per_record("kernel", kinds["cuda_kernels"].count + batch_kernels,
             {"cuda_kernels", "cuda_kernel_batches", "cuda_kernel_configs"});
  per_record("CUDA API", kinds["cuda_api_calls"].count + batch_calls,
             {"cuda_api_calls", "cuda_api_batches", "cuda_api_configs"});
  return 0;
}
