#include "core/common/error.hpp"

namespace hcomm {

namespace {
thread_local std::string t_last_error;
}

void set_last_error(const std::string& text) { t_last_error = text; }
const char* last_error() { return t_last_error.c_str(); }

}  // namespace hcomm
