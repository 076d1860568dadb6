// CRC-32 of the record payloads (zlib's crc32: polynomial 0xEDB88320,
// reflected, initial and final XOR 0xFFFFFFFF), the same value as
// crc32(0, data, n), computed with carry-less multiplication (PCLMULQDQ)
// when the CPU has it: zlib 1.2's table-driven CRC costs several percent of
// reading a trace, the folded one a few tenths.
#pragma once

#include <cstddef>
#include <cstdint>

namespace moetrace::native {

uint32_t Crc32(const uint8_t* data, size_t n);

}  // namespace moetrace::native
