// The set-up that the traced-program tests share (tests/sampling/sampling_*_test.cc,
// tests/analyze/gap_causes_test.cc): whether this machine lets the CPU sampler open its perf event,
// and `gtrace export` of a traced run's streams into one SQLite database. Test code; the test's thread.
#pragma once

#include <string>
#include <vector>

#include "tests/common/test_util.h"

namespace gt::test {

// Why CPU sampling cannot work here ("" when it can): opens and closes the same event the library
// opens (cpu-clock, user mode only), so a test skips with this reason instead of failing.
std::string PerfEventRefusal();

// `gtrace export -o db streams...` with the built CLI; the caller checks the exit code.
RunResult CliExport(const std::vector<std::string>& streams, const std::string& db);

}  // namespace gt::test
