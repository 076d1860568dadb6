// Constants of the .mtrace byte layout (FORMAT.md), shared by the writer and
// the reader.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace moetrace::native {

// File header: magic, then version (u32 LE), then reserved flags (u32 LE, 0).
inline constexpr char kMagic[8] = {'\x89', 'M', 'T', 'R', 'A', 'C', 'E', '\n'};
inline constexpr uint32_t kVersion = 1;
inline constexpr size_t kFileHeaderSize = 16;

// Every message is a record: a 16-byte header then `stored_size` bytes of a
// zstd frame whose content (`raw_size` bytes) is one protobuf message.
//   u32 stored_size, u32 raw_size, u32 crc32(stored bytes), u8 kind, u8[3] 0
inline constexpr size_t kRecordHeaderSize = 16;
enum RecordKind : uint8_t { kRecordRankHeader = 1, kRecordBlock = 2, kRecordFooter = 3 };

// Trailer at the very end: u64 footer_offset, u32 footer_size (whole
// record), u32 version, 8-byte end magic.
inline constexpr char kEndMagic[8] = {'M', 'T', 'R', 'A', 'C', 'E', 'N', 'D'};
inline constexpr size_t kTrailerSize = 24;

// Rows per block (events, comm records or counter samples).
inline constexpr uint32_t kMaxBlockRows = 65536;
// No record's decompressed size may exceed this (the writer splits blocks
// long before; a rank header or footer this large is not a real trace).
inline constexpr uint64_t kMaxRecordRawSize = 1ull << 30;
// Tracks of one rank (a real rank has tens).
inline constexpr size_t kMaxTracksPerRank = 1 << 20;
// Elements of the comm vectors of one block (group_ranks, splits).
inline constexpr uint64_t kMaxBlockVectorElements = 1ull << 26;

inline void PutU32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
inline void PutU64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
inline uint32_t GetU32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(p[i]) << (8 * i);
  return v;
}
inline uint64_t GetU64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

}  // namespace moetrace::native
