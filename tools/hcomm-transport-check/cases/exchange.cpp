#include "exchange.hpp"

#include "../payload.hpp"
#include "../transfers.hpp"

namespace hcomm::tcheck {

std::vector<int> peers_of(const RankTransport& transport) {
  std::vector<int> peers;
  for (int step = 1; step < transport.nranks(); ++step) peers.push_back((transport.rank() + step) % transport.nranks());
  return peers;
}

void exchange_with_all(RankTransport& transport, size_t size, uint64_t tag, uint64_t message_id) {
  int me = transport.rank();
  std::vector<int> peers = peers_of(transport);
  std::vector<SendBuffer> sends;
  std::vector<ReceiveBuffer> receives;
  for (int peer : peers) {
    sends.emplace_back(Payload(me, peer, message_id, size));
    receives.emplace_back(size);
  }
  TransferSet set(transport);
  auto post_receives = [&] {
    for (size_t i = 0; i < peers.size(); ++i) set.recv(peers[i], receives[i].data(), size, tag, size);
  };
  auto post_sends = [&] {
    for (size_t i = 0; i < peers.size(); ++i) set.send(peers[i], sends[i].data(), size, tag);
  };
  if (me % 2 == 0) {
    post_receives();
    post_sends();
  } else {
    post_sends();
    post_receives();
  }
  set.complete();
  for (size_t i = 0; i < peers.size(); ++i) {
    std::string wrong = receives[i].check(Payload(peers[i], me, message_id, size));
    if (!wrong.empty()) TCHECK_FAIL("%zu-byte message from rank %d: %s", size, peers[i], wrong.c_str());
  }
}

}  // namespace hcomm::tcheck
