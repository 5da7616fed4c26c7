#include "wire.hpp"

#include <cstring>
#include <string>

#include "hcomm/plugin/util.hpp"

namespace hcomm::verbs {

namespace {

constexpr uint32_t kAddressMagic = 0x42494348;  // "HCIB"
constexpr uint32_t kHelloMagic = 0x4c454849;    // "IHEL"
constexpr uint8_t kVersion = 2;

class Writer {
 public:
  explicit Writer(uint8_t* out) : p_(out) {}
  template <class T>
  Writer& num(T v) {
    for (size_t i = 0; i < sizeof(T); ++i) *p_++ = static_cast<uint8_t>(static_cast<uint64_t>(v) >> (8 * i));
    return *this;
  }
  template <size_t N>
  Writer& bytes(const std::array<uint8_t, N>& a) {
    std::memcpy(p_, a.data(), N);
    p_ += N;
    return *this;
  }

 private:
  uint8_t* p_;
};

class Reader {
 public:
  explicit Reader(const uint8_t* in) : p_(in) {}
  template <class T>
  T num() {
    uint64_t v = 0;
    for (size_t i = 0; i < sizeof(T); ++i) v |= static_cast<uint64_t>(*p_++) << (8 * i);
    return static_cast<T>(v);
  }
  template <size_t N>
  void bytes(std::array<uint8_t, N>& a) {
    std::memcpy(a.data(), p_, N);
    p_ += N;
  }

 private:
  const uint8_t* p_;
};

}  // namespace

void Address::encode(void* buf, size_t* len) const {
  if (*len < kBytes)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "verbs: address: buffer of %zu bytes; the address needs %zu", *len,
                       kBytes);
  uint8_t* out = static_cast<uint8_t*>(buf);
  Writer(out)
      .num(kAddressMagic)
      .num(kVersion)
      .num(static_cast<uint8_t>(has_device))
      .num(static_cast<uint8_t>(link_layer))
      .num(port)
      .num(mtu)
      .num(uint8_t{0})
      .num(lid)
      .num(rate_mbps)
      .bytes(gid)
      .num(listen_ip)
      .num(listen_port)
      .num(uint16_t{0})
      .num(host_id);
  *len = kBytes;
}

Address Address::decode(const void* buf, size_t len, const char* what) {
  if (!buf) HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "verbs: %s is NULL", what);
  if (len != kBytes)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT,
                       "verbs: %s is %zu bytes; a verbs address is %zu (a blob of another transport or version?)", what,
                       len, kBytes);
  Reader r(static_cast<const uint8_t*>(buf));
  if (r.num<uint32_t>() != kAddressMagic)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "verbs: %s is not a verbs address (wrong magic)", what);
  uint8_t version = r.num<uint8_t>();
  if (version != kVersion)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "verbs: %s has version %u; this plugin reads version %u", what,
                       version, kVersion);
  Address a;
  uint8_t has_device = r.num<uint8_t>();
  uint8_t layer = r.num<uint8_t>();
  if (has_device > 1 || layer > static_cast<uint8_t>(LinkLayer::kEthernet) || (has_device == 1) != (layer != 0))
    HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "verbs: %s is damaged (device flag %u, link layer %u)", what,
                       has_device, layer);
  a.has_device = has_device == 1;
  a.link_layer = static_cast<LinkLayer>(layer);
  a.port = r.num<uint8_t>();
  a.mtu = r.num<uint8_t>();
  r.num<uint8_t>();
  a.lid = r.num<uint16_t>();
  a.rate_mbps = r.num<uint32_t>();
  r.bytes(a.gid);
  a.listen_ip = r.num<uint32_t>();
  a.listen_port = r.num<uint16_t>();
  r.num<uint16_t>();
  a.host_id = r.num<uint64_t>();
  if (a.has_device && a.listen_port == 0)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_INVALID_ARGUMENT, "verbs: %s is damaged (listening port 0)", what);
  return a;
}

Hello::Bytes Hello::encode() const {
  Bytes out{};
  Writer(out.data())
      .num(kHelloMagic)
      .num(kVersion)
      .num(static_cast<uint8_t>(kind))
      .num(mtu)
      .num(uint8_t{0})
      .num(rank)
      .num(qpn)
      .num(psn)
      .num(credits)
      .num(eager_bytes)
      .num(lid)
      .num(uint16_t{0})
      .bytes(gid)
      .bytes(nonce);
  return out;
}

Hello Hello::decode(const uint8_t* in, size_t len) {
  if (len != kBytes) HCOMM_PLUGIN_THROW(HCOMM_ERR_REMOTE, "hello of %zu bytes; expected %zu", len, kBytes);
  Reader r(in);
  if (r.num<uint32_t>() != kHelloMagic) HCOMM_PLUGIN_THROW(HCOMM_ERR_REMOTE, "not a verbs hello (wrong magic)");
  uint8_t version = r.num<uint8_t>();
  if (version != kVersion)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_REMOTE, "hello of version %u; this plugin speaks version %u", version, kVersion);
  Hello h;
  uint8_t kind = r.num<uint8_t>();
  if (kind != static_cast<uint8_t>(Kind::kRequest) && kind != static_cast<uint8_t>(Kind::kReply))
    HCOMM_PLUGIN_THROW(HCOMM_ERR_REMOTE, "hello of unknown kind %u", kind);
  h.kind = static_cast<Kind>(kind);
  h.mtu = r.num<uint8_t>();
  r.num<uint8_t>();
  h.rank = r.num<int32_t>();
  h.qpn = r.num<uint32_t>();
  h.psn = r.num<uint32_t>();
  h.credits = r.num<uint32_t>();
  h.eager_bytes = r.num<uint32_t>();
  h.lid = r.num<uint16_t>();
  r.num<uint16_t>();
  r.bytes(h.gid);
  r.bytes(h.nonce);
  if (h.rank < 0) HCOMM_PLUGIN_THROW(HCOMM_ERR_REMOTE, "hello names rank %d", h.rank);
  if (h.qpn == 0 || h.qpn > 0xffffff || h.psn > 0xffffff)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_REMOTE, "hello has QP number %u and PSN %u; both are 24-bit, the QP number not 0",
                       h.qpn, h.psn);
  if (h.credits == 0) HCOMM_PLUGIN_THROW(HCOMM_ERR_REMOTE, "hello offers no receive buffers");
  return h;
}

Challenge::Bytes Challenge::encode() const {
  Bytes out{};
  Writer(out.data()).bytes(nonce).bytes(proof);
  return out;
}

Challenge Challenge::decode(const uint8_t* in) {
  Challenge c{};
  Reader r(in);
  r.bytes(c.nonce);
  r.bytes(c.proof);
  return c;
}

bool acceptor_proof(const Key& key, const Hello::Bytes& request, const auth::Nonce& acceptor_nonce,
                    int32_t acceptor_rank, auth::Mac* out) {
  uint8_t rank[sizeof acceptor_rank];
  Writer(rank).num(acceptor_rank);
  return auth::mac(key, {auth::label("hcomm verbs acceptor"), request, acceptor_nonce, rank}, out);
}

bool initiator_proof(const Key& key, const Hello::Bytes& request, const auth::Nonce& acceptor_nonce, auth::Mac* out) {
  return auth::mac(key, {auth::label("hcomm verbs initiator"), request, acceptor_nonce}, out);
}

void MsgHeader::encode(uint8_t* out) const {
  Writer(out)
      .num(static_cast<uint8_t>(type))
      .num(uint8_t{0})
      .num(credits)
      .num(rkey)
      .num(seq)
      .num(tag)
      .num(len)
      .num(addr);
}

MsgHeader MsgHeader::decode(const uint8_t* in) {
  Reader r(in);
  MsgHeader h;
  uint8_t type = r.num<uint8_t>();
  if (type < static_cast<uint8_t>(Type::kEager) || type > static_cast<uint8_t>(Type::kCredit))
    HCOMM_PLUGIN_THROW(HCOMM_ERR_REMOTE, "message of unknown type %u", type);
  h.type = static_cast<Type>(type);
  r.num<uint8_t>();
  h.credits = r.num<uint16_t>();
  h.rkey = r.num<uint32_t>();
  h.seq = r.num<uint64_t>();
  h.tag = r.num<uint64_t>();
  h.len = r.num<uint64_t>();
  h.addr = r.num<uint64_t>();
  return h;
}

}  // namespace hcomm::verbs
