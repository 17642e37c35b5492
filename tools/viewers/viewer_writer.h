// ViewerWriter: one output format. The driver (viewer_export.cc) feeds it every event of the
// export in start order, once per pass, then commits it. Writers put their outputs in temporary
// files and rename them into place on Commit; a writer destroyed uncommitted leaves nothing behind.
//
// Used by the exporting thread; borrows the Catalog, which outlives it.
#pragma once

#include <string>
#include <vector>

#include "schema/status.h"
#include "tools/viewers/event.h"

namespace gt::viewers {

class ViewerWriter {
 public:
  virtual ~ViewerWriter() = default;
  // A writer that keeps many files open (one per rank) may ask for several passes.
  virtual size_t passes() const { return 1; }
  virtual Status BeginPass(size_t pass) { return Status::Ok(); }
  virtual Status OnEvent(const Event& event) = 0;
  virtual Status EndPass(size_t pass) { return Status::Ok(); }
  // Finishes the outputs and renames them into place; appends their paths.
  virtual Status Commit(std::vector<std::string>* outputs) = 0;
  // Things worth a "gtrace: warning:" line (events that could not be placed, ...).
  virtual std::vector<std::string> warnings() const { return {}; }
};

}  // namespace gt::viewers
