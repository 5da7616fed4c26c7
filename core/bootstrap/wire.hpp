// The rendezvous protocol. The job's secret never travels: both sides prove
// it by challenge and response (hcomm/plugin/auth.hpp):
//
//   client -> root   Hello (fixed size: rank, job size, a fresh nonce)
//   root -> client   kChallenge (the root's fresh nonce and its proof)
//   client -> root   Proof (fixed size: the client's proof)
//   root -> client   kWelcome (admitted), or kReject
//
// After that both directions carry frames (a header, then `length` bytes):
//
//   client -> root   kContribute (its allgather blob), kGoodbye, kStalled
//                    (a call of this rank made no progress: milliseconds
//                    before the root judges, then the ranks it waits on;
//                    none: it moves again)
//   root -> client   kReady (every rank joined; payload: the rank whose
//                    process serves the rendezvous, or -1), kGathered (the
//                    blobs of all ranks in rank order), kPeerFailed (a rank's
//                    connection closed without goodbye), kAbort (the job
//                    cannot go on: code and text), kReject (the hello was
//                    refused: code and text; the connection then closes),
//                    kHeldUpBy (the ranks that the stalled rank's waits lead
//                    to, which wait on nobody)
//
// A root with too many unidentified connections closes the oldest without a
// word; a client whose connection closes before kWelcome or kReject tries
// again, until its deadline.
//
// Integers travel in the byte order of the hosts (the magic tells a peer of
// the other order apart); one job runs on hosts of one kind.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/bootstrap/bootstrap.hpp"
#include "hcomm/plugin/auth.hpp"
#include "hcomm/types.h"

namespace hcomm::bootstrap {

constexpr uint32_t kHelloMagic = 0x48434254;  // "HCBT"
constexpr uint32_t kProtocolVersion = 2;
constexpr int kMaxRanks = 1 << 20;
// Bootstrap blobs are small (addresses, topology descriptions): the limits
// keep a corrupted length from making a peer allocate without bound.
constexpr size_t kMaxBlobBytes = size_t{16} << 20;
constexpr size_t kMaxGatheredBytes = size_t{1} << 30;
// Every other frame (challenge, notices, errors with their text) is shorter.
constexpr size_t kMaxNoticeBytes = 4096;

// Set in Hello::flags by a client whose process also runs the rendezvous
// service, so that the others can name that rank when the service dies.
constexpr uint32_t kHelloHostsRendezvous = 1;

namespace auth = plugin::auth;

struct Hello {
  uint32_t magic;
  uint32_t version;
  int32_t rank;
  int32_t nranks;
  uint32_t flags;
  uint32_t reserved;
  auth::Nonce nonce;
};
static_assert(sizeof(Hello) == 40, "the hello is part of the protocol");

// The payload of kChallenge.
struct Challenge {
  auth::Nonce nonce;
  auth::Mac proof;  // root_proof()
};
static_assert(sizeof(Challenge) == 48, "the challenge is part of the protocol");

// The client's answer to the challenge: rank_proof().
using Proof = auth::Mac;

// The proofs of the two sides, over the client's hello and the root's nonce.
// False only when libcrypto fails.
bool root_proof(const Secret& secret, const Hello& hello, const auth::Nonce& root_nonce, auth::Mac* out);
bool rank_proof(const Secret& secret, const Hello& hello, const auth::Nonce& root_nonce, auth::Mac* out);

enum class FrameType : uint32_t {
  kContribute = 1,
  kGoodbye = 2,
  kReady = 3,
  kGathered = 4,
  kPeerFailed = 5,
  kAbort = 6,
  kReject = 7,
  kChallenge = 8,
  kWelcome = 9,
  kStalled = 10,
  kHeldUpBy = 11,
};

struct FrameHeader {
  uint32_t type;
  uint32_t reserved;
  uint64_t length;
};
static_assert(sizeof(FrameHeader) == 16, "the frame header is part of the protocol");

// A whole frame (header and payload) ready to send.
using Bytes = std::vector<uint8_t>;
Bytes encode_frame(FrameType type, const void* payload, size_t len);
Bytes encode_int_frame(FrameType type, int32_t value);
// kAbort and kReject: a status code and a text.
Bytes encode_error_frame(FrameType type, hcomm_result_t code, const std::string& text);
// Decoders return false when the payload has the wrong size.
bool decode_int(const Bytes& payload, int32_t* value);
// kStalled and kHeldUpBy: a list of integers.
Bytes encode_ints_frame(FrameType type, const std::vector<int32_t>& values);
bool decode_ints(const Bytes& payload, std::vector<int32_t>* values);
bool decode_error(const Bytes& payload, hcomm_result_t* code, std::string* text);

// Compares secrets in time that does not depend on where they differ.
bool secrets_equal(const Secret& a, const Secret& b);

// Gathers the bytes of one frame at a time from a non-blocking socket.
class FrameReader {
 public:
  enum class Status { kFrame, kWouldBlock, kClosed, kTooLong };

  // Frames longer than `max_length` are refused before anything is allocated.
  explicit FrameReader(size_t max_length) : max_length_(max_length) {}
  void set_max_length(size_t max_length) { max_length_ = max_length; }
  size_t max_length() const { return max_length_; }
  // Reads what the socket holds, never past the end of the current frame.
  // After kFrame, type() and payload() describe it until the next call;
  // after kTooLong, length() is the length the header announced.
  Status read(int fd);
  FrameType type() const { return static_cast<FrameType>(header_.type); }
  uint64_t length() const { return header_.length; }
  const Bytes& payload() const { return payload_; }
  Bytes take_payload() { return std::move(payload_); }

 private:
  size_t max_length_;
  FrameHeader header_{};
  size_t header_got_ = 0;
  Bytes payload_;
  size_t payload_got_ = 0;
  bool complete_ = false;
};

}  // namespace hcomm::bootstrap
