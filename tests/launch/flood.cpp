// Holds idle connections open against a listener, as a client that connects
// and says nothing would, hundreds at a time:
//
//   hcomm_launch_flood IP:PORT COUNT SECONDS
//
// Keeps COUNT connections to IP:PORT open for SECONDS, sending nothing; one
// that the listener closes (or that fails) is opened again at once, so the
// listener always has COUNT silent clients. Connects that are refused (the
// listener is not up yet) are tried again. Prints how many connections it
// opened in all.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Client {
  int fd = -1;
  bool connecting = false;
};

void open_client(Client& c, const sockaddr_in& to) {
  c.fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (c.fd < 0) return;
  int rc = ::connect(c.fd, reinterpret_cast<const sockaddr*>(&to), sizeof to);
  c.connecting = rc != 0;
  if (rc != 0 && errno != EINPROGRESS) {
    ::close(c.fd);
    c.fd = -1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s IP:PORT COUNT SECONDS\n", argv[0]);
    return 2;
  }
  const std::string target = argv[1];
  const size_t colon = target.rfind(':');
  sockaddr_in to{};
  to.sin_family = AF_INET;
  if (colon == std::string::npos || ::inet_pton(AF_INET, target.substr(0, colon).c_str(), &to.sin_addr) != 1) {
    std::fprintf(stderr, "%s: '%s' is not IP:PORT\n", argv[0], argv[1]);
    return 2;
  }
  to.sin_port = htons(static_cast<uint16_t>(std::atoi(target.c_str() + colon + 1)));
  const int count = std::atoi(argv[2]);
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(std::atof(argv[3]));

  std::vector<Client> clients(static_cast<size_t>(count));
  std::vector<pollfd> fds(clients.size());
  long opened = 0;
  while (std::chrono::steady_clock::now() < end) {
    bool refused = false;
    for (Client& c : clients)
      if (c.fd < 0) {
        open_client(c, to);
        opened += c.fd >= 0;
      }
    for (size_t i = 0; i < clients.size(); ++i)
      fds[i] = {clients[i].fd, static_cast<short>(clients[i].connecting ? POLLOUT : POLLIN), 0};
    if (::poll(fds.data(), fds.size(), 50) < 0) continue;
    for (size_t i = 0; i < clients.size(); ++i) {
      Client& c = clients[i];
      if (c.fd < 0 || !fds[i].revents) continue;
      int err = 0;
      socklen_t len = sizeof err;
      if (c.connecting && !(fds[i].revents & (POLLERR | POLLHUP))) {
        c.connecting = false;
        continue;
      }
      ::getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &err, &len);
      refused = refused || err == ECONNREFUSED;
      // Closed by the listener, or the connect failed: open another.
      ::close(c.fd);
      c.fd = -1;
    }
    if (refused) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::printf("%ld connections opened\n", opened);
  return 0;
}
