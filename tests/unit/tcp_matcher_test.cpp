// The TCP transport's tag matcher (plugins/transport/tcp/matcher.cpp) against
// pieces a broken or hostile peer sends.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "plugins/transport/tcp/link_error.hpp"
#include "plugins/transport/tcp/matcher.hpp"

namespace hcomm::tcp {
namespace {

wire::PieceHeader data_piece(uint64_t seq, uint64_t total, uint64_t offset, uint32_t length) {
  return {.kind = static_cast<uint32_t>(wire::PieceKind::kData),
          .length = length,
          .tag = 7,
          .seq = seq,
          .total = total,
          .offset = offset};
}

// Found by fuzzing (tests/fuzz/tcp_pieces.cpp): two pieces over the same
// bytes let the first completed message be freed while the second was
// still being read into it.
TEST(TcpMatcher, RefusesPiecesThatOverlap) {
  BufferPool pool;
  RequestSet requests;
  Matcher matcher(1, 64 << 10, pool, [](uint64_t) {});
  std::vector<std::byte> buffer(10);
  Request* recv = requests.create(Request::Kind::kRecv, buffer.data(), buffer.size(), 7);
  matcher.post(*recv);
  InMessage& message = matcher.resolve(data_piece(0, 10, 0, 6));
  matcher.received(message, 0, 6);
  EXPECT_THROW(matcher.resolve(data_piece(0, 10, 0, 6)), LinkError);
  // Pieces that share the message out between them are taken, and complete it.
  InMessage& rest = matcher.resolve(data_piece(0, 10, 6, 4));
  matcher.received(rest, 6, 4);
  size_t bytes = 0;
  EXPECT_TRUE(requests.test(recv, &bytes));
  EXPECT_EQ(bytes, 10u);
}

}  // namespace
}  // namespace hcomm::tcp
