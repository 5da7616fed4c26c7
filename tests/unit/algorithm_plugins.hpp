// The algorithm plugins (libhcomm_algorithm_*.so), found in the folders of
// HCOMM_PLUGIN_PATH, else in the build tree's plugin folder, each loaded as
// the core loads it, and every (plugin, algorithm, collective) they register.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "hcomm/plugin/algorithm.h"

namespace hcomm::algotest {

// The text the last plugin call recorded through set_error.
std::string& plugin_error_text();

class AlgorithmPlugins {
 public:
  static const AlgorithmPlugins& get();

  const std::vector<const hcomm_plugin_header_t*>& headers() const { return headers_; }
  const std::string& load_error() const { return load_error_; }
  static const hcomm_algorithm_v1_t* iface(const hcomm_plugin_header_t* h) {
    return static_cast<const hcomm_algorithm_v1_t*>(h->iface);
  }
  // Every algorithm of every plugin, as the core's registry lists them.
  std::vector<const hcomm_algorithm_desc_t*> algorithms() const;
  // The first algorithm called `name` that serves `coll`, or nullptr.
  const hcomm_algorithm_desc_t* find(const char* name, hcomm_coll_t coll) const;
  // Hands the plugins these tests' services again: the core's loader opens
  // the same libraries and initialises them with its own, after which their
  // errors would no longer reach plugin_error_text().
  void reclaim() const;

 private:
  AlgorithmPlugins();
  void load(const std::string& path);

  std::vector<const hcomm_plugin_header_t*> headers_;
  std::string load_error_;
};

// One collective of one registered algorithm.
struct AlgorithmEntry {
  const hcomm_plugin_header_t* plugin;
  const hcomm_algorithm_desc_t* desc;
  hcomm_coll_t coll;
  std::string id;  // <plugin>_<algorithm>_<collective>, a valid test name
};

inline void PrintTo(const AlgorithmEntry& e, std::ostream* os) { *os << e.id; }

// Every collective bit of every algorithm of every plugin, except
// point-to-point, which no schedule serves.
std::vector<AlgorithmEntry> algorithm_entries();

}  // namespace hcomm::algotest
