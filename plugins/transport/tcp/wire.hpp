// Byte layouts of everything the TCP transport puts on the wire or in its
// address blob. Fields are in host byte order: HComm runs on little-endian
// hosts only, and the assertion below keeps it honest.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <type_traits>

#include "hcomm/plugin/auth.hpp"

namespace hcomm::tcp::wire {

static_assert(std::endian::native == std::endian::little, "the tcp wire format is little-endian");

inline constexpr uint16_t kVersion = 3;

namespace auth = plugin::auth;

// The address blob a rank publishes: where to connect, and what scoring needs.
struct AddressBlob {
  uint32_t magic;  // kAddressMagic
  uint16_t version;
  uint16_t nsocks;  // sockets this rank opens per peer; a pair uses the smaller count
  uint32_t ip;      // IPv4, network byte order
  uint16_t port;
  uint16_t reserved;
  uint64_t host_id;      // equal values: same kernel boot, hostname and network namespace
  uint64_t split_bytes;  // HCOMM_TCP_SPLIT_BYTES; a pair uses the smaller value
};
inline constexpr uint32_t kAddressMagic = 0x41544348;  // "HCTA"

// The handshake, the first bytes on every socket. The communicator's key
// never travels: each side proves it over the other's fresh nonce.
//
//   initiator -> acceptor   Hello
//   acceptor -> initiator   Challenge (its nonce, acceptor_proof)
//   initiator -> acceptor   Proof (initiator_proof)
struct Hello {
  uint32_t magic;  // kHelloMagic
  uint16_t version;
  uint16_t socket_index;  // which of the pair's sockets this is
  int32_t rank;           // the initiator's rank
  uint32_t reserved;
  auth::Nonce nonce;  // the initiator's
};
inline constexpr uint32_t kHelloMagic = 0x48544348;  // "HCTH"

struct Challenge {
  auth::Nonce nonce;  // the acceptor's
  auth::Mac proof;    // acceptor_proof
};

using Proof = auth::Mac;

// The acceptor's proof names its rank, so that an initiator also learns that
// it reached the rank it meant to; the initiator's covers its hello (rank and
// socket index). False only when libcrypto fails.
inline bool acceptor_proof(const std::array<uint8_t, 16>& key, const Hello& hello, const auth::Nonce& acceptor_nonce,
                           int32_t acceptor_rank, auth::Mac* out) {
  return auth::mac(
      key, {auth::label("hcomm tcp acceptor"), auth::bytes_of(hello), acceptor_nonce, auth::bytes_of(acceptor_rank)},
      out);
}
inline bool initiator_proof(const std::array<uint8_t, 16>& key, const Hello& hello, const auth::Nonce& acceptor_nonce,
                            auth::Mac* out) {
  return auth::mac(key, {auth::label("hcomm tcp initiator"), auth::bytes_of(hello), acceptor_nonce}, out);
}

// HCOMM_TCP_SPLIT_BYTES's upper bound: the piece length field is 32 bits wide.
inline constexpr uint64_t kMaxEagerBytes = uint64_t{1} << 30;

// A message up to the pair's split (the smaller HCOMM_TCP_SPLIT_BYTES of its
// two ranks) goes at once, as one kData piece; a receiver holds no more for a
// message nobody asked for yet. A larger one is announced (kRts); once its
// receive is posted the receiver answers (kCts), and the data follows in
// kData pieces spread over the pair's sockets.
enum class PieceKind : uint32_t {
  kData = 1,  // part (or all) of a message
  kBye = 2,   // the sender closes its endpoint: nothing follows on this socket
  kRts = 3,   // a large message is ready to send (tag, seq, total); no payload
  kCts = 4,   // the receiver takes message `seq`: send its data; no payload
};

// Precedes every piece.
struct PieceHeader {
  uint32_t kind = 0;    // PieceKind
  uint32_t length = 0;  // payload bytes that follow this header
  uint64_t tag = 0;
  uint64_t seq = 0;     // the message's number among all messages of the endpoint
  uint64_t total = 0;   // the message's length
  uint64_t offset = 0;  // where this piece starts in the message
};

static_assert(sizeof(AddressBlob) == 32 && std::is_trivially_copyable_v<AddressBlob>);
static_assert(sizeof(Hello) == 32 && std::is_trivially_copyable_v<Hello>);
static_assert(sizeof(Challenge) == 48 && std::is_trivially_copyable_v<Challenge>);
static_assert(sizeof(PieceHeader) == 40 && std::is_trivially_copyable_v<PieceHeader>);

}  // namespace hcomm::tcp::wire
