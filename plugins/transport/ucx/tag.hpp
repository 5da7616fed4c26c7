// The UCX tag of every message: UCX matches tags per worker, and one worker
// serves every peer of a communicator, so the tag must say who sent it and
// that it belongs to this communicator. Header only, without UCX, so that
// unit tests can check it on any machine.
//
//   bit 63        0 for data, 1 for the plugin's own control messages
//   bits 62..b    the sender's rank, R = bit_width(nranks - 1) bits
//   bits b-1..0   a keyed permutation of the HComm tag, b = 63 - R bits
//
// The permutation is a bijection of b-bit values keyed by the communicator
// key, so HComm tags below 2^b map to distinct UCX tags, exactly. A larger
// tag first folds its bits above b into the low ones (x ^ hash(x >> b)):
// two such tags of one pair collide with probability 2^-b, about 1e-16 with
// 64 ranks; the core's collective tags are below 2^63 and its point-to-point
// tags have bit 63 set, so with 2 ranks (b = 62) most collective tags are
// exact and the rest are folded. A process without the key (another
// communicator) produces tags that hit a posted receive of this one with
// probability (posted receives) / 2^b.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>

namespace hcomm::ucx {

class TagCodec {
 public:
  static constexpr uint64_t kControlBit = uint64_t{1} << 63;
  static constexpr uint64_t kFullMask = ~uint64_t{0};

  TagCodec(const uint8_t (&key)[16], int nranks)
      : rank_bits_(std::bit_width(static_cast<uint32_t>(nranks > 1 ? nranks - 1 : 0))),
        payload_bits_(63 - rank_bits_),
        mask_((uint64_t{1} << payload_bits_) - 1) {
    std::memcpy(&k0_, key, sizeof k0_);
    std::memcpy(&k1_, key + sizeof k0_, sizeof k1_);
  }

  int payload_bits() const { return payload_bits_; }

  // The UCX tag of a data message with HComm tag `tag` sent by `source`.
  uint64_t data(int source, uint64_t tag) const { return compose(0, source, fold(tag)); }
  // The UCX tag of control message `kind` sent by `source`.
  uint64_t control(int source, uint64_t kind) const { return compose(kControlBit, source, kind & mask_); }
  // The mask that matches a control message of one kind from any rank.
  uint64_t any_source_mask() const { return kControlBit | mask_; }
  // The sender's rank of a UCX tag made by data or control.
  int source(uint64_t ucx_tag) const {
    return rank_bits_ == 0 ? 0 : static_cast<int>((ucx_tag & ~kControlBit) >> payload_bits_);
  }

 private:
  static uint64_t mix(uint64_t x) {  // splitmix64's finaliser
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
  }

  uint64_t fold(uint64_t tag) const {
    uint64_t high = tag >> payload_bits_;  // shift < 64: payload_bits_ >= 32
    uint64_t low = tag & mask_;
    return high == 0 ? low : low ^ (mix(high ^ k1_) & mask_);
  }

  // Each step is a bijection of b-bit values: xor with a constant,
  // multiplication by an odd number modulo 2^b, x ^= x >> s with s >= 1.
  uint64_t permute(uint64_t x) const {
    const int half = payload_bits_ / 2;
    x = ((x ^ k0_) * 0x9E3779B97F4A7C15ull) & mask_;
    x ^= x >> half;
    x = ((x ^ k1_) * 0xD6E8FEB86659FD93ull) & mask_;
    x ^= x >> half;
    return x;
  }

  uint64_t compose(uint64_t kind_bit, int source, uint64_t payload) const {
    uint64_t rank = rank_bits_ == 0 ? 0 : static_cast<uint64_t>(source) << payload_bits_;
    return kind_bit | rank | permute(payload);
  }

  int rank_bits_;
  int payload_bits_;
  uint64_t mask_;
  uint64_t k0_ = 0;
  uint64_t k1_ = 0;
};

}  // namespace hcomm::ucx
