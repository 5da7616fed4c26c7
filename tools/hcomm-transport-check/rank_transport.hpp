// One rank's use of the plugin under test: its context, the current net and
// an endpoint per peer. Every plugin call goes through `call`, which captures
// the error text the plugin set; every wait has the rank's deadline.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "check_services.hpp"
#include "clock.hpp"
#include "failure.hpp"
#include "plugin_library.hpp"
#include "shared_state.hpp"

namespace hcomm::tcheck {

// "HCOMM_ERR_REMOTE: peer rank 1 closed", "... (no error text set)" or "HCOMM_SUCCESS".
std::string describe_error(hcomm_result_t code, const std::string& text);

class RankTransport {
 public:
  // connect must return at once: the core polls ep_ready instead.
  static constexpr double kConnectCallLimitSeconds = 0.1;

  RankTransport(const PluginLibrary& plugin, SharedState& shared, int rank);
  RankTransport(const RankTransport&) = delete;
  RankTransport& operator=(const RankTransport&) = delete;

  int rank() const { return rank_; }
  int nranks() const { return shared_.nranks; }
  Deadline deadline() const { return shared_.deadline(); }
  SharedState& shared() { return shared_; }
  const hcomm_transport_v1_t& api() const { return plugin_.api(); }
  void phase(const std::string& text) { shared_.slots[rank_].set_phase(text.c_str()); }

  // Calls a plugin function with the error text cleared; on failure the text
  // the plugin set is stored in *error_text.
  template <class F>
  hcomm_result_t call(F&& plugin_call, std::string* error_text) {
    CheckServices::instance().clear_error();
    hcomm_result_t rc = plugin_call();
    if (rc != HCOMM_SUCCESS && error_text) *error_text = CheckServices::instance().last_error();
    return rc;
  }
  // The same, for calls that must succeed: a failure throws, naming `what`.
  template <class F>
  void require(const std::string& what, F&& plugin_call) {
    std::string text;
    hcomm_result_t rc = call(plugin_call, &text);
    if (rc != HCOMM_SUCCESS) TCHECK_FAIL("%s returned %s", what.c_str(), describe_error(rc, text).c_str());
  }

  // The whole set-up: init (once per transport), open a net with one of the
  // shared keys, exchange addresses, check the scores, connect every peer.
  void start(int key_index = 0);
  hcomm_transport_props_t properties();
  // Every rank finished its transfers; then the net may close without peers
  // seeing a closed connection while they still need it.
  void quiesce();
  void close_endpoints();
  void close();
  void finalize();
  void finish();

  void* net() const { return net_; }
  void* endpoint(int peer) const { return endpoints_.at(static_cast<size_t>(peer)); }
  void* context() const { return context_; }
  // One progress call; throws on an error.
  void progress();
  // Lets the transport move while this rank waits for the others.
  void barrier_polling(const std::string& why);

  // Notes the /dev/shm files this process uses now, so that the parent can
  // tell, once every rank ended, whether any was left behind.
  void record_shm_files();

  void count_retry() { ++retries_; }
  uint64_t retries() const { return retries_; }
  double slowest_connect_seconds() const { return slowest_connect_; }
  double ready_seconds() const { return ready_seconds_; }

 private:
  void init();
  void open(int key_index);
  void exchange_addresses();
  void check_scores();
  void connect_peers();
  void wait_until_ready();

  const PluginLibrary& plugin_;
  SharedState& shared_;
  int rank_;
  void* context_ = nullptr;
  void* net_ = nullptr;
  std::vector<void*> endpoints_;
  uint64_t retries_ = 0;
  double slowest_connect_ = 0;
  double ready_seconds_ = 0;
  std::set<std::string> shm_files_;
};

}  // namespace hcomm::tcheck
