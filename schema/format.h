// Constants of the stream format that proto cannot express (see gtrace.proto's header comment).
// Shared by the writer (collector/) and the reader (tools/).
#pragma once

#include <cstdint>

namespace gt {

// First 9 bytes of every stream: tag of StreamFile.magic (field 1, fixed64) + "GTRACE\r\n".
inline constexpr uint64_t kStreamMagic = 0x0a0d454341525447ull;
inline constexpr uint32_t kFormatMajor = 1;
inline constexpr uint32_t kFormatMinor = 0;
inline constexpr const char kStreamExtension[] = ".gtrace";

// Field numbers of the StreamFile envelope, needed by both sides to frame chunks.
inline constexpr uint32_t kStreamFileMagicField = 1;
inline constexpr uint32_t kStreamFileHeaderField = 2;
inline constexpr uint32_t kStreamFileChunkField = 3;

}  // namespace gt
