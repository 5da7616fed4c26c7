// What travels before and beside the RDMA traffic, as explicit little-endian
// byte layouts with a magic and a version, so that a blob from elsewhere is
// rejected with a reason instead of being misread:
//  - the address blob the core exchanges (the side-channel listener, and the
//    port's identity for scoring),
//  - the hello both sides of a pair send over the side channel (communicator
//    key, rank, QP number, PSN, LID, GID, MTU, receive buffers),
//  - the header of every message sent into a peer's receive buffers.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace hcomm::verbs {

using Gid = std::array<uint8_t, 16>;

enum class LinkLayer : uint8_t { kNone = 0, kInfiniBand = 1, kEthernet = 2 };

struct Address {
  bool has_device = false;  // false: this rank found no usable RDMA port
  LinkLayer link_layer = LinkLayer::kNone;
  uint8_t port = 0;
  uint8_t mtu = 0;  // enum ibv_mtu
  uint16_t lid = 0;
  uint32_t rate_mbps = 0;  // active width x speed
  Gid gid{};
  uint32_t listen_ip = 0;    // network byte order
  uint16_t listen_port = 0;  // host byte order
  uint64_t host_id = 0;

  static constexpr size_t kBytes = 48;
  // Writes the blob into buf (capacity *len) and sets *len to its length.
  void encode(void* buf, size_t* len) const;
  // Throws HCOMM_ERR_INVALID_ARGUMENT naming `what` when the blob is not ours.
  static Address decode(const void* buf, size_t len, const char* what);
};

struct Hello {
  enum class Kind : uint8_t { kRequest = 1, kReply = 2 };
  Kind kind = Kind::kRequest;
  uint8_t mtu = 0;
  uint16_t lid = 0;
  int32_t rank = -1;
  uint32_t qpn = 0;
  uint32_t psn = 0;
  uint32_t credits = 0;      // receive buffers the sender of the hello posted
  uint32_t eager_bytes = 0;  // payload bytes each of them holds
  Gid gid{};
  std::array<uint8_t, 16> key{};

  static constexpr size_t kBytes = 64;
  void encode(uint8_t (&out)[kBytes]) const;
  // Throws HCOMM_ERR_REMOTE with the reason when the bytes are not a hello.
  static Hello decode(const uint8_t* in, size_t len);
};

// The one byte the connecting side sends once its QP can receive.
inline constexpr uint8_t kReadyByte = 0x5a;

// Header at the front of every message into a receive buffer.
struct MsgHeader {
  enum class Type : uint8_t {
    kEager = 1,   // payload follows the header
    kRts = 2,     // a large message waits: seq, tag, len
    kCts = 3,     // go ahead with seq: write len bytes to addr with rkey
    kNack = 4,    // seq will not be taken (the receive was too short)
    kCredit = 5,  // returns credits only
  };
  Type type = Type::kCredit;
  uint16_t credits = 0;  // receive buffers reposted since the last header
  uint32_t rkey = 0;
  uint64_t seq = 0;
  uint64_t tag = 0;
  uint64_t len = 0;
  uint64_t addr = 0;

  static constexpr size_t kBytes = 40;
  void encode(uint8_t* out) const;
  static MsgHeader decode(const uint8_t* in);
};

}  // namespace hcomm::verbs
