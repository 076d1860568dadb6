// Bad input is reported by throwing InputError; the command line turns it
// into a one-line message and exit code 2. The message always starts with
// the file and the position ("trace.mtrace: byte 4096: ..." or
// "rank0.json: line 12: ..."), so users can find what is wrong.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace moetrace {

class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& message) : std::runtime_error(message) {}
};

// "FILE: POSITION: WHAT" (POSITION omitted when empty).
[[noreturn]] void ThrowInputError(std::string_view file, std::string_view position,
                                  std::string_view what);

}  // namespace moetrace
