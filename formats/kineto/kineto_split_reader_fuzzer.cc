// libFuzzer target: reading a file on two threads (kineto_split_reader.h)
// gives exactly what a single pass gives, Rank or error, on any input:
// every input is split, whatever its size.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "formats/errors.h"
#include "formats/kineto/kineto_rank_reader.h"
#include "formats/kineto/kineto_split_reader.h"

namespace {

std::string Read(const moetrace::PaddedBuffer& buf, int threads, moetrace::Rank* rank) {
  try {
    *rank = moetrace::ReadKinetoRank(buf, "fuzz.json", 0, "default", nullptr, {}, nullptr, threads);
  } catch (const moetrace::InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  moetrace::SetSplitMinBytes(0);
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  moetrace::PaddedBuffer one_buf = moetrace::PaddedBuffer::FromString(text);
  moetrace::PaddedBuffer two_buf = moetrace::PaddedBuffer::FromString(text);
  moetrace::Rank one, two;
  const std::string one_error = Read(one_buf, 1, &one);
  const std::string two_error = Read(two_buf, 2, &two);
  if (one_error != two_error || !(one == two) || two_buf.view() != text) std::abort();
  return 0;
}
