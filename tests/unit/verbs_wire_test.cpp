// The verbs transport's byte layouts: the address blob the core exchanges,
// the side-channel hello and the message header round-trip field by field,
// and truncated or foreign bytes are refused with a reason.
#if HCOMM_HAVE_VERBS
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "hcomm/plugin/transport.h"
#include "hcomm/plugin/util.hpp"
#include "plugins/transport/verbs/wire.hpp"

namespace hcomm::verbs {
namespace {

Address sample_address() {
  Address a;
  a.has_device = true;
  a.link_layer = LinkLayer::kEthernet;
  a.port = 2;
  a.mtu = 5;
  a.lid = 0x1234;
  a.rate_mbps = 200000;
  for (size_t i = 0; i < a.gid.size(); ++i) a.gid[i] = static_cast<uint8_t>(0xa0 + i);
  a.listen_ip = 0x0100007f;
  a.listen_port = 40123;
  a.host_id = 0x0123456789abcdefull;
  return a;
}

std::vector<uint8_t> encoded(const Address& a) {
  std::vector<uint8_t> buf(HCOMM_TRANSPORT_MAX_ADDRESS, 0xee);
  size_t len = buf.size();
  a.encode(buf.data(), &len);
  buf.resize(len);
  return buf;
}

// The text of the plugin error `body` throws, with its code.
template <class F>
std::string error_of(F&& body, hcomm_result_t want) {
  try {
    body();
  } catch (const plugin::Error& e) {
    EXPECT_EQ(e.code(), want) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error thrown";
  return "";
}

TEST(VerbsWire, AddressRoundTripsEveryField) {
  Address a = sample_address();
  std::vector<uint8_t> blob = encoded(a);
  ASSERT_EQ(blob.size(), Address::kBytes);
  Address b = Address::decode(blob.data(), blob.size(), "peer");
  EXPECT_TRUE(b.has_device);
  EXPECT_EQ(b.link_layer, LinkLayer::kEthernet);
  EXPECT_EQ(b.port, 2);
  EXPECT_EQ(b.mtu, 5);
  EXPECT_EQ(b.lid, 0x1234);
  EXPECT_EQ(b.rate_mbps, 200000u);
  EXPECT_EQ(b.gid, a.gid);
  EXPECT_EQ(b.listen_ip, 0x0100007fu);
  EXPECT_EQ(b.listen_port, 40123);
  EXPECT_EQ(b.host_id, 0x0123456789abcdefull);
}

TEST(VerbsWire, AddressWithoutDeviceRoundTrips) {
  Address a;
  a.host_id = 7;
  std::vector<uint8_t> blob = encoded(a);
  Address b = Address::decode(blob.data(), blob.size(), "peer");
  EXPECT_FALSE(b.has_device);
  EXPECT_EQ(b.link_layer, LinkLayer::kNone);
  EXPECT_EQ(b.host_id, 7u);
}

TEST(VerbsWire, AddressEncodeRefusesSmallBuffer) {
  std::vector<uint8_t> buf(Address::kBytes - 1);
  size_t len = buf.size();
  std::string text = error_of([&] { sample_address().encode(buf.data(), &len); }, HCOMM_ERR_INVALID_ARGUMENT);
  EXPECT_NE(text.find("47 bytes"), std::string::npos) << text;
}

TEST(VerbsWire, AddressRefusesTruncatedLongAndNull) {
  std::vector<uint8_t> blob = encoded(sample_address());
  for (size_t len : {size_t{0}, size_t{1}, Address::kBytes - 1, Address::kBytes + 1}) {
    std::vector<uint8_t> copy = blob;
    copy.resize(std::max(len, size_t{1}));
    std::string text =
        error_of([&] { Address::decode(copy.data(), len, "connect: peer_addr"); }, HCOMM_ERR_INVALID_ARGUMENT);
    EXPECT_NE(text.find("connect: peer_addr is " + std::to_string(len) + " bytes"), std::string::npos) << text;
  }
  std::string text = error_of([&] { Address::decode(nullptr, 48, "score: local_addr"); }, HCOMM_ERR_INVALID_ARGUMENT);
  EXPECT_NE(text.find("score: local_addr is NULL"), std::string::npos) << text;
}

TEST(VerbsWire, AddressRefusesForeignOrDamagedBytes) {
  std::vector<uint8_t> blob = encoded(sample_address());
  auto refused = [&](size_t at, uint8_t value, const char* reason) {
    std::vector<uint8_t> bad = blob;
    bad[at] = value;
    std::string text = error_of([&] { Address::decode(bad.data(), bad.size(), "peer"); }, HCOMM_ERR_INVALID_ARGUMENT);
    EXPECT_NE(text.find(reason), std::string::npos) << "byte " << at << ": " << text;
  };
  refused(0, 0x00, "wrong magic");
  refused(4, 9, "version 9");
  refused(5, 2, "damaged");  // device flag neither 0 nor 1
  refused(6, 0, "damaged");  // a device without a link layer
  refused(6, 3, "damaged");  // an unknown link layer
  std::vector<uint8_t> zero_port = blob;
  zero_port[36] = zero_port[37] = 0;  // listen_port
  std::string text =
      error_of([&] { Address::decode(zero_port.data(), zero_port.size(), "peer"); }, HCOMM_ERR_INVALID_ARGUMENT);
  EXPECT_NE(text.find("listening port 0"), std::string::npos) << text;
  // Random garbage of the right length never decodes silently as a device address.
  uint32_t x = 12345;
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<uint8_t> noise(Address::kBytes);
    for (uint8_t& b : noise) b = static_cast<uint8_t>((x = x * 1103515245u + 12345u) >> 16);
    EXPECT_THROW(Address::decode(noise.data(), noise.size(), "peer"), plugin::Error);
  }
}

Hello sample_hello() {
  Hello h;
  h.kind = Hello::Kind::kReply;
  h.mtu = 3;
  h.lid = 77;
  h.rank = 5;
  h.qpn = 0xabcdef;
  h.psn = 0x123456;
  h.credits = 32;
  h.eager_bytes = 8192;
  for (size_t i = 0; i < 16; ++i) h.gid[i] = static_cast<uint8_t>(i * 3), h.nonce[i] = static_cast<uint8_t>(255 - i);
  return h;
}

TEST(VerbsWire, HelloRoundTripsEveryField) {
  Hello h = sample_hello();
  const Hello::Bytes bytes = h.encode();
  Hello d = Hello::decode(bytes.data(), bytes.size());
  EXPECT_EQ(d.kind, Hello::Kind::kReply);
  EXPECT_EQ(d.mtu, 3);
  EXPECT_EQ(d.lid, 77);
  EXPECT_EQ(d.rank, 5);
  EXPECT_EQ(d.qpn, 0xabcdefu);
  EXPECT_EQ(d.psn, 0x123456u);
  EXPECT_EQ(d.credits, 32u);
  EXPECT_EQ(d.eager_bytes, 8192u);
  EXPECT_EQ(d.gid, h.gid);
  EXPECT_EQ(d.nonce, h.nonce);
}

TEST(VerbsWire, HelloRefusesGarbage) {
  const Hello::Bytes good = sample_hello().encode();
  EXPECT_NE(error_of([&] { Hello::decode(good.data(), Hello::kBytes - 1); }, HCOMM_ERR_REMOTE).find("63 bytes"),
            std::string::npos);
  auto refused = [&](auto&& spoil, const char* reason) {
    Hello h = sample_hello();
    spoil(h);
    const Hello::Bytes bytes = h.encode();
    std::string text = error_of([&] { Hello::decode(bytes.data(), bytes.size()); }, HCOMM_ERR_REMOTE);
    EXPECT_NE(text.find(reason), std::string::npos) << text;
  };
  refused([](Hello& h) { h.rank = -1; }, "rank -1");
  refused([](Hello& h) { h.qpn = 0; }, "QP number 0");
  refused([](Hello& h) { h.qpn = 1u << 24; }, "24-bit");
  refused([](Hello& h) { h.psn = 1u << 24; }, "24-bit");
  refused([](Hello& h) { h.credits = 0; }, "no receive buffers");
  Hello::Bytes bad = good;
  bad[0] ^= 1;
  EXPECT_NE(error_of([&] { Hello::decode(bad.data(), bad.size()); }, HCOMM_ERR_REMOTE).find("wrong magic"),
            std::string::npos);
  bad = good;
  bad[5] = 9;  // kind
  EXPECT_NE(error_of([&] { Hello::decode(bad.data(), bad.size()); }, HCOMM_ERR_REMOTE).find("unknown kind 9"),
            std::string::npos);
}

TEST(VerbsWire, MessageHeaderRoundTripsEachType) {
  for (auto type : {MsgHeader::Type::kEager, MsgHeader::Type::kRts, MsgHeader::Type::kCts, MsgHeader::Type::kNack,
                    MsgHeader::Type::kCredit}) {
    MsgHeader h{.type = type,
                .credits = 4095,
                .rkey = 0xdeadbeef,
                .seq = 0x1122334455667788ull,
                .tag = ~0ull,
                .len = (1ull << 40) + 3,
                .addr = 0x7fff12345678ull};
    uint8_t bytes[MsgHeader::kBytes];
    h.encode(bytes);
    MsgHeader d = MsgHeader::decode(bytes);
    EXPECT_EQ(d.type, type);
    EXPECT_EQ(d.credits, 4095);
    EXPECT_EQ(d.rkey, 0xdeadbeefu);
    EXPECT_EQ(d.seq, 0x1122334455667788ull);
    EXPECT_EQ(d.tag, ~0ull);
    EXPECT_EQ(d.len, (1ull << 40) + 3);
    EXPECT_EQ(d.addr, 0x7fff12345678ull);
  }
  uint8_t bytes[MsgHeader::kBytes] = {};
  for (uint8_t t : {0, 6, 255}) {
    bytes[0] = t;
    EXPECT_THROW(MsgHeader::decode(bytes), plugin::Error) << int(t);
  }
}

}  // namespace
}  // namespace hcomm::verbs
#endif
