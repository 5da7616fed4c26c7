// The TCP transport's receive path (plugins/transport/tcp/matcher.cpp): the
// input is a stream of what a peer sends (piece headers, each followed by its
// payload as the connection reads it, in one or two parts) and of what the
// application does (receives posted with a length and a tag, the peer's
// close, after which no piece comes). Payload bytes are written where the matcher says, as the
// connection does, so a destination outside the receive's or the held
// buffer is an ASan finding. A protocol breach is a LinkError; nothing else
// may go wrong.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "plugins/transport/tcp/link_error.hpp"
#include "plugins/transport/tcp/matcher.hpp"

using namespace hcomm::tcp;

namespace {

constexpr uint64_t kEagerLimit = 1 << 20;  // the pair's split

struct Receiver {
  Matcher& matcher;
  RequestSet requests;
  std::vector<std::unique_ptr<std::byte[]>> buffers;

  void post(FuzzedDataProvider& input) {
    const size_t len = input.ConsumeIntegralInRange<size_t>(0, 4096);
    buffers.push_back(std::make_unique<std::byte[]>(len));
    matcher.post(*requests.create(Request::Kind::kRecv, buffers.back().get(), len,
                                  input.ConsumeIntegralInRange<uint64_t>(0, 3)));
  }
};

// Reads one piece as Connection::start_piece and Connection::take do; a
// receive may be posted between the two parts of its payload. False when the
// input ends before the piece does.
bool piece(FuzzedDataProvider& input, Receiver& receiver) {
  Matcher& matcher = receiver.matcher;
  wire::PieceHeader header{};
  if (input.remaining_bytes() < sizeof header) return false;
  const std::vector<uint8_t> bytes = input.ConsumeBytes<uint8_t>(sizeof header);
  std::memcpy(&header, bytes.data(), sizeof header);
  // Small tags and sequence numbers meet each other and the receives.
  header.tag %= 4;
  header.seq %= 16;
  // Lengths up to the largest split fold below the matcher's eager limit
  // (kEagerLimit): beyond it they take the same paths, and unannounced ones
  // would only be refused.
  if (header.total > kEagerLimit && header.total <= wire::kMaxEagerBytes) header.total %= kEagerLimit;
  header.kind = header.kind % 4 + 1;
  switch (static_cast<wire::PieceKind>(header.kind)) {
    case wire::PieceKind::kRts:
      matcher.announce(header);
      return true;
    case wire::PieceKind::kData:
      break;
    default:
      return true;  // kCts and kBye reach the endpoint, not the matcher
  }
  InMessage& message = matcher.resolve(header);
  if (header.length == 0) {
    matcher.received(message, header.offset, 0);
    return true;
  }
  if (header.length > input.remaining_bytes()) return false;
  const std::vector<uint8_t> payload = input.ConsumeBytes<uint8_t>(header.length);
  const size_t first = input.ConsumeIntegralInRange<size_t>(1, payload.size());
  const size_t parts[] = {first, payload.size() - first};
  size_t done = 0;
  for (size_t part : parts) {
    if (part == 0) break;
    if (done > 0 && input.ConsumeBool()) receiver.post(input);
    if (message.dest) std::memcpy(message.dest + header.offset + done, payload.data() + done, part);
    matcher.received(message, header.offset + done, part);
    done += part;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider input(data, size);
  BufferPool pool;
  std::vector<uint64_t> cleared;
  Matcher matcher(1, kEagerLimit, pool, [&](uint64_t seq) { cleared.push_back(seq); });
  Receiver receiver{matcher, {}, {}};
  bool closed = false;  // the endpoint closed its sockets: no piece comes any more
  try {
    while (input.remaining_bytes() > 0) {
      switch (input.ConsumeIntegralInRange<int>(0, 3)) {
        case 0:
        case 1:
          if (closed) break;
          if (!piece(input, receiver)) return 0;
          break;
        case 2:
          receiver.post(input);
          break;
        case 3:
          matcher.peer_closed(HCOMM_ERR_REMOTE, "closed");
          closed = true;
          break;
      }
    }
  } catch (const LinkError&) {
  }
  return 0;
}
