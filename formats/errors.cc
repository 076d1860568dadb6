#include "formats/errors.h"

namespace moetrace {

void ThrowInputError(std::string_view file, std::string_view position,
                     std::string_view what) {
  std::string m(file);
  if (!position.empty()) {
    m += ": ";
    m += position;
  }
  m += ": ";
  m += what;
  throw InputError(m);
}

}  // namespace moetrace
