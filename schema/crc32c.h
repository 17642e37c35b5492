// CRC-32C (Castagnoli), the checksum of each stream chunk: part of the format (gtrace.proto),
// shared by the writer (collector/) and the reader (tools/).
// Pure function, any thread. Uses SSE4.2 when the CPU has it, else a table.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gt {

uint32_t Crc32c(const void* data, size_t size, uint32_t crc = 0);

}  // namespace gt
