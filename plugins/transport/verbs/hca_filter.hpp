// HCOMM_IB_HCA: which devices and ports to use, in NCCL's syntax.
//   "mlx5_0:1,mlx5_1"  only these (names are prefixes: "mlx5" takes every mlx5_N)
//   "=mlx5_0"          names must match exactly
//   "^mlx5_2"          every device but these ("^=" for exact exclusion)
// A ":port" limits an entry to that port; without it every port matches.
#pragma once

#include <string>
#include <vector>

namespace hcomm::verbs {

class HcaFilter {
 public:
  struct Entry {
    std::string name;
    int port = 0;  // 0: any port
  };

  // Throws HCOMM_ERR_CONFIG naming HCOMM_IB_HCA when the text does not parse.
  static HcaFilter parse(const std::string& text);

  bool accepts(const std::string& device, int port) const;
  bool exclude() const { return exclude_; }
  bool exact() const { return exact_; }
  const std::vector<Entry>& entries() const { return entries_; }

 private:
  bool listed(const std::string& device, int port) const;

  bool exclude_ = false;
  bool exact_ = false;
  std::vector<Entry> entries_;  // empty: everything
};

}  // namespace hcomm::verbs
