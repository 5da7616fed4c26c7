// The tcp transport's handshake as an eavesdropper sees it and as a flood of
// strangers does: two nets of one communicator in this process, rank 0's
// connection to rank 1 recorded by a relay on the way and the recorded bytes
// replayed to rank 1; silent connections opened against rank 1 by hundreds.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <csignal>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "core/bootstrap/socket.hpp"
#include "core/transport/transport.hpp"
#include "hcomm/plugin/pending.hpp"
#include "plugins/transport/tcp/wire.hpp"
#include "tests/unit/descriptors.hpp"
#include "tests/unit/recording_proxy.hpp"

namespace hcomm {
namespace {

using bootstrap::Deadline;

// Calls `step` until it returns true; false after `seconds`.
bool poll_until(double seconds, const std::function<bool()>& step) {
  const Deadline limit = Deadline::after(seconds);
  while (!limit.expired())
    if (step()) return true;
  return false;
}

using test::open_descriptors;

class TcpPair : public ::testing::Test {
 protected:
  void SetUp() override {
    ::setenv("HCOMM_TCP_IF_ADDR", "127.0.0.1", 1);
    tcp_ = transport::allowed("tcp").transports.at(0);
    for (int rank = 0; rank < 2; ++rank) {
      hcomm_transport_open_args_t args{.size = sizeof args, .rank = rank, .nranks = 2, .comm_key = {}};
      std::memcpy(args.comm_key, key_.data(), key_.size());
      tcp_->check(api().open(tcp_->ctx(), &args, &nets_[rank]), "open");
      size_t len = sizeof addresses_[rank];
      tcp_->check(api().address(nets_[rank], &addresses_[rank], &len), "address");
    }
  }
  void TearDown() override {
    for (void* net : nets_)
      if (net) api().close(net);
  }

  const hcomm_transport_v1_t& api() const { return tcp_->iface(); }
  void progress_both() {
    for (void* net : nets_) tcp_->check(api().progress(net), "progress");
  }
  bool ready(void* ep) {
    int ready = 0;
    tcp_->check(api().ep_ready(ep, &ready), "ep_ready");
    return ready != 0;
  }
  bootstrap::Endpoint listener_of(int rank) const {
    return bootstrap::Endpoint{addresses_[rank].ip, addresses_[rank].port};
  }
  // Connects the pair and waits until both ends are ready; false after 5 s.
  bool connect_pair(void** ep01, void** ep10) {
    tcp_->check(api().connect(nets_[0], 1, &addresses_[1], sizeof addresses_[1], ep01), "connect");
    tcp_->check(api().connect(nets_[1], 0, &addresses_[0], sizeof addresses_[0], ep10), "connect");
    return poll_until(5, [&] {
      progress_both();
      return ready(*ep01) && ready(*ep10);
    });
  }

  transport::Transport* tcp_ = nullptr;
  const std::array<uint8_t, 16> key_{3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3};
  std::array<void*, 2> nets_{};
  std::array<tcp::wire::AddressBlob, 2> addresses_{};
};

TEST_F(TcpPair, ReplayedHandshakeIsRefused) {
  // Rank 0 (the lower rank connects) reaches rank 1 through the relay.
  test::RecordingProxy proxy(listener_of(1));
  tcp::wire::AddressBlob via_proxy = addresses_[1];
  via_proxy.ip = proxy.address().ip;
  via_proxy.port = proxy.address().port;
  void* ep01 = nullptr;
  void* ep10 = nullptr;
  tcp_->check(api().connect(nets_[0], 1, &via_proxy, sizeof via_proxy, &ep01), "connect");
  tcp_->check(api().connect(nets_[1], 0, &addresses_[0], sizeof addresses_[0], &ep10), "connect");
  ASSERT_TRUE(poll_until(5, [&] {
    progress_both();
    return ready(ep01) && ready(ep10);
  })) << "the pair did not connect";
  const std::vector<uint8_t> recorded = proxy.recorded();
  ASSERT_FALSE(recorded.empty());

  // The recorded bytes, replayed to rank 1's listener, are dropped.
  ::testing::internal::CaptureStderr();
  int err = 0;
  bootstrap::Fd replay = bootstrap::connect_with_retry(listener_of(1), Deadline::after(2), &err);
  ASSERT_TRUE(replay) << std::strerror(err);
  ASSERT_EQ(bootstrap::send_all(replay.get(), recorded.data(), recorded.size(), Deadline::after(2)),
            bootstrap::IoStatus::kDone);
  bool closed = poll_until(3, [&] {
    progress_both();
    uint8_t sink[256];
    return bootstrap::wait_for(replay.get(), POLLIN, Deadline::after(0.01)) &&
           bootstrap::recv_some(replay.get(), sink, sizeof sink) < 0;
  });
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(closed) << "rank 1 kept the replayed connection open";
  EXPECT_NE(log.find("did not prove the communicator's key"), std::string::npos) << log;

  // The real pair still delivers.
  const uint64_t sent = 0x1234567890abcdefull;
  uint64_t got = 0;
  void* send = nullptr;
  void* recv = nullptr;
  bool send_done = false, recv_done = false;
  auto finished = [&](void* request) {
    int done = 0;
    size_t bytes = 0;
    tcp_->check(api().test(request, &done, &bytes), "test");
    return done != 0;
  };
  ASSERT_TRUE(poll_until(5, [&] {
    progress_both();
    if (!recv) tcp_->check(api().irecv(ep10, &got, sizeof got, 7, &recv), "irecv");
    if (!send) tcp_->check(api().isend(ep01, &sent, sizeof sent, 7, &send), "isend");
    send_done = send_done || (send && finished(send));
    recv_done = recv_done || (recv && finished(recv));
    return send_done && recv_done;
  }));
  EXPECT_EQ(got, sent);
}

TEST_F(TcpPair, UnannouncedMessageAboveTheSplitIsRefused) {
  // Rank 1 waits for rank 0, whose socket this test speaks for by hand.
  void* ep10 = nullptr;
  tcp_->check(api().connect(nets_[1], 0, &addresses_[0], sizeof addresses_[0], &ep10), "connect");
  int err = 0;
  bootstrap::Fd rank0 = bootstrap::connect_with_retry(listener_of(1), Deadline::after(2), &err);
  ASSERT_TRUE(rank0) << std::strerror(err);

  namespace wire = tcp::wire;
  wire::Hello hello{.magic = wire::kHelloMagic, .version = wire::kVersion, .socket_index = 0, .rank = 0};
  ASSERT_TRUE(wire::auth::fresh_nonce(&hello.nonce));
  ASSERT_EQ(bootstrap::send_all(rank0.get(), &hello, sizeof hello, Deadline::after(2)), bootstrap::IoStatus::kDone);
  wire::Challenge challenge{};
  size_t got = 0;
  ASSERT_TRUE(poll_until(3, [&] {
    progress_both();
    ptrdiff_t n =
        bootstrap::recv_some(rank0.get(), reinterpret_cast<uint8_t*>(&challenge) + got, sizeof challenge - got);
    got += n > 0 ? static_cast<size_t>(n) : 0;
    return n < 0 || got == sizeof challenge;
  }));
  ASSERT_EQ(got, sizeof challenge) << "rank 1 did not challenge the hello";
  wire::Proof proof{};
  ASSERT_TRUE(wire::initiator_proof(key_, hello, challenge.nonce, &proof));
  // A 256 MiB message, unannounced although the pair splits above 64 KiB.
  const wire::PieceHeader header{.kind = static_cast<uint32_t>(wire::PieceKind::kData),
                                 .length = 1 << 20,
                                 .tag = 7,
                                 .seq = 0,
                                 .total = uint64_t{256} << 20,
                                 .offset = 0};
  ASSERT_EQ(bootstrap::send_all(rank0.get(), &proof, sizeof proof, Deadline::after(2)), bootstrap::IoStatus::kDone);
  ASSERT_EQ(bootstrap::send_all(rank0.get(), &header, sizeof header, Deadline::after(2)), bootstrap::IoStatus::kDone);

  // The receive that would take it fails, naming the peer, what it sent and
  // the limit; the link to rank 0 is closed without holding the message.
  std::array<uint8_t, 64> buf{};
  void* recv = nullptr;
  tcp_->check(api().irecv(ep10, buf.data(), buf.size(), 7, &recv), "irecv");
  std::string error;
  poll_until(3, [&] {
    int done = 0;
    size_t bytes = 0;
    try {
      tcp_->check(api().progress(nets_[1]), "progress");
      tcp_->check(api().test(recv, &done, &bytes), "test");
    } catch (const std::exception& e) {
      error = e.what();
    }
    return !error.empty() || done;
  });
  EXPECT_NE(error.find("rank 0"), std::string::npos) << error;
  EXPECT_NE(error.find("268435456 bytes came unannounced"), std::string::npos) << error;
  EXPECT_NE(error.find("above 65536 bytes"), std::string::npos) << error;
}

// `count` connections to `to`, opened and held by a child process that sends
// nothing on them and ends with this object (or with this process).
class SilentClients {
 public:
  SilentClients(const bootstrap::Endpoint& to, int count) {
    int ready[2];
    if (::pipe(ready) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      const sockaddr_in address{.sin_family = AF_INET, .sin_port = htons(to.port), .sin_addr = {to.ip}, .sin_zero = {}};
      for (int i = 0; i < count; ++i) {
        const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
        ::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address);
      }
      const char byte = 1;
      [[maybe_unused]] ssize_t n = ::write(ready[1], &byte, 1);
      for (;;) ::pause();
    }
    char byte = 0;
    if (pid_ > 0 && ::read(ready[0], &byte, 1) != 1) stop();
    ::close(ready[0]);
    ::close(ready[1]);
  }
  ~SilentClients() { stop(); }
  bool running() const { return pid_ > 0; }

 private:
  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  pid_t pid_ = -1;
};

// Lowers this process's descriptor limit until destroyed.
class DescriptorLimit {
 public:
  explicit DescriptorLimit(long limit) {
    ok_ = ::getrlimit(RLIMIT_NOFILE, &saved_) == 0;
    rlimit lowered{static_cast<rlim_t>(limit), saved_.rlim_max};
    ok_ = ok_ && ::setrlimit(RLIMIT_NOFILE, &lowered) == 0;
  }
  ~DescriptorLimit() {
    if (ok_) ::setrlimit(RLIMIT_NOFILE, &saved_);
  }
  bool ok() const { return ok_; }

 private:
  rlimit saved_{};
  bool ok_ = false;
};

TEST_F(TcpPair, SilentConnectionsDoNotLockARankOut) {
  // More silent connections from one address than this process has
  // descriptors to spare: a listener that kept them all would have none left.
  constexpr int kSilent = 400;
  constexpr long kSpare = 200;
  SilentClients flood(listener_of(1), kSilent);
  ASSERT_TRUE(flood.running()) << std::strerror(errno);
  ::testing::internal::CaptureStderr();
  long held = 0;
  bool connected = false;
  {
    const long before = open_descriptors();
    DescriptorLimit limit(before + kSpare);
    EXPECT_TRUE(limit.ok()) << std::strerror(errno);
    poll_until(0.5, [&] {
      progress_both();
      return false;
    });
    held = open_descriptors() - before;
    void* ep01 = nullptr;
    void* ep10 = nullptr;
    EXPECT_NO_THROW(connected = connect_pair(&ep01, &ep10));
  }
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(connected) << "the pair did not connect while silent connections were open against rank 1";
  EXPECT_LE(held, static_cast<long>(plugin::kPendingLimits.per_source))
      << "rank 1 holds " << held << " of " << kSilent << " silent connections from one address";
  EXPECT_NE(log.find("too many wait for their handshake"), std::string::npos) << log;
}

}  // namespace
}  // namespace hcomm
