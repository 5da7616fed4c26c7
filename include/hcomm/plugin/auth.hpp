// Proof of a shared key by challenge and response (header only; a user links
// libcrypto, OpenSSL 3). The bootstrap proves the job's secret with it and
// the transports their communicator's key, so that no key ever travels:
//
//   A -> B   A's fresh nonce (and what A says about itself)
//   B -> A   B's fresh nonce, and B's proof: mac(key, B's role, A's message, B's nonce)
//   A -> B   A's proof: mac(key, A's role, A's message, B's nonce)
//
// Each side checks the other's proof with `same_mac` (constant time). A proof
// covers the other side's fresh nonce, so a recorded handshake proves nothing
// on a new connection; the role label keeps one side's proof from serving as
// the other's.
#pragma once

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <sys/random.h>

#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>

namespace hcomm::plugin::auth {

using Nonce = std::array<uint8_t, 16>;
using Mac = std::array<uint8_t, 32>;  // HMAC-SHA256

// Fresh random bytes from the kernel; false when getrandom() fails (errno says why).
inline bool fresh_nonce(Nonce* nonce) {
  size_t got = 0;
  while (got < nonce->size()) {
    ssize_t n = ::getrandom(nonce->data() + got, nonce->size() - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    got += static_cast<size_t>(n);
  }
  return true;
}

// HMAC-SHA256 under `key` of the concatenated `parts`; false when libcrypto fails.
inline bool mac(std::span<const uint8_t> key, std::initializer_list<std::span<const uint8_t>> parts, Mac* out) {
  // libcrypto's exit handler would free the locks that a thread still
  // running at exit (the rendezvous service, joined by a static destructor)
  // takes while its thread-locals are torn down: that thread would hang.
  // Where this is the process's first use of libcrypto, no handler is set.
  static const bool initialised = OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, nullptr) == 1;
  if (!initialised) return false;
  EVP_MAC* hmac = EVP_MAC_fetch(nullptr, OSSL_MAC_NAME_HMAC, nullptr);
  EVP_MAC_CTX* ctx = hmac ? EVP_MAC_CTX_new(hmac) : nullptr;
  char digest[] = "SHA256";
  const OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
                               OSSL_PARAM_construct_end()};
  bool ok = ctx && EVP_MAC_init(ctx, key.data(), key.size(), params) == 1;
  for (std::span<const uint8_t> part : parts) ok = ok && EVP_MAC_update(ctx, part.data(), part.size()) == 1;
  size_t len = 0;
  ok = ok && EVP_MAC_final(ctx, out->data(), &len, out->size()) == 1 && len == out->size();
  EVP_MAC_CTX_free(ctx);
  EVP_MAC_free(hmac);
  return ok;
}

// Compares two proofs in time that does not depend on where they differ.
inline bool same_mac(const Mac& a, const Mac& b) { return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0; }

// The bytes of a trivially copyable value or of a label, as a part for mac().
template <class T>
std::span<const uint8_t> bytes_of(const T& value) {
  return {reinterpret_cast<const uint8_t*>(&value), sizeof value};
}
inline std::span<const uint8_t> label(const char* text) {
  size_t n = 0;
  while (text[n]) ++n;
  return {reinterpret_cast<const uint8_t*>(text), n + 1};  // the terminator ends the label unambiguously
}

// A 64-bit value that names what `key` protects where no handshake exists
// (addresses, message headers): the first bytes of mac(key, label(purpose)).
// Neither it nor the values for other purposes reveal anything of the key, so
// it may be published; it is no proof of the key, since anyone who sees it can
// repeat it. False when libcrypto fails.
inline bool derived_tag(std::span<const uint8_t> key, const char* purpose, uint64_t* out) {
  Mac m;
  if (!mac(key, {label(purpose)}, &m)) return false;
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = v << 8 | m[static_cast<size_t>(i)];
  *out = v;
  return true;
}

}  // namespace hcomm::plugin::auth
