#include <algorithm>
#include <deque>
#include <map>
#include <random>

#include "../payload.hpp"
#include "../transfers.hpp"
#include "cases.hpp"
#include "exchange.hpp"

namespace hcomm::tcheck {

namespace {

constexpr size_t kMessagesPerPair = 200;
constexpr size_t kMaxSize = 300000;
constexpr size_t kNumTags = 24;  // far fewer than messages: many share a tag
// Receives posted before the sends; the rest are posted once the data had time to arrive.
constexpr double kPostedEarly = 0.6;
constexpr auto kArrivalTime = std::chrono::milliseconds(20);

struct Message {
  uint64_t id;  // index in the sender's posting order
  uint64_t tag;
  size_t size;
  size_t capacity;  // the receive's buffer: sometimes larger than the message
};

// What `sender` sends `receiver`, in the sender's posting order; messages of
// one tag match in this order. Both ranks derive it from the shared seed.
std::vector<Message> plan_messages(uint64_t seed, int sender, int receiver) {
  std::mt19937_64 rng(mix(mix(seed, static_cast<uint64_t>(sender)), static_cast<uint64_t>(receiver)));
  std::vector<uint64_t> tags = {0, ~uint64_t{0}, 1, uint64_t{1} << 63};  // the edges of the tag range
  while (tags.size() < kNumTags) tags.push_back(rng());
  std::vector<Message> plan;
  for (uint64_t id = 0; id < kMessagesPerPair; ++id) {
    size_t size = 0;
    switch (rng() % 8) {
      case 0:
        size = 0;
        break;
      case 1:
        size = rng() % 64;
        break;
      default:
        size = rng() % (kMaxSize + 1);
        break;
    }
    size_t slack = rng() % 4 == 0 ? 1 + rng() % 100 : 0;
    plan.push_back(Message{id, tags[rng() % tags.size()], size, size + slack});
  }
  return plan;
}

// The receiver's posting order (indices into the plan): shuffled, except that
// messages of one tag stay in the sender's order, as matching requires.
std::vector<size_t> receive_order(const std::vector<Message>& plan, uint64_t seed) {
  std::vector<uint64_t> tag_slots;
  std::map<uint64_t, std::deque<size_t>> by_tag;
  for (size_t i = 0; i < plan.size(); ++i) {
    tag_slots.push_back(plan[i].tag);
    by_tag[plan[i].tag].push_back(i);
  }
  std::mt19937_64 rng(seed);
  std::shuffle(tag_slots.begin(), tag_slots.end(), rng);
  std::vector<size_t> order;
  for (uint64_t tag : tag_slots) {
    order.push_back(by_tag[tag].front());
    by_tag[tag].pop_front();
  }
  return order;
}

// One peer's side of the exchange, as this rank sees it.
struct PeerPlan {
  int peer;
  std::vector<Message> outgoing;
  std::vector<SendBuffer> send_buffers;
  std::vector<Message> incoming;
  std::vector<size_t> order;                   // receive posting order
  std::vector<ReceiveBuffer> receive_buffers;  // by incoming index
};

PeerPlan make_peer_plan(uint64_t seed, int me, int peer) {
  PeerPlan p{.peer = peer, .outgoing = plan_messages(seed, me, peer), .incoming = plan_messages(seed, peer, me)};
  p.order = receive_order(p.incoming, mix(seed, static_cast<uint64_t>(me)));
  for (const Message& m : p.outgoing) p.send_buffers.emplace_back(Payload(me, peer, m.id, m.size));
  for (const Message& m : p.incoming) p.receive_buffers.emplace_back(m.capacity);
  return p;
}

void post_receives(TransferSet& set, PeerPlan& p, size_t from, size_t to) {
  for (size_t k = from; k < to; ++k) {
    size_t i = p.order[k];
    const Message& m = p.incoming[i];
    set.recv(p.peer, p.receive_buffers[i].data(), m.capacity, m.tag, m.size);
  }
}

}  // namespace

void run_tags(RankContext& ctx) {
  RankTransport& s = ctx.transport;
  s.start();
  std::vector<PeerPlan> plans;
  for (int peer : peers_of(s)) plans.push_back(make_peer_plan(ctx.seed, ctx.rank, peer));
  size_t early = static_cast<size_t>(kMessagesPerPair * kPostedEarly);

  TransferSet set(s);
  s.phase("tags: posting the early receives and every send");
  for (PeerPlan& p : plans) post_receives(set, p, 0, early);
  for (size_t i = 0; i < kMessagesPerPair; ++i)  // interleaved over peers
    for (PeerPlan& p : plans) set.send(p.peer, p.send_buffers[i].data(), p.outgoing[i].size, p.outgoing[i].tag);
  set.barrier();
  set.poll_for(kArrivalTime);

  s.phase("tags: posting the late receives (data already arrived)");
  for (PeerPlan& p : plans) post_receives(set, p, early, kMessagesPerPair);
  s.phase("tags: completing");
  set.complete();

  for (const PeerPlan& p : plans) {
    for (const Message& m : p.incoming) {
      std::string wrong = p.receive_buffers[m.id].check(Payload(p.peer, ctx.rank, m.id, m.size));
      if (!wrong.empty())
        TCHECK_FAIL("message %llu from rank %d (tag 0x%llx, %zu bytes into a %zu-byte receive): %s",
                    static_cast<unsigned long long>(m.id), p.peer, static_cast<unsigned long long>(m.tag), m.size,
                    m.capacity, wrong.c_str());
    }
  }
  if (ctx.rank == 0)
    ctx.note(format("%zu messages per pair over %zu tags, %.0f%% of receives posted after arrival", kMessagesPerPair,
                    kNumTags, (1 - kPostedEarly) * 100));
  s.finish();
}

}  // namespace hcomm::tcheck
