// The first bytes of every stream: StreamFile.magic and StreamFile.header (schema/gtrace.proto).
#pragma once

#include <string>

#include "collector/clock.h"
#include "collector/config.h"
#include "collector/process_info.h"

namespace gt {

std::string EncodeStreamPreamble(const ProcessInfo& info, const Config& config, const ClockPair& start,
                                 const char* gtrace_version);

}  // namespace gt
