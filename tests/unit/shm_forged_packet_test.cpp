// The shm transport's receive path against packets no honest sender writes:
// two nets of one communicator in this process, connected, and packets forged
// into the FIFO that rank 0 writes in rank 1's segment (mapped here by hand).
// A message's announced length must size no allocation, and a length or a
// piece beyond what the protocol allows is an error naming the peer.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "core/bootstrap/socket.hpp"
#include "core/transport/transport.hpp"
#include "plugins/transport/shm/address.hpp"
#include "plugins/transport/shm/fifo.hpp"

namespace hcomm {
namespace {

// This process's virtual memory, in bytes (VmSize of /proc/self/status).
uint64_t virtual_bytes() {
  std::ifstream status("/proc/self/status");
  std::string field;
  uint64_t kib = 0;
  while (status >> field)
    if (field == "VmSize:" && status >> kib) break;
  return kib << 10;
}

class ShmForgedPacket : public ::testing::Test {
 protected:
  void SetUp() override {
    shm_ = transport::allowed("shm").transports.at(0);
    for (int rank = 0; rank < 2; ++rank) {
      hcomm_transport_open_args_t args{.size = sizeof args, .rank = rank, .nranks = 2, .comm_key = {5, 7, 11}};
      shm_->check(api().open(shm_->ctx(), &args, &nets_[rank]), "open");
      size_t len = sizeof addresses_[rank];
      shm_->check(api().address(nets_[rank], &addresses_[rank], &len), "address");
    }
    shm_->check(api().connect(nets_[0], 1, &addresses_[1], sizeof addresses_[1], &ep01_), "connect");
    shm_->check(api().connect(nets_[1], 0, &addresses_[0], sizeof addresses_[0], &ep10_), "connect");
    const bootstrap::Deadline limit = bootstrap::Deadline::after(5);
    while (!(ready(ep01_) && ready(ep10_))) ASSERT_FALSE(limit.expired()) << "the pair did not connect";
    map_rank0_fifo();
  }
  void TearDown() override {
    forger_.reset();
    if (segment_) ::munmap(segment_, segment_bytes_);
    for (void* net : nets_)
      if (net) api().close(net);
  }

  const hcomm_transport_v1_t& api() const { return shm_->iface(); }
  bool ready(void* ep) {
    int ready = 0;
    shm_->check(api().ep_ready(ep, &ready), "ep_ready");
    return ready != 0;
  }

  // Writes one packet into the FIFO rank 1 reads from rank 0, as rank 0 would.
  void forge(shm::PacketType type, uint64_t tag, uint64_t length, const std::vector<std::byte>& payload) {
    shm::PacketHeader* h = forger_->reserve(payload.size());
    ASSERT_NE(h, nullptr) << "no room in the FIFO";
    h->type = type;
    h->tag = tag;
    h->length = length;
    h->cookie = 0;
    std::memcpy(shm::payload_of(h), payload.data(), payload.size());
    forger_->commit();
  }
  // Rank 1 reads what came, then the error a receive of `tag` meets, if any.
  std::string receive_error(uint64_t tag) {
    std::vector<std::byte> buf(4096);
    try {
      shm_->check(api().progress(nets_[1]), "progress");
      void* recv = nullptr;
      shm_->check(api().irecv(ep10_, buf.data(), buf.size(), tag, &recv), "irecv");
      int done = 0;
      size_t bytes = 0;
      shm_->check(api().test(recv, &done, &bytes), "test");
    } catch (const std::exception& e) {
      return e.what();
    }
    return "";
  }

  uint64_t max_payload() const { return forger_->max_payload(); }

  transport::Transport* shm_ = nullptr;
  std::array<void*, 2> nets_{};
  std::array<shm::Address, 2> addresses_{};
  void* ep01_ = nullptr;
  void* ep10_ = nullptr;

 private:
  // Rank 1's segment, through the descriptor its address names (this process
  // holds it), and the FIFO in it whose producer is rank 0.
  void map_rank0_fifo() {
    const int fd = addresses_[1].segment_fd;
    struct stat st {};
    ASSERT_EQ(::fstat(fd, &st), 0) << std::strerror(errno);
    segment_bytes_ = static_cast<size_t>(st.st_size);
    void* base = ::mmap(nullptr, segment_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ASSERT_NE(base, MAP_FAILED) << std::strerror(errno);
    segment_ = static_cast<std::byte*>(base);
    const auto& header = *reinterpret_cast<const shm::SegmentHeader*>(segment_);
    const shm::Geometry geometry{.fifo_count = header.fifo_count, .fifo_bytes = header.fifo_bytes};
    for (uint32_t i = 0; i < header.fifos_claimed.load() && i < geometry.fifo_count; ++i) {
      auto& control = *reinterpret_cast<shm::FifoControl*>(segment_ + geometry.control_offset(i));
      if (control.producer_rank.load() != 0) continue;
      forger_.emplace(control, segment_ + geometry.data_offset(i), geometry.fifo_bytes);
      return;
    }
    FAIL() << "rank 0 claimed no FIFO in rank 1's segment";
  }

  std::byte* segment_ = nullptr;
  size_t segment_bytes_ = 0;
  std::optional<shm::FifoProducer> forger_;
};

TEST_F(ShmForgedPacket, AnnouncedLengthSizesNoAllocation) {
  // 1 KiB of a message that claims 16 GiB, before any receive is posted.
  constexpr uint64_t kAnnounced = uint64_t{16} << 30;
  forge(shm::PacketType::Eager, 7, kAnnounced, std::vector<std::byte>(1024, std::byte{0x5a}));
  const uint64_t before = virtual_bytes();
  try {
    shm_->check(api().progress(nets_[1]), "progress");
  } catch (const std::exception& e) {
    ADD_FAILURE() << "rank 1 could not take 1 KiB of an unexpected message: " << e.what();
  }
  const uint64_t grown = virtual_bytes() - before;
  EXPECT_LT(grown, uint64_t{64} << 20) << "rank 1 reserved " << grown << " bytes for 1 KiB that arrived";

  // The message is what it claims to be as far as matching goes: too long
  // for this receive, which says so and names the peer.
  const std::string error = receive_error(7);
  EXPECT_NE(error.find("rank 0"), std::string::npos) << error;
  EXPECT_NE(error.find("is 17179869184 bytes, the receive buffer only 4096"), std::string::npos) << error;
}

TEST_F(ShmForgedPacket, UnexpectedMessageIsReassembledWhole) {
  // An honest message of many packets, all in before its receive is posted:
  // held in staging blocks of growing size, delivered whole and in order.
  constexpr uint64_t kLength = 300 << 10;
  std::vector<std::byte> message(kLength);
  for (uint64_t i = 0; i < kLength; ++i) message[i] = static_cast<std::byte>(i * 131 / 7);
  for (uint64_t sent = 0; sent < kLength;) {
    const uint64_t n = std::min(kLength - sent, max_payload());
    forge(sent ? shm::PacketType::Fragment : shm::PacketType::Eager, 9, kLength,
          std::vector<std::byte>(message.begin() + static_cast<std::ptrdiff_t>(sent),
                                 message.begin() + static_cast<std::ptrdiff_t>(sent + n)));
    sent += n;
  }
  shm_->check(api().progress(nets_[1]), "progress");
  std::vector<std::byte> got(kLength + 1);
  void* recv = nullptr;
  shm_->check(api().irecv(ep10_, got.data(), got.size(), 9, &recv), "irecv");
  int done = 0;
  size_t bytes = 0;
  shm_->check(api().test(recv, &done, &bytes), "test");
  ASSERT_TRUE(done);
  EXPECT_EQ(bytes, kLength);
  got.resize(kLength);
  EXPECT_TRUE(got == message) << "the message arrived changed";
}

TEST_F(ShmForgedPacket, LengthBeyondTheLargestMessageIsAProtocolError) {
  forge(shm::PacketType::Eager, 7, uint64_t{1} << 63, std::vector<std::byte>(64));
  const std::string error = receive_error(7);
  EXPECT_NE(error.find("broken packet stream from rank 0"), std::string::npos) << error;
  EXPECT_NE(error.find("a message of 9223372036854775808 bytes announced"), std::string::npos) << error;
}

TEST_F(ShmForgedPacket, MoreDataThanAnnouncedIsAProtocolError) {
  forge(shm::PacketType::Eager, 7, 100, std::vector<std::byte>(64));
  forge(shm::PacketType::Fragment, 7, 100, std::vector<std::byte>(64));
  const std::string error = receive_error(7);
  EXPECT_NE(error.find("broken packet stream from rank 0"), std::string::npos) << error;
  EXPECT_NE(error.find("64 bytes more for a message of 100 bytes that has 64 already"), std::string::npos) << error;
}

}  // namespace
}  // namespace hcomm
