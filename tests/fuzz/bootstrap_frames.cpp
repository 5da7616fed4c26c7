// The rendezvous frames (core/bootstrap/wire.cpp) as either side reads them:
// the bytes come through a socket in pieces of the sizes the input chooses,
// a FrameReader with one of the protocol's caps gathers them, and each frame
// goes through the decoder its type calls for.
#include <fuzzer/FuzzedDataProvider.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/bootstrap/socket.hpp"
#include "core/bootstrap/wire.hpp"

using namespace hcomm::bootstrap;

namespace {

// Decodes a frame as the client (notices, kReady) or the root (kStalled) does.
void decode(const FrameReader& reader) {
  const Bytes& payload = reader.payload();
  int32_t value = 0;
  std::vector<int32_t> values;
  hcomm_result_t code = HCOMM_SUCCESS;
  std::string text;
  switch (reader.type()) {
    case FrameType::kReady:
    case FrameType::kPeerFailed:
      if (decode_int(payload, &value) != (payload.size() == sizeof value)) std::abort();
      break;
    case FrameType::kStalled:
    case FrameType::kHeldUpBy:
      if (decode_ints(payload, &values) && values.size() * sizeof(int32_t) != payload.size()) std::abort();
      break;
    case FrameType::kAbort:
    case FrameType::kReject:
      if (decode_error(payload, &code, &text) && text.size() + sizeof(int32_t) != payload.size()) std::abort();
      break;
    default:
      break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider input(data, size);
  const size_t caps[] = {kMaxNoticeBytes, kMaxBlobBytes, 0, 64};
  FrameReader reader(caps[input.ConsumeIntegralInRange<size_t>(0, 3)]);
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds) != 0) std::abort();
  Fd ours(fds[0]), theirs(fds[1]);
  bool open = true;
  while (open) {
    // The peer sends a piece (or closes once the input is used up), then the reader reads what came.
    const size_t piece = input.ConsumeIntegralInRange<size_t>(1, 64);
    const std::vector<uint8_t> bytes = input.ConsumeBytes<uint8_t>(piece);
    if (bytes.empty())
      theirs.reset();
    else if (send_some(theirs.get(), bytes.data(), bytes.size()) != static_cast<ptrdiff_t>(bytes.size()))
      std::abort();
    for (;;) {
      const FrameReader::Status status = reader.read(ours.get());
      if (status == FrameReader::Status::kFrame) {
        if (reader.payload().size() != reader.length() || reader.length() > reader.max_length()) std::abort();
        decode(reader);
        continue;
      }
      if (status == FrameReader::Status::kTooLong && reader.length() <= reader.max_length()) std::abort();
      if (status != FrameReader::Status::kWouldBlock) open = false;
      break;
    }
  }
  return 0;
}
