// The analysis' tables (report.cc), shared by the text printers and the HTML page. Internal.
#pragma once

#include <string>
#include <vector>

#include "tools/analyze/analysis.h"
#include "tools/stats/table.h"

namespace gt::analyze {

std::vector<stats::Table> BuildTables(const Analysis& a, const std::vector<std::string>& reports, uint32_t top);

}  // namespace gt::analyze
