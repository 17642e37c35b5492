// Pieces of the session shared between session.cc and drainer.cc only.
#pragma once

#include <cstdint>

#include "collector/session.h"

namespace gt::internal {

RecordDecodeFn DecoderFor(uint8_t type);
int EmitterCount();
EmitFn EmitterAt(int i);
// Records lost because a thread found no free buffer (all sessions of this process image).
uint64_t NoBufferDrops();

}  // namespace gt::internal
