#include "core/algorithm/tuning.hpp"

#include "core/algorithm/tune_file.hpp"
#include "core/common/log.hpp"
#include "core/common/settings.hpp"

namespace hcomm::algorithm {

Tuning tuning(const hcomm_comm_view_t& measured, const std::string& transports) {
  Tuning out{.view = measured, .rules = parse_tune(settings::get_string("HCOMM_TUNE"))};
  const std::string path = settings::get_string("HCOMM_TUNE_FILE");
  if (path.empty()) return out;
  const TuneFile file = read_tune_file(path);
  out.view = apply_tune_file(file, measured);
  std::string why;
  const bool select = !file.select.empty() && select_applies(file, measured.nranks, measured.nnodes, transports, &why);
  if (select) out.rules.insert(out.rules.end(), file.select.begin(), file.select.end());
  if (measured.rank != 0) return out;
  HCOMM_INFO(ALGO,
             "HCOMM_TUNE_FILE %s (measured on %s ranks over %s): alpha %.3g us, beta %.3g us/B, gamma %.3g us/B "
             "instead of the transports' alpha %.3g us, beta %.3g us/B, gamma %.3g us/B",
             path.c_str(), file.ranks ? std::to_string(file.ranks).c_str() : "?",
             file.transports.empty() ? "?" : file.transports.c_str(), file.link.alpha_us, file.link.beta_us_per_byte,
             file.link.gamma_us_per_byte, measured.link.alpha_us, measured.link.beta_us_per_byte,
             measured.link.gamma_us_per_byte);
  if (measured.nnodes > 1)
    HCOMM_INFO(ALGO,
               "HCOMM_TUNE_FILE %s across %d hosts: within a host alpha %.3g us, beta %.3g us/B; between hosts "
               "alpha %.3g us, beta %.3g us/B",
               path.c_str(), measured.nnodes, out.view.intra.alpha_us, out.view.intra.beta_us_per_byte,
               out.view.inter.alpha_us, out.view.inter.beta_us_per_byte);
  if (select)
    HCOMM_INFO(ALGO, "HCOMM_TUNE_FILE %s: %zu measured choices of algorithm for host memory, after HCOMM_TUNE's rules",
               path.c_str(), file.select.size());
  else if (!file.select.empty())
    HCOMM_INFO(ALGO, "HCOMM_TUNE_FILE %s: its measured choices of algorithm are not taken (%s); the cost model decides",
               path.c_str(), why.c_str());
  return out;
}

}  // namespace hcomm::algorithm
