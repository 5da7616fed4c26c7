// hcomm-perf's hold on the library's choice of algorithm: the algorithms the
// loaded plugins provide, forcing one for a collective, and asking which one
// a call would use. Every rank makes the same calls in the same order (the
// library's answers are the same on every rank), so ranks skip alike.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "communicator.hpp"
#include "hcomm/hcomm.h"

namespace hcomm::perf {

// The collective hcomm-perf calls `name` (the library's own names).
hcomm_coll_t coll_of(std::string_view name);
// Every algorithm name the loaded algorithm plugins provide, once each, in
// the plugins' order.
std::vector<std::string> provided_algorithms();
// Forces `algorithm` for `coll` (empty: back to the library's choice). False,
// with the library's reason in *why, where the algorithm does not serve the
// collective on this communicator; other failures throw CallError.
bool try_force(const Communicator& comm, hcomm_coll_t coll, const std::string& algorithm, std::string* why);
// As try_force, throwing CallError where the algorithm does not serve.
void force(const Communicator& comm, hcomm_coll_t coll, const std::string& algorithm);
// The algorithm a call of `count` elements would use.
std::string query(const Communicator& comm, hcomm_coll_t coll, size_t count, hcomm_dtype_t dtype);

}  // namespace hcomm::perf
