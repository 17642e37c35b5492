// The images of one process around an exec in a merge (db_merge.cc, Plan; called on the merging
// thread before anything is written). Internal to the exporter.
#pragma once

#include <string>
#include <vector>

#include "schema/status.h"
#include "tools/export/db_merge_source.h"

namespace gt::exporter::merge {

// One host+boot+pid in several inputs is accepted only as the images of one process around an exec:
// each earlier stream ended by exec (GTRACE_RANKS.endReason) before the next one started. The same
// stream twice, or two streams of one pid that overlap in time, are refused. With such images the
// sources are merged in start order, so the last image's PROCESSES and ThreadNames rows are the
// ones kept (db_merge.cc, Finish): one row per pid, as nsys keeps one PID across exec, under the
// name the process had when it ended.
// `input_names` are the names to print (the user's stream files when the sources are ExportMany's
// parts; empty: the sources' paths). Sets *exec_images when some pid has several images.
Status CheckExecImages(std::vector<Source>* sources, const std::vector<std::string>& input_names, bool* exec_images);

}  // namespace gt::exporter::merge
