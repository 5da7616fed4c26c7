#include "core/bootstrap/wire.hpp"

#include <cstring>

#include "core/bootstrap/socket.hpp"

namespace hcomm::bootstrap {

Bytes encode_frame(FrameType type, const void* payload, size_t len) {
  FrameHeader header{static_cast<uint32_t>(type), 0, len};
  Bytes frame(sizeof header + len);
  std::memcpy(frame.data(), &header, sizeof header);
  if (len > 0) std::memcpy(frame.data() + sizeof header, payload, len);
  return frame;
}

Bytes encode_int_frame(FrameType type, int32_t value) { return encode_frame(type, &value, sizeof value); }

Bytes encode_error_frame(FrameType type, hcomm_result_t code, const std::string& text) {
  int32_t code32 = code;
  Bytes payload(sizeof code32 + text.size());
  std::memcpy(payload.data(), &code32, sizeof code32);
  std::memcpy(payload.data() + sizeof code32, text.data(), text.size());
  return encode_frame(type, payload.data(), payload.size());
}

Bytes encode_ints_frame(FrameType type, const std::vector<int32_t>& values) {
  return encode_frame(type, values.data(), values.size() * sizeof(int32_t));
}

bool decode_ints(const Bytes& payload, std::vector<int32_t>* values) {
  if (payload.size() % sizeof(int32_t) != 0) return false;
  values->resize(payload.size() / sizeof(int32_t));
  if (!payload.empty()) std::memcpy(values->data(), payload.data(), payload.size());
  return true;
}

bool decode_int(const Bytes& payload, int32_t* value) {
  if (payload.size() != sizeof *value) return false;
  std::memcpy(value, payload.data(), sizeof *value);
  return true;
}

bool decode_error(const Bytes& payload, hcomm_result_t* code, std::string* text) {
  int32_t code32 = 0;
  if (payload.size() < sizeof code32) return false;
  std::memcpy(&code32, payload.data(), sizeof code32);
  *code = static_cast<hcomm_result_t>(code32);
  text->assign(reinterpret_cast<const char*>(payload.data()) + sizeof code32, payload.size() - sizeof code32);
  return true;
}

namespace {

bool proof(const char* role, const Secret& secret, const Hello& hello, const auth::Nonce& root_nonce, auth::Mac* out) {
  return auth::mac(secret, {auth::label(role), auth::bytes_of(hello), root_nonce}, out);
}

}  // namespace

bool root_proof(const Secret& secret, const Hello& hello, const auth::Nonce& root_nonce, auth::Mac* out) {
  return proof("hcomm bootstrap root", secret, hello, root_nonce, out);
}

bool rank_proof(const Secret& secret, const Hello& hello, const auth::Nonce& root_nonce, auth::Mac* out) {
  return proof("hcomm bootstrap rank", secret, hello, root_nonce, out);
}

bool secrets_equal(const Secret& a, const Secret& b) {
  volatile uint8_t difference = 0;
  for (size_t i = 0; i < a.size(); ++i) difference = difference | (a[i] ^ b[i]);
  return difference == 0;
}

FrameReader::Status FrameReader::read(int fd) {
  if (complete_) {
    header_got_ = 0;
    payload_got_ = 0;
    complete_ = false;
  }
  while (header_got_ < sizeof header_) {
    ptrdiff_t n = recv_some(fd, reinterpret_cast<uint8_t*>(&header_) + header_got_, sizeof header_ - header_got_);
    if (n < 0) return Status::kClosed;
    if (n == 0) return Status::kWouldBlock;
    header_got_ += static_cast<size_t>(n);
    if (header_got_ < sizeof header_) continue;
    if (header_.length > max_length_) return Status::kTooLong;
    payload_.resize(header_.length);
  }
  while (payload_got_ < payload_.size()) {
    ptrdiff_t n = recv_some(fd, payload_.data() + payload_got_, payload_.size() - payload_got_);
    if (n < 0) return Status::kClosed;
    if (n == 0) return Status::kWouldBlock;
    payload_got_ += static_cast<size_t>(n);
  }
  complete_ = true;
  return Status::kFrame;
}

}  // namespace hcomm::bootstrap
