// Built instead of pmix.cpp when CMake found no libpmix.
#include "core/bootstrap/pmix.hpp"
#include "core/common/error.hpp"

namespace hcomm::bootstrap {

bool pmix_built_in() { return false; }

ManagedLaunch pmix_launch(double) {
  HCOMM_THROW(HCOMM_ERR_CONFIG,
              "HCOMM_BOOTSTRAP=pmix: this libhcomm was built without PMIx (libpmix-dev was not found at build time): "
              "rebuild it with libpmix-dev installed, or set HCOMM_BOOTSTRAP=env with HCOMM_ROOT and HCOMM_SECRET on "
              "every rank");
}

}  // namespace hcomm::bootstrap
