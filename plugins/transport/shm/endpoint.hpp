// The link to one peer: the FIFO this rank writes in the peer's segment, the
// FIFO the peer writes in this rank's segment, and tag matching.
//
// Matching: a message's first packet (Eager or Rendezvous) takes the first
// posted receive with its tag, in posting order; else it waits among the
// unexpected arrivals until a receive with its tag is posted. Arrivals are
// kept in arrival order, so messages of one tag match in order.
//
// Large messages: an Eager message longer than one packet streams in
// Fragments straight into the receive buffer once matched (into staging
// memory that grows with the data before that). A message of at least HCOMM_SHM_CMA_BYTES, to a peer
// that can read this process's memory, goes as a Rendezvous: the receiver
// copies it with CMA once matched and acknowledges it, which completes the send.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include "address.hpp"
#include "coarse_clock.hpp"
#include "doorbell.hpp"
#include "fifo.hpp"
#include "peer_process.hpp"
#include "request.hpp"
#include "segment.hpp"
#include "staging.hpp"

namespace hcomm::shm {

class Net;

class Endpoint {
 public:
  using Clock = CoarseClock;

  // Attaches to the peer's segment and claims a FIFO in it.
  Endpoint(Net& net, const Address& peer);
  // Marks both FIFOs closed for the peer and fails what is pending here.
  ~Endpoint();
  Endpoint(const Endpoint&) = delete;
  Endpoint& operator=(const Endpoint&) = delete;

  Net& net() const { return net_; }
  int peer_rank() const { return peer_.rank; }

  // True once the peer has attached to this rank's segment too. Throws the
  // endpoint's failure (a dead peer: HCOMM_ERR_REMOTE).
  bool ready();
  // Throws the endpoint's failure instead of returning a request.
  Request& isend(const void* buf, size_t len, uint64_t tag);
  Request& irecv(void* buf, size_t len, uint64_t tag);
  // One blocking copy from or into the peer's memory at `remote` (ep_read,
  // ep_write): HCOMM_ERR_UNSUPPORTED where CMA is off or forbidden.
  void read(void* local, uint64_t remote, size_t bytes);
  void write(const void* local, uint64_t remote, size_t bytes);

  // Moves what can move now; failures become failed requests.
  void progress();
  // Checks, at most every kLivenessInterval, that the peer still lives.
  void check_peer(Clock::time_point now);
  // Something for progress to do: packets to read, or room for what waits to be sent.
  bool has_work();
  bool has_pending_requests() const;
  // The peer has attached to this rank's segment, or never will (failed).
  bool attached_or_failed();

 private:
  struct Failure {
    hcomm_result_t code;
    std::string text;
  };
  struct Ack {
    uint64_t cookie;
    int status;  // errno of the read, 0 when done
  };
  // A message that has begun to arrive and has not been handed to a receive.
  struct Arrival {
    uint64_t tag;
    uint64_t length;
    uint64_t received = 0;
    Request* receive = nullptr;              // matched, data streams into its buffer
    bool discard = false;                    // matched to a receive too short: the rest is dropped
    Staging staging;                         // data that came before its receive
    std::optional<uint64_t> remote_address;  // Rendezvous: the data is still in the sender
    uint64_t cookie = 0;                     // Rendezvous: acknowledged with it
    bool complete() const { return received == length; }
    bool unexpected() const { return !receive && !discard; }
  };
  using Arrivals = std::list<Arrival>;

  bool find_incoming_fifo();
  void receive(size_t max_packets);
  void handle(const PacketHeader& p);
  void check_length(const PacketHeader& p) const;
  void begin_eager(const PacketHeader& p);
  void continue_eager(const PacketHeader& p);
  void begin_rendezvous(const PacketHeader& p);
  void on_ack(const PacketHeader& p);
  void bind(Arrival& a, Request& r);
  void read_rendezvous(Arrival& a, Request& r);
  void settle(Arrivals::iterator it);
  Request* take_posted(uint64_t tag);

  void send();
  bool push(Request& r);
  bool use_cma(uint64_t length) const;
  uint64_t next_payload() const;

  void fail(hcomm_result_t code, const std::string& text);
  [[noreturn]] void throw_failure() const;
  void check_closed_by_peer();
  std::string describe_peer() const;
  CmaState probe_cma();
  void check_copy(int err, const char* verb, uint64_t remote, size_t bytes);
  [[noreturn]] void protocol_error(const std::string& what) const;

  Net& net_;
  const Address peer_;
  std::optional<Segment> peer_segment_;  // empty for this rank itself: its own segment serves
  const Segment& target_;                // the peer's segment
  const uint32_t out_slot_;              // this rank's FIFO in it
  FifoControl* out_control_;
  FifoProducer out_;
  Doorbell peer_doorbell_;
  FifoControl* in_control_ = nullptr;  // found once the peer has attached
  std::optional<FifoConsumer> in_;
  PeerProcess process_;
  Clock::time_point next_liveness_check_;
  std::optional<Failure> failure_;

  std::deque<Request*> send_queue_;  // the front may be partly in the FIFO
  uint64_t front_sent_ = 0;          // bytes of the front already in the FIFO
  bool front_started_ = false;       // its first packet is in the FIFO
  bool blocked_ = false;             // last value stored in out_control_->producer_blocked
  std::deque<Ack> acks_;
  std::unordered_map<uint64_t, Request*> awaiting_ack_;
  uint64_t next_cookie_ = 1;

  std::deque<Request*> posted_;
  Arrivals arrivals_;
  Arrivals::iterator streaming_;  // the Eager message whose Fragments come next, or end()
};

}  // namespace hcomm::shm
