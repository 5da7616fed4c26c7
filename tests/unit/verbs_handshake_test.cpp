// The verbs transport's side-channel handshake without an RDMA device: rank
// 1's acceptor (plugins/transport/verbs/acceptor.hpp) on 127.0.0.1, and rank
// 0's side of the handshake spoken by hand with the wire's proofs. Only a
// connection that proves the communicator's key over the acceptor's fresh
// nonce is admitted; the key is never on the wire; a recorded handshake,
// another key, a hello of a rank that does not connect here are dropped with
// a reason; silent connections cannot pile up.
#if HCOMM_HAVE_VERBS
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "core/bootstrap/socket.hpp"
#include "hcomm/plugin/pending.hpp"
#include "plugins/transport/verbs/acceptor.hpp"
#include "tests/unit/descriptors.hpp"

namespace hcomm::verbs {
namespace {

using bootstrap::Deadline;

bool contains(const std::vector<uint8_t>& haystack, const Key& needle) {
  return std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end()) != haystack.end();
}

using test::open_descriptors;

// One connection to the acceptor, as an initiator (or a stranger) speaks it;
// what goes each way is recorded.
class Client {
 public:
  explicit Client(uint16_t port) {
    int error = 0;
    fd_ = bootstrap::connect_with_retry(bootstrap::Endpoint{htonl(INADDR_LOOPBACK), port}, Deadline::after(2), &error);
    EXPECT_TRUE(fd_) << std::strerror(error);
  }
  void send(const uint8_t* data, size_t len) {
    sent.insert(sent.end(), data, data + len);
    EXPECT_EQ(bootstrap::send_all(fd_.get(), data, len, Deadline::after(2)), bootstrap::IoStatus::kDone);
  }
  // Reads `len` bytes while `progress` runs; false when the connection
  // closes first or 3 s pass.
  bool receive(size_t len, std::vector<uint8_t>* out, const std::function<void()>& progress) {
    out->assign(len, 0);
    size_t got = 0;
    const Deadline limit = Deadline::after(3);
    while (got < len && !limit.expired()) {
      progress();
      const ptrdiff_t n = bootstrap::recv_some(fd_.get(), out->data() + got, len - got);
      if (n < 0) return false;
      got += static_cast<size_t>(n);
    }
    received.insert(received.end(), out->begin(), out->begin() + static_cast<ptrdiff_t>(got));
    return got == len;
  }
  // True once the acceptor has closed the connection (within 3 s).
  bool closed(const std::function<void()>& progress) {
    const Deadline limit = Deadline::after(3);
    uint8_t sink[64];
    while (!limit.expired()) {
      progress();
      if (bootstrap::recv_some(fd_.get(), sink, sizeof sink) < 0) return true;
    }
    return false;
  }

  std::vector<uint8_t> sent;
  std::vector<uint8_t> received;

 private:
  bootstrap::Fd fd_;
};

class VerbsHandshake : public ::testing::Test {
 protected:
  // Rank 0's hello, as an endpoint sends it.
  static Hello::Bytes request() {
    Hello hello{.kind = Hello::Kind::kRequest,
                .mtu = 3,
                .lid = 9,
                .rank = 0,
                .qpn = 0x1234,
                .psn = 0x42,
                .credits = 32,
                .eager_bytes = 8192,
                .gid = {},
                .nonce = {}};
    EXPECT_TRUE(auth::fresh_nonce(&hello.nonce));
    return hello.encode();
  }
  void poll() {
    Acceptor::Progress progress = acceptor_.poll();
    for (Acceptor::Admitted& a : progress.admitted) admitted_.push_back(std::move(a));
    for (const std::string& w : progress.warnings) warnings_ += w + "\n";
  }
  std::function<void()> poller() {
    return [this] { poll(); };
  }
  // Rank 0's whole handshake under `key`: true when the acceptor's proof
  // checked out and this side's proof was sent.
  bool initiate(Client& client, const Key& key) {
    const Hello::Bytes hello = request();
    client.send(hello.data(), hello.size());
    std::vector<uint8_t> bytes;
    if (!client.receive(Challenge::kBytes, &bytes, poller())) return false;
    const Challenge challenge = Challenge::decode(bytes.data());
    auth::Mac expected{}, proof{};
    EXPECT_TRUE(acceptor_proof(key, hello, challenge.nonce, 1, &expected));
    EXPECT_TRUE(initiator_proof(key, hello, challenge.nonce, &proof));
    client.send(proof.data(), proof.size());
    return auth::same_mac(challenge.proof, expected);
  }

  const Key key_{3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3};
  Acceptor acceptor_{key_, /*rank=*/1, /*nranks=*/4, htonl(INADDR_LOOPBACK)};
  std::vector<Acceptor::Admitted> admitted_;
  std::string warnings_;  // what the net would log
};

TEST_F(VerbsHandshake, ProvenInitiatorIsAdmittedAndTheKeyNeverTravels) {
  Client client(acceptor_.port());
  EXPECT_TRUE(initiate(client, key_)) << "the acceptor did not prove the key as rank 1";
  const Deadline limit = Deadline::after(3);
  while (admitted_.empty() && !limit.expired()) poll();
  ASSERT_EQ(admitted_.size(), 1u) << warnings_;
  EXPECT_EQ(admitted_[0].hello.rank, 0);
  EXPECT_EQ(admitted_[0].hello.qpn, 0x1234u);
  EXPECT_TRUE(admitted_[0].channel.valid());
  EXPECT_FALSE(contains(client.sent, key_));
  EXPECT_FALSE(contains(client.received, key_));
}

TEST_F(VerbsHandshake, AnotherKeyIsRefused) {
  Key other = key_;
  other[0] ^= 1;
  Client client(acceptor_.port());
  EXPECT_FALSE(initiate(client, other)) << "the acceptor's proof checked out under another key";
  EXPECT_TRUE(client.closed(poller())) << "the acceptor kept a connection that proved another key";
  EXPECT_TRUE(admitted_.empty());
  EXPECT_NE(warnings_.find("did not prove the communicator's key"), std::string::npos) << warnings_;
}

TEST_F(VerbsHandshake, ReplayedHandshakeIsRefused) {
  Client eavesdropped(acceptor_.port());
  ASSERT_TRUE(initiate(eavesdropped, key_));
  const Deadline limit = Deadline::after(3);
  while (admitted_.empty() && !limit.expired()) poll();
  ASSERT_EQ(admitted_.size(), 1u) << warnings_;

  // What rank 0 sent, replayed on a new connection, proves nothing.
  Client replay(acceptor_.port());
  replay.send(eavesdropped.sent.data(), eavesdropped.sent.size());
  EXPECT_TRUE(replay.closed(poller())) << "the acceptor kept the replayed connection open";
  EXPECT_EQ(admitted_.size(), 1u);
  EXPECT_NE(warnings_.find("did not prove the communicator's key"), std::string::npos) << warnings_;
}

TEST_F(VerbsHandshake, HelloOfARankThatDoesNotConnectHereIsRefused) {
  auto refused = [&](auto&& spoil, const char* reason) {
    warnings_.clear();
    Hello hello = Hello::decode(request().data(), Hello::kBytes);
    spoil(hello);
    const Hello::Bytes bytes = hello.encode();
    Client client(acceptor_.port());
    client.send(bytes.data(), bytes.size());
    EXPECT_TRUE(client.closed(poller())) << reason;
    EXPECT_TRUE(client.received.empty()) << "a refused hello was challenged: " << reason;
    EXPECT_NE(warnings_.find(reason), std::string::npos) << warnings_;
  };
  refused([](Hello& h) { h.rank = 2; }, "rank 2 may not connect to rank 1");
  refused([](Hello& h) { h.rank = 4; }, "outside the communicator of 4 ranks");
  refused([](Hello& h) { h.kind = Hello::Kind::kReply; }, "a reply, not a request");
  EXPECT_TRUE(admitted_.empty());
}

TEST_F(VerbsHandshake, SilentConnectionsAreBounded) {
  // More silent connections from one address than a source may hold pending.
  constexpr int kSilent = 100;
  const long before = open_descriptors();
  std::vector<Client> silent;
  for (int i = 0; i < kSilent; ++i) silent.emplace_back(acceptor_.port());
  const Deadline settle = Deadline::after(0.5);
  while (!settle.expired()) poll();
  const long held = open_descriptors() - before - kSilent;
  EXPECT_LE(held, static_cast<long>(plugin::kPendingLimits.per_source))
      << "the acceptor holds " << held << " of " << kSilent << " silent connections from one address";
  EXPECT_NE(warnings_.find("too many wait for their handshake"), std::string::npos) << warnings_;

  // A real rank still gets in.
  Client client(acceptor_.port());
  EXPECT_TRUE(initiate(client, key_));
  const Deadline limit = Deadline::after(3);
  while (admitted_.empty() && !limit.expired()) poll();
  EXPECT_EQ(admitted_.size(), 1u) << warnings_;
}

}  // namespace
}  // namespace hcomm::verbs
#endif
