#include "core/algorithm/tuned_view.hpp"

#include "core/algorithm/tune_file.hpp"
#include "core/common/log.hpp"
#include "core/common/settings.hpp"

namespace hcomm::algorithm {

hcomm_comm_view_t tuned_view(const hcomm_comm_view_t& measured) {
  const std::string path = settings::get_string("HCOMM_TUNE_FILE");
  if (path.empty()) return measured;
  const TuneFile file = read_tune_file(path);
  const hcomm_comm_view_t tuned = apply_tune_file(file, measured);
  if (measured.rank == 0) {
    HCOMM_INFO(ALGO,
               "HCOMM_TUNE_FILE %s (measured on %s ranks over %s): alpha %.3g us, beta %.3g us/B, gamma %.3g us/B "
               "instead of the transports' alpha %.3g us, beta %.3g us/B, gamma %.3g us/B",
               path.c_str(), file.ranks ? std::to_string(file.ranks).c_str() : "?",
               file.transports.empty() ? "?" : file.transports.c_str(), file.link.alpha_us, file.link.beta_us_per_byte,
               file.link.gamma_us_per_byte, measured.link.alpha_us, measured.link.beta_us_per_byte,
               measured.link.gamma_us_per_byte);
    if (measured.nnodes > 1)
      HCOMM_INFO(ALGO, "HCOMM_TUNE_FILE %s across %d hosts: within a host alpha %.3g us, beta %.3g us/B; between hosts "
                       "alpha %.3g us, beta %.3g us/B",
                 path.c_str(), measured.nnodes, tuned.intra.alpha_us, tuned.intra.beta_us_per_byte,
                 tuned.inter.alpha_us, tuned.inter.beta_us_per_byte);
  }
  return tuned;
}

}  // namespace hcomm::algorithm
