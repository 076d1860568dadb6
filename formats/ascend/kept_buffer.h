// A file's text in a buffer the thread keeps for its next file.
//
// Reading a rank means copying its text (into simdjson's padded form, or the
// CSV table's buffer) and writing every byte of the copy. A fresh buffer of
// more than glibc's mmap threshold (<= 32 MiB) comes from the kernel as new
// pages on every read and goes back on free: the first touch of each page
// cost as much as the parse itself at 1 M events (bench/README.md). A thread
// therefore keeps one buffer per purpose (a Slot) for its next file, up to
// kKeptBufferBytes; larger inputs get a buffer of their own, freed after
// use, so what a thread keeps stays bounded.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace moetrace {

inline constexpr size_t kKeptBufferBytes = size_t{256} << 20;

class KeptBuffer {
 public:
  // One kept buffer per slot and thread: a slot's buffer is lent to one
  // KeptBuffer at a time (a second one alive at once gets its own).
  enum Slot { kJsonText = 0, kCsvText = 1, kSlotCount = 2 };

  // A buffer of `size` bytes followed by `padding` zero bytes (simdjson
  // reads up to 64 bytes past the end); its text is left unwritten.
  KeptBuffer(Slot slot, size_t size, size_t padding);
  KeptBuffer() = default;  // empty, nothing lent
  // The copy of `text`, padded.
  static KeptBuffer Copy(Slot slot, std::string_view text, size_t padding);
  // The file's bytes, padded. Throws InputError "cannot read file". A
  // file larger than kKeptBufferBytes is mapped (Map).
  static KeptBuffer Load(Slot slot, const std::string& path, size_t padding);
  // The file mapped privately (writes stay in this process), followed by
  // `padding` zero bytes. MAP_POPULATE on a writable private mapping makes
  // the kernel copy every page up front (copy-on-write broken at once): no
  // cheaper in memory than a read, but no fresh user pages zeroed, and a
  // file truncated while it is parsed cannot raise SIGBUS (a lazy or
  // read-only mapping would). Empty (data() null) when the file cannot be
  // mapped; Load then reads it.
  static KeptBuffer Map(const std::string& path, size_t padding);

  KeptBuffer(KeptBuffer&& other) noexcept;
  KeptBuffer& operator=(KeptBuffer&& other) noexcept;
  KeptBuffer(const KeptBuffer&) = delete;
  ~KeptBuffer();  // gives a kept buffer back to its thread

  char* data() { return data_; }
  const char* data() const { return data_; }
  size_t size() const { return size_; }
  size_t capacity() const { return size_ + padding_; }  // padding included
  std::string_view view() const { return {data_, size_}; }

 private:
  void Release();
  Slot slot_ = kJsonText;
  char* data_ = nullptr;
  size_t size_ = 0;
  size_t padding_ = 0;
  bool kept_ = false;              // lent by the thread's slot
  std::unique_ptr<char[]> own_;    // else owned
  size_t mapped_ = 0;              // else mapped: the mapping's length
};

}  // namespace moetrace
