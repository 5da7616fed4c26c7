// A failure of the link to one peer (I/O error, peer gone, protocol breach).
// Thrown inside the endpoint's machinery and caught at its entry points,
// where it fails the endpoint and every request on it.
#pragma once

#include <stdexcept>
#include <string>

namespace hcomm::tcp {

class LinkError : public std::runtime_error {
 public:
  explicit LinkError(const std::string& reason) : std::runtime_error(reason) {}
};

}  // namespace hcomm::tcp
