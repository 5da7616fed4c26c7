// Point to point in matching mode (hcomm_config_t.p2p_matching any, MPI's
// matching) over a communicator's links.
//
// Every message starts with an envelope (Header: tag, bytes, flags, the
// sender's number of the message to that receiver) that carries the data
// itself up to kEagerBytes. Envelopes between two ranks travel under one
// tag (exec::envelope_tag), so they arrive in the order sent; each rank
// keeps kSlots receives of envelopes posted per peer, into buffers of its
// own, and takes what lands there in order. An envelope that no waiting
// receive matches waits among the arrivals (MatchQueues gives MPI's order);
// probes look at those. Larger data moves once its envelope matched: the
// receiver posts its receive straight into the receive buffer and replies,
// saying how many bytes it takes, and the sender then sends them as a
// message tagged with the message's number (exec::data_tag_base). The data
// is copied once, by the transport, however late the receive comes, and no
// transport ever holds a large message that nobody receives yet. A
// synchronous send completes on the reply, which an envelope with its data
// gets too once a receive took it. Messages to this rank itself never leave
// it: they are copied whole into an arrival.
//
// Receives waiting for a message can be cancelled. A receive whose message
// is longer than its room fails alone (HCOMM_ERR_TRUNCATED, the room's worth
// delivered), as does one from a rank whose link closed; a transport's
// failure fails the communicator, as in exact mode.
#pragma once

#include <cstdint>
#include <deque>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/exec/operation.hpp"
#include "core/p2p/match_queues.hpp"
#include "hcomm/hcomm.h"

namespace hcomm::comm {
class ScheduleCache;
}
namespace hcomm::links {
class Links;
}

namespace hcomm::p2p {

// An envelope's fields, before its data.
struct Header {
  int32_t tag;
  uint32_t flags;   // kSynchronousFlag, kReplyFlag
  uint32_t number;  // the sender's number of the message to this receiver
  uint32_t reserved;
  uint64_t bytes;  // the message's; a reply's: of its data the receive takes
};
constexpr uint32_t kSynchronousFlag = 1;  // the receiver replies once a receive took it
// The receiver's reply to message `number`, matched: send `bytes` of its data.
constexpr uint32_t kReplyFlag = 2;
// Messages up to this size travel inside their envelope.
constexpr uint64_t kEagerBytes = 4096;
// Envelope receives each rank keeps posted per peer.
constexpr size_t kSlots = 4;

struct Message;

// "rank 3" or "any rank"; "tag 5" or "any tag": for errors.
std::string who(int source);
std::string which(int tag);

// A message that arrived and that no receive took yet.
struct Arrival {
  int source = 0;
  int tag = 0;
  uint64_t bytes = 0;
  uint32_t number = 0;
  uint32_t flags = 0;
  std::vector<uint8_t> data;  // the eager data; a message to this rank itself whole
  Message* sender = nullptr;  // a synchronous send to this rank itself, acknowledged when taken
  std::list<Arrival>::iterator self;
};

// One send or receive (the request of a call), or a reply.
struct Message {
  enum class Kind { kSend, kReceive, kReply } kind = Kind::kSend;
  int source = kAny, tag = kAny;  // a receive's, as asked (MatchQueues reads them)
  int peer = 0;                   // a send's or reply's receiver
  const void* send_buf = nullptr;
  void* recv_buf = nullptr;
  uint64_t bytes = 0;   // a send's message; a receive's room
  uint32_t number = 0;  // a send's number to its receiver
  bool synchronous = false;
  hcomm_status_t status{};  // a receive's, once matched or cancelled

  bool matched = false, cancelled = false;
  bool envelope_pending = false;  // a send's envelope is not out yet
  void* envelope_request = nullptr;
  bool awaiting_reply = false;  // a send above kEagerBytes, or a synchronous one
  bool data_pending = false;
  std::optional<exec::Operation> data;   // the data of a message above kEagerBytes
  std::vector<uint8_t> envelope;         // a send's or reply's header, and eager data
  hcomm_result_t error = HCOMM_SUCCESS;  // the receive's own failure
  std::string error_text;
  std::list<Message>::iterator self;
};

class Matching {
 public:
  // `stamp`: the communicator's id (the same on every rank), which its tags carry.
  Matching(links::Links& links, comm::ScheduleCache& schedules, int rank, int size, uint64_t stamp);
  ~Matching();
  Matching(const Matching&) = delete;
  Matching& operator=(const Matching&) = delete;

  // The calls. source and tag may be kAny; `peer` may be this rank.
  Message* send(const void* buf, uint64_t bytes, int peer, int tag, bool synchronous);
  Message* recv(void* buf, uint64_t room, int source, int tag);
  // The oldest arrival a receive of (source, tag) would take, or nullptr (a probe).
  const Arrival* find(int source, int tag) const { return queues_.find(source, tag); }
  // The same, taken out of matching (a matched probe), or nullptr.
  Arrival* take(int source, int tag);
  // Why no message can come from `source` any more (its link closed);
  // empty while one may, and for kAny.
  std::string gone(int source) const;
  // A receive of an arrival that take() handed out.
  Message* recv(void* buf, uint64_t room, Arrival* taken);
  // Withdraws a receive that waits for a message; false when it cannot be
  // (it matched, or is no receive).
  bool cancel(Message* m);

  // Moves envelopes, data and replies; `probing`: the caller waits
  // for an arrival, so envelopes are looked for at once. Throws the links'
  // errors, naming the message.
  void progress(bool probing = false);
  bool done(const Message& m) const;
  // Gives back a done message (its status copied out first).
  void release(Message* m);
  // Moves whenever anything happened: envelopes arrived, data moved, envelopes left.
  uint64_t events() const { return events_; }
  // Whether sends, replies or matched receives are still under way
  // (a communicator completes them before it goes).
  bool busy() const;
  // "receive of up to 64 bytes from any rank with tag 5", for errors.
  std::string describe(const Message& m) const;
  // The ranks `m` waits on, each added once.
  void pending_peer_ranks(const Message& m, std::vector<int>& out) const;
  // What envelope receives left posted and sends in flight read and write,
  // for connections that outlive the communicator; nullptr when none.
  std::shared_ptr<void> leftovers();

 private:
  struct Slot {
    std::vector<uint8_t> buf;
    void* request = nullptr;
  };
  struct Peer {
    std::vector<Slot> slots;  // posted in ring order from `oldest`
    size_t oldest = 0, posted = 0;
    uint32_t next_number = 0;        // of this rank's messages to it
    std::deque<Message*> unposted;   // envelopes the transport asked to retry, in order
    std::vector<Message*> awaiting;  // sends waiting for its reply
    std::string gone;                // why no more envelopes come from it; empty while they may
  };

  void start();
  Message& acquire(Message::Kind kind);
  Arrival& acquire_arrival();
  void release(Arrival& a);
  void send_envelope(Message& m, int peer, const Header& h, const void* eager);
  void post_envelopes(int peer);
  void post_slots(int peer);
  void take_envelopes(int peer);
  void arrived(int peer, const uint8_t* envelope, size_t len);
  void replied(int peer, const Header& h);
  void deliver(Message& r, Arrival& a, const uint8_t* eager);
  void start_data(Message& m, bool sending, int peer, uint32_t number, void* buf, uint64_t bytes);
  void advance();
  void advance_data(Message& m);
  void lose(int peer, const std::string& why);
  void fail(Message& r, hcomm_result_t code, const std::string& text);

  links::Links& links_;
  comm::ScheduleCache& schedules_;
  int rank_, size_;
  uint64_t stamp_;
  uint64_t envelope_tag_;
  bool started_ = false;
  std::vector<Peer> peers_;
  MatchQueues<Message, Arrival> queues_;
  std::list<Message> messages_, spare_messages_;  // live and reusable; the spares keep their buffers
  std::list<Arrival> arrivals_, spare_arrivals_;
  std::vector<Message*> active_;  // messages with an envelope or data in flight
  size_t awaiting_replies_ = 0;
  uint64_t events_ = 0;
};

}  // namespace hcomm::p2p
