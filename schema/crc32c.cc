#include "schema/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace gt {
namespace {

constexpr uint32_t kPolyReflected = 0x82f63b78u;

struct Tables {
  uint32_t t[8][256];
};

constexpr Tables MakeTables() {
  Tables tables{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kPolyReflected : c >> 1;
    tables.t[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; ++i) {
    for (int s = 1; s < 8; ++s) tables.t[s][i] = (tables.t[s - 1][i] >> 8) ^ tables.t[0][tables.t[s - 1][i] & 0xff];
  }
  return tables;
}

constexpr Tables kTables = MakeTables();

uint32_t Crc32cTable(const uint8_t* p, size_t n, uint32_t crc) {
  while (n >= 8) {  // slicing-by-8
    uint64_t word;
    std::memcpy(&word, p, 8);
    word ^= crc;
    crc = kTables.t[7][word & 0xff] ^ kTables.t[6][(word >> 8) & 0xff] ^ kTables.t[5][(word >> 16) & 0xff] ^
          kTables.t[4][(word >> 24) & 0xff] ^ kTables.t[3][(word >> 32) & 0xff] ^
          kTables.t[2][(word >> 40) & 0xff] ^ kTables.t[1][(word >> 48) & 0xff] ^ kTables.t[0][word >> 56];
    p += 8;
    n -= 8;
  }
  while (n--) crc = (crc >> 8) ^ kTables.t[0][(crc ^ *p++) & 0xff];
  return crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) uint32_t Crc32cHardware(const uint8_t* p, size_t n, uint32_t crc) {
  uint64_t c = crc;
  while (n >= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    c = __builtin_ia32_crc32di(c, word);
    p += 8;
    n -= 8;
  }
  uint32_t c32 = static_cast<uint32_t>(c);
  while (n--) c32 = __builtin_ia32_crc32qi(c32, *p++);
  return c32;
}

bool HasSse42() {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
  return (c & bit_SSE4_2) != 0;
}
#endif

}  // namespace

uint32_t Crc32c(const void* data, size_t size, uint32_t crc) {
  const auto* p = static_cast<const uint8_t*>(data);
  crc = ~crc;
#if defined(__x86_64__)
  static const bool hw = HasSse42();
  crc = hw ? Crc32cHardware(p, size, crc) : Crc32cTable(p, size, crc);
#else
  crc = Crc32cTable(p, size, crc);
#endif
  return ~crc;
}

}  // namespace gt
