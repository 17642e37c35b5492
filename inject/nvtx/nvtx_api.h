// The NVTX3 types gtrace implements, from the CUDA toolkit's headers. NVTX_NO_IMPL: types and
// tool-side tables only, so this library carries no NVTX instance of its own. Only inject/
// includes NVTX headers (scripts/check_layering.sh).
#pragma once

#ifndef NVTX_NO_IMPL
#define NVTX_NO_IMPL
#endif
#include <nvtx3/nvToolsExt.h>         // also brings nvtxDetail/nvtxTypes.h (export tables, callback ids)
#include <nvtx3/nvToolsExtPayload.h>  // also brings nvtxDetail/nvtxExtTypes.h (extension module info)
