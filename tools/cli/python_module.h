// Runs one of the Python modules shipped in python/gtrace (the Parquet dataset and the engine
// analyses: docs/multi-rank.md, "Columnar dataset") as `PYTHON -m MODULE ARGS...` and waits for it.
// Called by the CLI's main thread only.
#pragma once

#include <string>
#include <vector>

namespace gt::cli {

// PYTHON is $GTRACE_PYTHON or python3. python/ of the source tree this CLI was built from, or
// <prefix>/share/gtrace/python of an install, is put first on PYTHONPATH (the wheel's interpreter
// finds the package itself); GTRACE_BIN names this CLI (the module asks it for the column catalog).
// Returns the module's exit status, or 127 with one `gtrace:` line when the interpreter cannot run.
int RunPythonModule(const std::string& module, const std::vector<std::string>& args);

}  // namespace gt::cli
