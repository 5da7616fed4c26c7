// PMI-1's wire protocol: lines of space-separated key=value pairs, one
// request and one answer at a time (cmd=init, get_my_kvsname, put,
// barrier_in, get, finalize).
#include "core/bootstrap/pmi1.hpp"

#include <fcntl.h>
#include <poll.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include "core/bootstrap/socket.hpp"
#include "core/bootstrap/wire.hpp"
#include "core/common/error.hpp"
#include "core/common/log.hpp"
#include "core/common/settings.hpp"

namespace hcomm::bootstrap {

namespace {

using Fields = std::map<std::string, std::string>;

// A variable the manager set, as an integer; `absent` when unset or not one.
int64_t manager_int(const char* name, int64_t absent) {
  const char* text = std::getenv(name);
  int64_t value = 0;
  return text && settings::parse_int(text, &value) ? value : absent;
}

Fields parse_fields(const std::string& line) {
  Fields fields;
  size_t at = 0;
  while (at < line.size()) {
    size_t end = line.find(' ', at);
    if (end == std::string::npos) end = line.size();
    const std::string word = line.substr(at, end - at);
    const size_t eq = word.find('=');
    if (eq != std::string::npos) fields[word.substr(0, eq)] = word.substr(eq + 1);
    at = end + 1;
  }
  return fields;
}

// The connection to the process manager, from the first communicator made
// from the environment to the process's exit.
class Session {
 public:
  static Session& get() {
    static Session* session = [] {
      auto* s = new Session();
      on_exit([](int status, void*) { s_end(status); }, nullptr);
      return s;
    }();
    return *session;
  }

  // Sends `request` and returns the answer's fields, which must name
  // `answer` (cmd=...) and, where the answer carries one, rc=0.
  Fields ask(const std::string& request, const char* answer, double timeout_s) {
    const std::lock_guard<std::mutex> lock(mutex_);
    const std::string line = request + "\n";
    const Deadline deadline = Deadline::after(timeout_s);
    if (send_all(fd_, line.data(), line.size(), deadline) != IoStatus::kDone)
      HCOMM_THROW(HCOMM_ERR_REMOTE, "bootstrap: PMI-1: the process manager (PMI_FD=%d) did not take the request '%s'",
                  fd_, request.c_str());
    const Fields fields = parse_fields(read_line(request, deadline, timeout_s));
    auto cmd = fields.find("cmd");
    if (cmd == fields.end() || cmd->second != answer)
      HCOMM_THROW(HCOMM_ERR_SYSTEM, "bootstrap: PMI-1: the process manager answered '%s' with cmd=%s, expected %s",
                  request.c_str(), cmd == fields.end() ? "(none)" : cmd->second.c_str(), answer);
    auto rc = fields.find("rc");
    if (rc != fields.end() && rc->second != "0") {
      auto msg = fields.find("msg");
      HCOMM_THROW(HCOMM_ERR_SYSTEM, "bootstrap: PMI-1: the process manager failed '%s': rc=%s %s", request.c_str(),
                  rc->second.c_str(), msg == fields.end() ? "" : msg->second.c_str());
    }
    return fields;
  }

  const std::string& kvs() const { return kvs_; }

 private:
  Session() {
    const int64_t fd = manager_int("PMI_FD", -1);
    if (fd < 0 || fd > 65535 || fcntl(static_cast<int>(fd), F_GETFD) < 0)
      HCOMM_THROW(HCOMM_ERR_CONFIG,
                  "bootstrap: PMI_FD=%lld is not an open descriptor of this process: start it with mpiexec.hydra "
                  "directly (not through a shell that closes descriptors), or set HCOMM_BOOTSTRAP=env",
                  static_cast<long long>(fd));
    fd_ = static_cast<int>(fd);
    // Children this process starts do not inherit the manager's socket.
    fcntl(fd_, F_SETFD, FD_CLOEXEC);
    fcntl(fd_, F_SETFL, fcntl(fd_, F_GETFL) | O_NONBLOCK);
    const double timeout_s = settings::get_double("HCOMM_TIMEOUT");
    const Fields init = ask("cmd=init pmi_version=1 pmi_subversion=1", "response_to_init", timeout_s);
    if (init.count("pmi_version") && init.at("pmi_version") != "1")
      HCOMM_THROW(HCOMM_ERR_SYSTEM, "bootstrap: PMI-1: the process manager speaks PMI version %s, not 1",
                  init.at("pmi_version").c_str());
    kvs_ = ask("cmd=get_my_kvsname", "my_kvsname", timeout_s)["kvsname"];
    if (kvs_.empty()) HCOMM_THROW(HCOMM_ERR_SYSTEM, "bootstrap: PMI-1: the process manager named no key-value store");
  }

  // An orderly exit says finalize. A failing one says nothing: the manager
  // then stops the job's other ranks once this process has gone, and with
  // it everything it wrote (cmd=abort would have the manager kill the job
  // while its output may still be on the way).
  static void s_end(int status) {
    if (status != 0) return;
    try {
      get().ask("cmd=finalize", "finalize_ack", 5.0);
    } catch (const Error& e) {
      HCOMM_WARN(INIT, "%s", e.what());
    }
  }

  std::string read_line(const std::string& request, const Deadline& deadline, double timeout_s) {
    for (;;) {
      const size_t end = pending_.find('\n');
      if (end != std::string::npos) {
        std::string line = pending_.substr(0, end);
        pending_.erase(0, end + 1);
        return line;
      }
      if (!wait_for(fd_, POLLIN, deadline))
        HCOMM_THROW(HCOMM_ERR_TIMEOUT,
                    "bootstrap: PMI-1: no answer to '%s' from the process manager within %.0f s (HCOMM_TIMEOUT): "
                    "every rank of the job must create the communicator",
                    request.c_str(), timeout_s);
      char buffer[1024];
      const ptrdiff_t got = recv_some(fd_, buffer, sizeof buffer);
      if (got < 0)
        HCOMM_THROW(HCOMM_ERR_REMOTE, "bootstrap: PMI-1: the process manager closed its connection (PMI_FD=%d)", fd_);
      pending_.append(buffer, static_cast<size_t>(got));
    }
  }

  std::mutex mutex_;
  int fd_ = -1;
  std::string kvs_;
  std::string pending_;  // what was read past the last answer's end
};

constexpr char kHex[] = "0123456789abcdef";

std::string to_hex(const hcomm_unique_id_t& id) {
  std::string text;
  for (char c : id.internal) {
    const auto byte = static_cast<unsigned char>(c);
    text += kHex[byte >> 4];
    text += kHex[byte & 15];
  }
  return text;
}

bool from_hex(const std::string& text, hcomm_unique_id_t* id) {
  if (text.size() != 2 * sizeof id->internal) return false;
  for (size_t i = 0; i < sizeof id->internal; ++i) {
    const char* high = std::strchr(kHex, text[2 * i]);
    const char* low = std::strchr(kHex, text[2 * i + 1]);
    if (!high || !low || !*high || !*low) return false;
    id->internal[i] = static_cast<char>((high - kHex) << 4 | (low - kHex));
  }
  return true;
}

}  // namespace

bool pmi1_manager_present() { return std::getenv("PMI_FD") != nullptr; }

ManagedLaunch pmi1_launch(double timeout_s) {
  const int64_t rank = manager_int("PMI_RANK", -1);
  const int64_t size = manager_int("PMI_SIZE", -1);
  if (size < 1 || size > kMaxRanks || rank < 0 || rank >= size)
    HCOMM_THROW(HCOMM_ERR_CONFIG, "bootstrap: PMI_RANK=%lld, PMI_SIZE=%lld: expected 0 <= rank < size <= %d",
                static_cast<long long>(rank), static_cast<long long>(size), kMaxRanks);
  Session& session = Session::get();
  ManagedLaunch launch;
  launch.rank = static_cast<int>(rank);
  launch.size = static_cast<int>(size);
  const int64_t local_rank = manager_int("MPI_LOCALRANKID", -1);
  const int64_t local_size = manager_int("MPI_LOCALNRANKS", -1);
  if (local_rank >= 0 && local_rank < local_size)
    launch.locality = Locality{static_cast<int>(local_rank), static_cast<int>(local_size)};

  const std::string key = next_rendezvous_key();
  if (launch.rank == 0) {
    Bootstrap::make_unique_id(&launch.rendezvous);
    session.ask("cmd=put kvsname=" + session.kvs() + " key=" + key + " value=" + to_hex(launch.rendezvous),
                "put_result", timeout_s);
  }
  session.ask("cmd=barrier_in", "barrier_out", timeout_s);
  if (launch.rank != 0) {
    const Fields got = session.ask("cmd=get kvsname=" + session.kvs() + " key=" + key, "get_result", timeout_s);
    auto value = got.find("value");
    if (value == got.end() || !from_hex(value->second, &launch.rendezvous))
      HCOMM_THROW(HCOMM_ERR_INTERNAL, "bootstrap: PMI-1 key %s of rank 0 does not hold a rendezvous address: does "
                  "every rank run the same HComm?", key.c_str());
  }
  HCOMM_INFO(INIT, "bootstrap: PMI-1 job %s, rank %d of %d (local %d of %d)", session.kvs().c_str(), launch.rank,
             launch.size, launch.locality.rank, launch.locality.size);
  return launch;
}

}  // namespace hcomm::bootstrap
