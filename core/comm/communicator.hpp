// A communicator: its ranks' links, the algorithm selector, the schedules
// already built, and the collectives in flight. One thread at a time.
#pragma once

#include <array>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "core/algorithm/selector.hpp"
#include "core/common/error.hpp"
#include "core/bootstrap/bootstrap.hpp"
#include "core/comm/peers.hpp"
#include "core/exec/operation.hpp"

namespace hcomm::comm {

class Communicator {
 public:
  explicit Communicator(std::unique_ptr<bootstrap::Bootstrap> bootstrap);
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  Peers& peers() { return *peers_; }

  // Starts a collective; the operation stays owned by the communicator.
  exec::Operation* start(const hcomm_coll_args_t& args, const void* send, void* recv);
  // True once `op` is done; it is then released. Throws if it failed.
  bool test(exec::Operation* op);
  // Blocks until `op` is done (spin, then yield, then sleep in the transports),
  // failing at HCOMM_TIMEOUT without progress or when a peer dies.
  void wait(exec::Operation* op);

 private:
  struct Running {
    std::unique_ptr<exec::Operation> op;
    std::vector<uint8_t>* scratch;
  };
  using Key = std::tuple<int, size_t, int, int, int, int, uint32_t>;

  void progress_all();
  void release(exec::Operation* op);
  void check_usable() const;
  [[noreturn]] void fail(const Error& e);
  [[noreturn]] void blame_oldest(const Error& e);
  std::shared_ptr<const exec::Schedule> schedule_for(const hcomm_coll_args_t& args);
  std::vector<uint8_t>* acquire_scratch(uint64_t bytes);

  std::unique_ptr<bootstrap::Bootstrap> bootstrap_;
  int rank_, size_;
  std::unique_ptr<Peers> peers_;
  std::unique_ptr<algorithm::Selector> selector_;
  std::map<Key, std::shared_ptr<const exec::Schedule>> schedules_;
  std::list<Running> running_;
  std::list<std::vector<uint8_t>> scratch_pool_;
  std::vector<std::vector<uint8_t>*> free_scratch_;
  uint32_t seq_ = 0;
  double timeout_s_;
  bool oversubscribed_;  // this host's ranks outnumber its cores
  std::string broken_;  // set by the first failure: the communicator is then unusable
};

}  // namespace hcomm::comm
