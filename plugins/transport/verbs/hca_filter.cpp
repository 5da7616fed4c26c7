#include "hca_filter.hpp"

#include <cstdlib>

#include "hcomm/plugin/util.hpp"

namespace hcomm::verbs {

namespace {

[[noreturn]] void bad(const std::string& text, const std::string& why) {
  HCOMM_PLUGIN_THROW(HCOMM_ERR_CONFIG,
                     "HCOMM_IB_HCA='%s' does not parse: %s; expected device names with an optional :port, "
                     "separated by commas, with '^' first to exclude and '=' first for exact names "
                     "('mlx5_0:1,mlx5_1', '^mlx5_2')",
                     text.c_str(), why.c_str());
}

}  // namespace

HcaFilter HcaFilter::parse(const std::string& text) {
  HcaFilter f;
  size_t pos = 0;
  if (pos < text.size() && text[pos] == '^') f.exclude_ = true, ++pos;
  if (pos < text.size() && text[pos] == '=') f.exact_ = true, ++pos;
  if (pos == text.size()) {
    if (f.exclude_ || f.exact_) bad(text, "no device named");
    return f;
  }
  while (pos <= text.size()) {
    size_t end = text.find(',', pos);
    if (end == std::string::npos) end = text.size();
    std::string item = text.substr(pos, end - pos);
    Entry e;
    size_t colon = item.find(':');
    e.name = item.substr(0, colon);
    if (e.name.empty()) bad(text, "an empty device name");
    if (e.name.find_first_of("^= ") != std::string::npos) bad(text, "'" + e.name + "' is not a device name");
    if (colon != std::string::npos) {
      std::string port = item.substr(colon + 1);
      char* stop = nullptr;
      long n = std::strtol(port.c_str(), &stop, 10);
      if (port.empty() || *stop != '\0' || n < 1 || n > 255) bad(text, "port '" + port + "' is not a number 1-255");
      e.port = static_cast<int>(n);
    }
    f.entries_.push_back(e);
    pos = end + 1;
  }
  return f;
}

bool HcaFilter::listed(const std::string& device, int port) const {
  for (const Entry& e : entries_) {
    bool name_ok = exact_ ? device == e.name : device.compare(0, e.name.size(), e.name) == 0;
    if (name_ok && (e.port == 0 || e.port == port)) return true;
  }
  return false;
}

bool HcaFilter::accepts(const std::string& device, int port) const {
  if (entries_.empty()) return true;
  return listed(device, port) != exclude_;
}

}  // namespace hcomm::verbs
