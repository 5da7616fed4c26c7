// What travels before and beside the RDMA traffic, as explicit little-endian
// byte layouts with a magic and a version, so that a blob from elsewhere is
// rejected with a reason instead of being misread:
//  - the address blob the core exchanges (the side-channel listener, and the
//    port's identity for scoring),
//  - the side channel's handshake: the hellos both sides of a pair send (rank,
//    QP number, PSN, LID, GID, MTU, receive buffers), the challenge and the
//    proofs by which each side shows that it holds the communicator's key,
//  - the header of every message sent into a peer's receive buffers.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "hcomm/plugin/auth.hpp"

namespace hcomm::verbs {

namespace auth = plugin::auth;
using Key = std::array<uint8_t, 16>;

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

// The side channel's handshake. The communicator's key never travels: each
// side proves it over the other's fresh nonce (hcomm/plugin/auth.hpp), and
// the acceptor admits a side channel only once the initiator has.
//
//   initiator -> acceptor   Hello (kRequest: its rank and QP, its nonce)
//   acceptor -> initiator   Challenge (its nonce, acceptor_proof)
//   initiator -> acceptor   initiator_proof
//   acceptor -> initiator   Hello (kReply: its QP)
//   initiator -> acceptor   kReadyByte, once its QP can receive
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
  auth::Nonce nonce{};  // kRequest: the initiator's; zero in a reply

  static constexpr size_t kBytes = 64;
  using Bytes = std::array<uint8_t, kBytes>;
  Bytes encode() const;
  // Throws HCOMM_ERR_REMOTE with the reason when the bytes are not a hello.
  static Hello decode(const uint8_t* in, size_t len);
};

struct Challenge {
  auth::Nonce nonce;  // the acceptor's
  auth::Mac proof;    // acceptor_proof

  static constexpr size_t kBytes = sizeof(auth::Nonce) + sizeof(auth::Mac);
  using Bytes = std::array<uint8_t, kBytes>;
  Bytes encode() const;
  static Challenge decode(const uint8_t* in);
};

// The proofs, over the initiator's hello as sent. The acceptor's names its
// rank, so that the initiator also learns that it reached the rank it meant
// to; the role labels keep one side's proof from serving as the other's.
// False only when libcrypto fails.
bool acceptor_proof(const Key& key, const Hello::Bytes& request, const auth::Nonce& acceptor_nonce,
                    int32_t acceptor_rank, auth::Mac* out);
bool initiator_proof(const Key& key, const Hello::Bytes& request, const auth::Nonce& acceptor_nonce, auth::Mac* out);

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
