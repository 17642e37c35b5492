// EventSource: streams the events of an nsys-schema SQLite export in start-time order, merging one
// `ORDER BY start` query per table (SQLite sorts on disk when it must), so memory does not grow with
// the trace. Missing tables and columns are skipped; NVTX ranges without an end are counted and
// skipped. GPU activities carry their launching API call (thread, start) through a TEMP lookup
// table keyed by (globalPid, correlationId), which also tells each launch how many GPU activities
// it has (flows are drawn only for launches that have some).
//
// Used by one thread; borrows the reader and catalog, which must outlive it.
#pragma once

#include <memory>
#include <vector>

#include "schema/status.h"
#include "tools/viewers/catalog.h"
#include "tools/viewers/event.h"
#include "tools/viewers/sqlite_reader.h"

namespace gt::viewers {

class EventSource {
 public:
  EventSource(const EventSource&) = delete;
  EventSource& operator=(const EventSource&) = delete;
  ~EventSource();

  static Status Open(SqliteReader* db, const Catalog* catalog, std::unique_ptr<EventSource>* out);

  // The next event by start time (ties: NVTX, API, GPU, metrics, in table order); *done at the end.
  Status Next(Event* event, bool* done);

  uint64_t rows_read() const { return rows_read_; }
  uint64_t skipped_unended_ranges() const { return skipped_unended_; }

 private:
  struct Cursor;
  EventSource(SqliteReader* db, const Catalog* catalog);
  Status BuildLaunchTable();
  Status AddCursors();
  Status Advance(size_t cursor);
  bool Later(size_t a, size_t b) const;  // heap order: a's event comes after b's

  SqliteReader* db_;
  const Catalog* catalog_;
  bool have_launch_table_ = false;
  std::vector<std::unique_ptr<Cursor>> cursors_;
  std::vector<size_t> heap_;  // cursor indices with a pending event, min-heap on (start, index)
  uint64_t rows_read_ = 0;
  uint64_t skipped_unended_ = 0;
};

}  // namespace gt::viewers
