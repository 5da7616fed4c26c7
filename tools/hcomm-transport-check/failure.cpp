#include "failure.hpp"

namespace hcomm::tcheck {

std::string result_name(hcomm_result_t code) {
  switch (code) {
    case HCOMM_SUCCESS:
      return "HCOMM_SUCCESS";
    case HCOMM_ERR_INVALID_ARGUMENT:
      return "HCOMM_ERR_INVALID_ARGUMENT";
    case HCOMM_ERR_UNSUPPORTED:
      return "HCOMM_ERR_UNSUPPORTED";
    case HCOMM_ERR_SYSTEM:
      return "HCOMM_ERR_SYSTEM";
    case HCOMM_ERR_TIMEOUT:
      return "HCOMM_ERR_TIMEOUT";
    case HCOMM_ERR_REMOTE:
      return "HCOMM_ERR_REMOTE";
    case HCOMM_ERR_PLUGIN:
      return "HCOMM_ERR_PLUGIN";
    case HCOMM_ERR_INTERNAL:
      return "HCOMM_ERR_INTERNAL";
    case HCOMM_ERR_CONFIG:
      return "HCOMM_ERR_CONFIG";
    case HCOMM_IN_PROGRESS:
      return "HCOMM_IN_PROGRESS";
    case HCOMM_ERR_TRUNCATED:
      return "HCOMM_ERR_TRUNCATED";
  }
  return format("code %d", static_cast<int>(code));
}

}  // namespace hcomm::tcheck
