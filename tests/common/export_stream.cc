#include "tests/common/export_stream.h"

namespace gt::test {

void WriteStream(const std::string& path,
                 uint32_t pid,
                 const std::function<void(SyntheticStream&)>& setup,
                 const std::function<void(SyntheticStream&)>& body) {
  SyntheticStream s(pid, kStreamMono0Ns, kStreamReal0Ns);
  s.BeginChunk(1, pid, kStreamMono0Ns);
  setup(s);
  s.EndChunk();
  body(s);
  s.Close();
  s.WriteTo(path);
}

Status ExportStreams(const std::vector<std::string>& inputs,
                     const std::string& output,
                     exporter::ExportResult* result) {
  exporter::ExportOptions o;
  o.inputs = inputs;
  o.output = output;
  return exporter::ExportSqlite(o, result);
}

}  // namespace gt::test
