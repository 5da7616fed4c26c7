// A communicator: wires the bootstrap, the topology, the links, the cost
// model and the schedule cache together, starts operations on the executor
// and waits for them. One thread at a time, beside the thread of its
// stream-ordered calls (StreamOrder), which takes turns with it.
#pragma once

#include <array>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/bootstrap/bootstrap.hpp"
#include "core/comm/argument_check.hpp"
#include "core/comm/config.hpp"
#include "core/comm/schedule_cache.hpp"
#include "core/common/error.hpp"
#include "core/exec/idle_wait.hpp"
#include "core/exec/operation.hpp"
#include "core/exec/scratch_pool.hpp"
#include "core/links/links.hpp"
#include "core/p2p/matching.hpp"
#include "core/topology/topology.hpp"

namespace hcomm::device {
class Accelerator;
}

namespace hcomm::comm {

class StreamOrder;

class Communicator {
 public:
  // The communicator a split makes (see split): `links` are the parent's,
  // `members` the parent's ranks that are this one's, in order.
  struct Parent {
    const links::Links& links;
    std::vector<int> members;
  };
  // `parent`: a split's new communicator, which shares the parent's
  // connections where config.split_share allows and a tag context is free.
  explicit Communicator(std::unique_ptr<bootstrap::Bootstrap> bootstrap,
                        const Config& config = Config::resolve(nullptr), const Parent* parent = nullptr);
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  links::Links& links() { return *links_; }
  // Hosts, NUMA nodes, link classes and levels (node-local ranks, leaders, rails).
  const topology::Topology& topology() const { return topology_; }
  // The topology and every pair's link as a topology document
  // (HCOMM_TOPO_FILE's format), kept until the next call. Collective.
  const std::string& topology_json();

  // Starts a collective on the buffers the executor resolves SEND and RECV
  // to (the caller has applied the in-place and unused-SEND conventions of
  // hcomm_coll_args_t); the operation stays owned by the communicator.
  // `user_op`: the call's user op, where args.op stands for one
  // (HCOMM_OP_USER_*).
  exec::Operation* start(const hcomm_coll_args_t& args, const void* send, void* recv,
                         std::shared_ptr<const device::UserOp> user_op = nullptr);
  // Starts a send to (a receive from) the rank args.root, which may be this
  // rank, of a HCOMM_COLL_SENDRECV call. Messages of one tag between two
  // ranks arrive in order. Collectives' call numbers do not move.
  exec::Operation* send(const hcomm_coll_args_t& args, const void* buf, int tag);
  exec::Operation* recv(const hcomm_coll_args_t& args, void* buf, int tag);
  // True once `op` is done; it is then released, *status (may be null) set
  // (hcomm_status_t: a receive's peer, tag and bytes). Throws if it failed.
  bool test(exec::Operation* op, hcomm_status_t* status = nullptr);
  // Blocks until `op` is done (idling as exec::IdleWait says), failing at
  // HCOMM_TIMEOUT without progress or when a peer dies.
  void wait(exec::Operation* op, hcomm_status_t* status = nullptr);
  // Blocks until one of `ops` is done or `also_done()` holds, as wait()
  // blocks (its deadline and peer checks); the done ones stay to be tested.
  void wait_any(std::span<exec::Operation* const> ops, const std::function<bool()>& also_done);
  // A request's hcomm_cancel: a receive in exact mode cannot be withdrawn
  // (HCOMM_ERR_UNSUPPORTED), a collective is no point to point
  // (HCOMM_ERR_INVALID_ARGUMENT); a send completes as it would.
  void cancel(exec::Operation* op);

  // Point to point in matching mode (config().p2p_matching_any): MPI's
  // matching (p2p::Matching). A receive's source and tag, and a probe's, may
  // be p2p::kAny; `room` bytes may take a shorter message. The messages stay
  // the communicator's until test or wait reports them done; a receive's
  // own failure (truncated, its source gone) throws there and leaves the
  // communicator usable.
  p2p::Message* send_matching(const void* buf, uint64_t bytes, int peer, int tag, bool synchronous);
  p2p::Message* recv_matching(void* buf, uint64_t room, int source, int tag);
  // The receive of a message a matched probe took.
  p2p::Message* recv_matching(void* buf, uint64_t room, p2p::Arrival* taken);
  // Whether a message that a receive of (source, tag) would take has
  // arrived (*status says what it is); `blocking` waits for one. With
  // `taken`, it is taken out of matching into *taken (a matched probe).
  bool probe(int source, int tag, bool blocking, hcomm_status_t* status, p2p::Arrival** taken);
  bool test(p2p::Message* m, hcomm_status_t* status);
  void wait(p2p::Message* m, hcomm_status_t* status);
  // Withdraws a receive that no message matched yet; a matched one or a
  // send completes as it would.
  void cancel(p2p::Message* m);

  // The communicator of the ranks that pass `color`, ranked by `key`, then
  // by their rank here; nullptr for HCOMM_SPLIT_NOCOLOR. Collective: its
  // members meet at a rendezvous the first of them starts, whose id reaches
  // them through this communicator's bootstrap; it shares this one's
  // connections where it can (Parent).
  std::unique_ptr<Communicator> split(int color, int key, const Config& config);
  // The communicator of `members` (ranks here, in their new order, this
  // rank among them): collective over them only. The first makes its
  // rendezvous and sends the others its id in a service message of `tag`;
  // it shares this one's connections where it can, as a split's does.
  std::unique_ptr<Communicator> create_group(const std::vector<int>& members, int tag, const Config& config);
  const Config& config() const { return config_; }

  // Every later call of `coll` tries `algorithm` first (empty: back to
  // HCOMM_TUNE and the cost model).
  void force_algorithm(hcomm_coll_t coll, const std::string& algorithm);
  // The algorithm a call would use, or nullptr when none serves it.
  const hcomm_algorithm_desc_t* query_algorithm(const hcomm_coll_args_t& args) const;
  // This communicator as its algorithms' cost functions and builders see it.
  const hcomm_comm_view_t& view() const { return schedules_->view(); }

  // Its stream-ordered calls, begun at the first one.
  StreamOrder& stream_order(const device::Accelerator& accelerator);
  // A host-ordered call's turn: once the stream-ordered calls queued so far
  // are done, and none runs until the lock goes; empty while there were none.
  std::unique_lock<std::mutex> host_turn();
  // The first failure of its stream-ordered calls (HCOMM_SUCCESS while none).
  hcomm_result_t stream_error(std::string* text) const;

 private:
  // What a point-to-point operation is, for its errors.
  struct P2P {
    bool send;
    int peer;
    int tag;
    uint32_t number;  // this pair's earlier messages with the tag
    size_t count;
  };
  struct Running {
    std::optional<exec::Operation> op;
    std::vector<uint8_t>* scratch = nullptr;
    std::optional<P2P> p2p;
  };
  exec::Operation* launch(const std::shared_ptr<const exec::Schedule>& schedule, exec::Buffers buffers, uint32_t seq,
                          uint64_t tag_base, std::vector<uint8_t>* scratch, std::optional<P2P> p2p,
                          uint64_t signature = 0, std::shared_ptr<const device::UserOp> user_op = nullptr);
  exec::Operation* start_p2p(bool send, const hcomm_coll_args_t& args, exec::Buffers buffers, int tag);
  p2p::Matching& matching();
  // What a wait waits for, and on whom, for its errors and stall reports.
  class Awaited {
   public:
    virtual ~Awaited() = default;
    virtual bool done() = 0;
    virtual std::string describe() const = 0;
    virtual void pending_peer_ranks(std::vector<int>& out) const = 0;
    // "rank 3 (receive from), rank 5 (send to)"
    virtual std::string pending_peers() const;
    // Fails it for an error found outside it (a peer gone).
    [[noreturn]] virtual void blame(const Error& e) { throw Error(e.code(), describe() + " failed: " + e.what()); }
  };
  class AwaitedOperation;
  class AwaitedAny;
  class AwaitedMessage;
  // Blocks until awaited.done() (idling as exec::IdleWait says), failing at
  // HCOMM_TIMEOUT without progress or when a peer dies.
  void wait_until(Awaited& awaited);
  // A done message's status; its own failure thrown after it is released.
  void finish(p2p::Message* m, hcomm_status_t* status);
  void progress_all();
  std::list<Running>::iterator find(const exec::Operation* op);
  std::string describe(const Running& r) const;
  // With `status`, a point-to-point operation's (hcomm_status_t) first.
  void release(exec::Operation* op, hcomm_status_t* status = nullptr);
  void check_usable() const;
  // The argument check's part of a wait without progress: a peer whose
  // mapped signal carried another signature, or a question to the peers
  // the collectives in flight wait on (`ask`). Throws on a difference.
  void check_arguments(bool ask);
  void log_topology() const;
  // This communicator's links: the parent's connections under a tag context
  // that every member has free, when config_ and the parent allow; else
  // connections of its own, keyed by the ranks' `nonces`. Collective.
  std::unique_ptr<links::Links> make_links(const Parent* parent, const std::vector<uint8_t>& nonces);
  // Before the links go: waits for operations in flight, and, where the
  // links are shared, hands them what must outlive this communicator.
  void leave_links();
  // Whether any rank's host is oversubscribed; collective, so that every
  // rank's cost model is the same.
  bool any_rank_oversubscribed();
  [[noreturn]] void fail(const Error& e);
  void abandon_running();
  [[noreturn]] void blame_oldest(const Error& e);

  std::unique_ptr<bootstrap::Bootstrap> bootstrap_;
  int rank_, size_;
  Config config_;
  // Before links_: its receives stay posted until the links are gone.
  ArgumentCheck check_;
  // Before links_ too: its envelope receives stay posted until the links are gone.
  std::unique_ptr<p2p::Matching> matching_;
  bool probing_ = false;  // a probe waits: progress looks for envelopes at once
  topology::Topology topology_;
  std::unique_ptr<links::Links> links_;
  std::string topology_json_;
  std::unique_ptr<ScheduleCache> schedules_;
  // Messages so far per (peer, tag), sent and received.
  std::map<std::pair<int, int>, uint32_t> sent_, received_;
  exec::ScratchPool scratch_;  // before the operations, which hold its buffers
  std::list<Running> running_;
  // Entries of finished operations, kept for the next ones: a call allocates
  // neither a list node nor an operation.
  std::list<Running> idle_;
  uint32_t seq_ = 0;
  bool oversubscribed_;  // this host's ranks outnumber its cores
  std::unique_ptr<exec::IdleWait> idle_wait_;  // how wait() passes the time while nothing moves
  std::string broken_;  // set by the first failure: the communicator is then unusable
  std::unique_ptr<StreamOrder> stream_order_;  // last: its thread uses everything above
};

}  // namespace hcomm::comm
