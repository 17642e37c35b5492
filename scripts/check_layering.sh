#!/usr/bin/env bash
# Fails when an #include crosses gtrace's layer arrows (docs/architecture.md):
#   schema <- collector <- inject;  schema <- tools.  Only inject/ includes CUDA/CUPTI/NVTX/NCCL.
set -u
cd "$(dirname "$0")/.."
fail=0
check() {  # check <dir> <forbidden-regex> <reason>
  local hits
  hits=$(grep -rnE "^\s*#\s*include\s*[<\"]($2)" "$1" --include='*.h' --include='*.cc' --include='*.hpp' --include='*.cpp' 2>/dev/null)
  if [ -n "$hits" ]; then
    echo "layering: $1 must not include $3:"
    echo "$hits" | sed 's/^/  /'
    fail=1
  fi
}
vendor='cupti|cuda|cuda_runtime|nvtx3/|nvToolsExt|nccl|generated_cuda|nvperf'
check schema    "collector/|inject/|tools/|$vendor" "collector/, inject/, tools/ or vendor headers"
check collector "inject/|tools/|$vendor" "inject/, tools/ or CUDA/CUPTI/NVTX/NCCL headers"
check tools     "collector/|inject/|$vendor" "collector/, inject/ or CUDA/CUPTI/NVTX/NCCL headers"
# The injected library must not pull libprotobuf into the host.
check inject    "google/protobuf|gtrace\.pb\.h|.*\.pb\.h" "protobuf (use collector/proto_writer.h)"
check collector "google/protobuf|gtrace\.pb\.h|.*\.pb\.h" "protobuf (use collector/proto_writer.h)"
if [ "$fail" -eq 0 ]; then echo "layering: ok"; fi
exit "$fail"
