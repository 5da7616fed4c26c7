// Tune files (HCOMM_TUNE_FILE): the link model of the algorithms' cost
// functions as measured by `hcomm-perf --calibrate FILE`, used instead of the
// figures the transports report. Text, one `key = value` per line; '#' starts
// a comment; blank lines are skipped; keys in any order, each at most once:
//   ranks = 4                       the communicator it was measured on (informational)
//   hosts = 2                       the hosts it spanned (informational)
//   transports = shm                HCOMM_TRANSPORTS then, or the transports loaded (informational)
//   alpha_us = 2.5                  per message: one hop's small-message latency
//   beta_us_per_byte = 0.00031      per byte moved between two ranks
//   gamma_us_per_byte = 0.000052    per byte reduced (bytes of one operand)
//   mapped.alpha_us = 0.4           optional, each: the same through mapped
//   mapped.beta_us_per_byte = ...   memory, for communicators whose ranks map
//   mapped.gamma_us_per_byte = ...  each other's (HCOMM_VIEW_MAPPED)
//   intra.alpha_us = ...            optional, each: the same between two ranks
//   intra.beta_us_per_byte = ...    of one host and (inter.*) of two hosts,
//   intra.gamma_us_per_byte = ...   for communicators that span hosts
//   inter.* (the same three)
//   select = allreduce:8K-64K:@recursive_doubling
//                                   optional, any number: the algorithm measured
//                                   fastest for host memory over a range of
//                                   message sizes (HCOMM_TUNE's grammar, one rule
//                                   per line), by `hcomm-perf --calibrate FILE
//                                   --select COLLS`; taken only by communicators
//                                   of the ranks, hosts and transports above
// alpha_us, beta_us_per_byte and gamma_us_per_byte are required (the slowest
// link); times are finite numbers >= 0. A file that breaks these rules is an
// HCOMM_ERR_CONFIG error naming the file, the line and the key.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/algorithm/tune.hpp"
#include "hcomm/plugin/algorithm.h"

namespace hcomm::algorithm {

// A link model whose fields may each be absent.
struct LinkFields {
  std::optional<double> alpha_us, beta_us_per_byte, gamma_us_per_byte;
};

struct TuneFile {
  int ranks = 0;           // 0: not given
  int hosts = 0;           // 0: not given
  std::string transports;  // empty: not given
  hcomm_link_model_t link{};
  LinkFields mapped, intra, inter;
  std::vector<TuneRule> select;  // host memory only, each naming the file
};

// `path` names the file in errors.
TuneFile parse_tune_file(const std::string& text, const std::string& path);
TuneFile read_tune_file(const std::string& path);
// The file's text, with a header comment that says what the keys mean.
std::string format_tune_file(const TuneFile& file);
// `measured` with the file's link model, its mapped fields where the view
// maps memory, and its intra and inter fields where the view spans hosts (on
// one host both are the link).
hcomm_comm_view_t apply_tune_file(const TuneFile& file, const hcomm_comm_view_t& measured);
// Whether the file's select rules were measured on a communicator like this
// one: the same ranks, hosts and transports (allowed_names), where the file
// gives them. Else `why` says what differs.
bool select_applies(const TuneFile& file, int nranks, int nhosts, const std::string& transports, std::string* why);

}  // namespace hcomm::algorithm
