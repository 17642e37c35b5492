#include "tools/viewers/viewer_export.h"

#include <sys/stat.h>

#include <memory>

#include "tools/viewers/catalog.h"
#include "tools/viewers/event_source.h"
#include "tools/viewers/kineto_exporter.h"
#include "tools/viewers/output_file.h"
#include "tools/viewers/paraver_exporter.h"
#include "tools/viewers/perfetto_exporter.h"
#include "tools/viewers/progress.h"
#include "tools/viewers/sqlite_reader.h"

namespace gt::viewers {

bool ParseViewerFormat(std::string_view name, ViewerFormat* format) {
  if (name == "perfetto" || name == "pftrace") {
    *format = ViewerFormat::kPerfetto;
  } else if (name == "kineto-json" || name == "kineto" || name == "json") {
    *format = ViewerFormat::kKinetoJson;
  } else if (name == "paraver" || name == "prv") {
    *format = ViewerFormat::kParaver;
  } else {
    return false;
  }
  return true;
}

const char* ViewerFormatName(ViewerFormat format) {
  switch (format) {
    case ViewerFormat::kPerfetto:
      return "perfetto";
    case ViewerFormat::kKinetoJson:
      return "kineto-json";
    case ViewerFormat::kParaver:
      return "paraver";
  }
  return "?";
}

std::string DefaultViewerOutput(ViewerFormat format, const std::string& stem) {
  switch (format) {
    case ViewerFormat::kPerfetto:
      return stem + ".pftrace";
    case ViewerFormat::kKinetoJson:
      return stem + ".kineto";
    case ViewerFormat::kParaver:
      return stem + ".prv";
  }
  return stem;
}

Status CheckViewerOutput(ViewerFormat format, const std::string& output, bool force) {
  switch (format) {
    case ViewerFormat::kPerfetto:
      return OutputFile::CheckWritable(output, force);
    case ViewerFormat::kKinetoJson: {
      if (output.size() >= 5 && output.compare(output.size() - 5, 5, ".json") == 0) {
        return OutputFile::CheckWritable(output, force);
      }
      struct stat st;
      if (stat(output.c_str(), &st) != 0)
        return Status::Ok();
      if (!S_ISDIR(st.st_mode))
        return Status::Error(output + " exists and is not a directory");
      if (!force)
        return Status::Error(output + " exists; use --force-overwrite to replace it");
      return Status::Ok();
    }
    case ViewerFormat::kParaver: {
      std::string stem = output;
      if (stem.size() >= 4 && stem.compare(stem.size() - 4, 4, ".prv") == 0)
        stem.resize(stem.size() - 4);
      for (const char* ext : {".prv", ".pcf", ".row"}) {
        Status st = OutputFile::CheckWritable(stem + ext, force);
        if (!st.ok())
          return st;
      }
      return Status::Ok();
    }
  }
  return Status::Ok();
}

Status ExportViewer(const ViewerOptions& options, ViewerResult* result) {
  *result = ViewerResult();
  std::unique_ptr<SqliteReader> db;
  Status st = SqliteReader::Open(options.database, &db);
  if (!st.ok())
    return st;
  Catalog catalog;
  if (!(st = Catalog::Load(db.get(), &catalog)).ok())
    return st;
  if (catalog.processes().empty()) {
    return Status::Error(options.database + ": no events to export (no NVTX, CUDA or NCCL rows of any process)");
  }
  std::unique_ptr<ViewerWriter> writer;
  switch (options.format) {
    case ViewerFormat::kPerfetto:
      st = CreatePerfettoExporter(&catalog, options.output, options.force, &writer);
      break;
    case ViewerFormat::kKinetoJson:
      st = CreateKinetoExporter(&catalog, options.output, options.force, &writer);
      break;
    case ViewerFormat::kParaver:
      st = CreateParaverExporter(&catalog, options.output, options.force, &writer);
      break;
  }
  if (!st.ok())
    return st;

  Progress progress(std::string("export ") + ViewerFormatName(options.format), catalog.total_rows() * writer->passes(),
                    options.progress);
  uint64_t done_before = 0;
  uint64_t skipped_unended = 0;
  for (size_t pass = 0; pass < writer->passes(); ++pass) {
    if (!(st = writer->BeginPass(pass)).ok())
      return st;
    std::unique_ptr<EventSource> source;
    if (!(st = EventSource::Open(db.get(), &catalog, &source)).ok())
      return st;
    Event event;
    bool done = false;
    while (true) {
      if (!(st = source->Next(&event, &done)).ok())
        return st;
      if (done)
        break;
      if (!(st = writer->OnEvent(event)).ok())
        return st;
      progress.Update(done_before + source->rows_read());
    }
    done_before += source->rows_read();
    if (pass == 0) {
      result->events = source->rows_read();
      skipped_unended = source->skipped_unended_ranges();
    }
    if (!(st = writer->EndPass(pass)).ok())
      return st;
  }
  if (!(st = writer->Commit(&result->outputs)).ok())
    return st;
  progress.Finish();
  result->processes = catalog.processes().size();
  if (skipped_unended > 0) {
    result->warnings.push_back(std::to_string(skipped_unended) + " NVTX ranges without an end were left out");
  }
  for (std::string& w : writer->warnings())
    result->warnings.push_back(std::move(w));
  return Status::Ok();
}

}  // namespace gt::viewers
