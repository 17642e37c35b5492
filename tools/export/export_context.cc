#include "tools/export/export_context.h"

#include "tools/nsys/nsys_schema.h"

namespace gt::exporter {

Status ExportContext::EnsureTable(std::string_view name) {
  if (created_.count(name) != 0) return Status::Ok();
  Status st = nsys::CreateTable(db_.handle(), name);
  if (!st.ok()) return st;
  created_.emplace(name);
  return Status::Ok();
}

Status ExportContext::AttachSpill(const std::string& path) {
  Statement attach(db_.handle(), "ATTACH DATABASE ? AS gt_spill");
  if (!attach.valid()) return Status::Error("cannot attach the spill database: " + attach.error());
  Status st = attach.Text(1, path).Run();
  if (!st.ok()) return st;
  // 8 MiB of page cache: the spill tables are written in order and read once per stream.
  return db_.Exec("PRAGMA gt_spill.journal_mode=OFF; PRAGMA gt_spill.synchronous=OFF; PRAGMA gt_spill.cache_size=-8192;");
}

Status ExportContext::StringId(std::string_view text, int64_t* id) {
  auto it = string_ids_.find(text);
  if (it != string_ids_.end()) {
    *id = it->second;
    return Status::Ok();
  }
  Status st = EnsureTable("StringIds");
  if (!st.ok()) return st;
  Statement* ins = db_.Prepare("INSERT INTO StringIds (id, value) VALUES (?, ?)", &st);
  if (ins == nullptr) return st;
  // Parts of one export converted concurrently number strings from one shared table, so their
  // StringIds rows merge without renumbering.
  int64_t new_id = options_.shared_strings != nullptr ? options_.shared_strings->Id(text) : next_string_id_++;
  st = ins->Int(1, new_id).Text(2, text).Run();
  if (!st.ok()) return st;
  string_ids_.emplace(std::string(text), new_id);
  *id = new_id;
  return Status::Ok();
}

Statement* ExportContext::Insert(std::string_view table, std::string_view sql, Status* status) {
  for (const RecentInsert& r : recent_inserts_) {
    if (r.statement != nullptr && r.sql == sql) return r.statement;  // its table exists: created below
  }
  Status st = EnsureTable(table);
  if (!st.ok()) {
    *status = st;
    return nullptr;
  }
  Statement* s = db_.Prepare(sql, status);
  if (s != nullptr) {
    recent_inserts_[recent_next_] = {std::string(sql), s};
    recent_next_ = (recent_next_ + 1) % kRecentInserts;
  }
  return s;
}

uint32_t ExportContext::HostIndex(const std::string& host, const std::string& boot_id) {
  for (size_t i = 0; i < hosts_.size(); ++i) {
    if (hosts_[i].first == host && hosts_[i].second == boot_id) return static_cast<uint32_t>(i);
  }
  hosts_.emplace_back(host, boot_id);
  return static_cast<uint32_t>(hosts_.size() - 1);
}

}  // namespace gt::exporter
