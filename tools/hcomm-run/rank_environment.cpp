#include "rank_environment.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/random.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <string_view>
#include <system_error>
#include <utility>

namespace hcomm::run {
namespace {

[[noreturn]] void throw_errno(const char* what) { throw std::system_error(errno, std::generic_category(), what); }

// Port 0 makes the kernel pick a free port. The descriptor is 3 or above, so
// that a rank's standard streams never replace it.
UniqueFd loopback_listener(int* port) {
  UniqueFd sock(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!sock.valid()) throw_errno("socket");
  if (sock.get() <= STDERR_FILENO) {
    sock.reset(::fcntl(sock.get(), F_DUPFD_CLOEXEC, STDERR_FILENO + 1));
    if (!sock.valid()) throw_errno("fcntl(F_DUPFD_CLOEXEC)");
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (::bind(sock.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) throw_errno("bind 127.0.0.1:0");
  if (::listen(sock.get(), SOMAXCONN) != 0) throw_errno("listen");
  socklen_t len = sizeof addr;
  if (::getsockname(sock.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) throw_errno("getsockname");
  *port = ntohs(addr.sin_port);
  return sock;
}

std::string random_hex(size_t nbytes) {
  std::string bytes(nbytes, '\0');
  for (size_t got = 0; got < nbytes;) {
    const ssize_t n = ::getrandom(bytes.data() + got, nbytes - got, 0);
    if (n < 0 && errno != EINTR) throw_errno("getrandom");
    if (n > 0) got += static_cast<size_t>(n);
  }
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (const char c : bytes) {
    const auto b = static_cast<uint8_t>(c);
    hex += kDigits[b >> 4];
    hex += kDigits[b & 0xf];
  }
  return hex;
}

using Variable = std::pair<std::string, std::string>;

std::vector<Variable> job_variables(const JobIdentity& job, int rank, int nranks) {
  std::vector<Variable> v = {{"HCOMM_RANK", std::to_string(rank)},
                             {"HCOMM_SIZE", std::to_string(nranks)},
                             {"HCOMM_LOCAL_RANK", std::to_string(rank)},
                             {"HCOMM_LOCAL_SIZE", std::to_string(nranks)},
                             {"HCOMM_ROOT", job.root},
                             {"HCOMM_SECRET", job.secret},
                             {"HCOMM_ROOT_FD", ""}};
  if (rank == 0 && job.listener.valid()) v.back().second = std::to_string(job.listener.get());
  return v;
}

}  // namespace

JobIdentity JobIdentity::create() {
  int port = 0;
  UniqueFd listener = loopback_listener(&port);
  return JobIdentity{
      .root = "127.0.0.1:" + std::to_string(port), .secret = random_hex(16), .listener = std::move(listener)};
}

std::vector<std::string> rank_environment(const char* const* base, const JobIdentity& job, int rank, int nranks) {
  const std::vector<Variable> variables = job_variables(job, rank, nranks);
  const auto is_replaced = [&](std::string_view entry) {
    const std::string_view name = entry.substr(0, entry.find('='));
    return std::any_of(variables.begin(), variables.end(), [&](const Variable& v) { return v.first == name; });
  };
  std::vector<std::string> env;
  for (const char* const* entry = base; entry && *entry; ++entry)
    if (!is_replaced(*entry)) env.emplace_back(*entry);
  for (const auto& [name, value] : variables)
    if (!value.empty()) env.push_back(name + "=" + value);
  // Every rank runs on this host: TCP links stay on loopback unless the user chose an interface.
  const bool has_if_addr = std::any_of(env.begin(), env.end(), [](const std::string& e) {
    return e.rfind("HCOMM_TCP_IF_ADDR=", 0) == 0;
  });
  if (!has_if_addr) env.emplace_back("HCOMM_TCP_IF_ADDR=127.0.0.1");
  return env;
}

}  // namespace hcomm::run
