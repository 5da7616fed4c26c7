#include "core/bootstrap/bootstrap.hpp"

#include <netinet/in.h>
#include <strings.h>

#include <atomic>
#include <cctype>
#include <cstdlib>
#include <limits>
#include <optional>

#include "core/bootstrap/client.hpp"
#include "core/bootstrap/pmi1.hpp"
#include "core/bootstrap/pmix.hpp"
#include "core/bootstrap/root_service.hpp"
#include "core/bootstrap/unique_id.hpp"
#include "core/bootstrap/wire.hpp"
#include "core/common/error.hpp"
#include "core/common/log.hpp"
#include "core/common/settings.hpp"

namespace hcomm::bootstrap {

namespace {

// Its range (above 0) is checked with the setting's declaration.
double timeout_setting() { return settings::get_double("HCOMM_TIMEOUT"); }

struct JobShape {
  int rank;
  int size;
};

// A launcher's pair of variables: this process's rank and the number of
// ranks, of the job or of this host.
struct VariablePair {
  const char* rank;
  const char* size;
};
constexpr VariablePair kLauncherShapes[] = {
    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
    {"PMI_RANK", "PMI_SIZE"},
    {"SLURM_PROCID", "SLURM_NTASKS"},
};
constexpr VariablePair kLocalities[] = {
    {"HCOMM_LOCAL_RANK", "HCOMM_LOCAL_SIZE"},
    {"OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"},
    {"MPI_LOCALRANKID", "MPI_LOCALNRANKS"},
};

int64_t launcher_int(const char* name, const char* text) {
  int64_t value = 0;
  if (!settings::parse_int(text, &value))
    HCOMM_THROW(HCOMM_ERR_CONFIG, "%s='%s' does not parse: expected an integer", name, text);
  return value;
}

JobShape checked_shape(int64_t rank, int64_t size, const char* rank_name, const char* size_name) {
  if (size < 1 || size > kMaxRanks)
    HCOMM_THROW(HCOMM_ERR_CONFIG, "%s=%lld: expected a number of ranks in 1..%d", size_name,
                static_cast<long long>(size), kMaxRanks);
  if (rank < 0 || rank >= size)
    HCOMM_THROW(HCOMM_ERR_CONFIG, "%s=%lld: expected a rank in 0..%lld (%s=%lld)", rank_name,
                static_cast<long long>(rank), static_cast<long long>(size - 1), size_name,
                static_cast<long long>(size));
  return JobShape{static_cast<int>(rank), static_cast<int>(size)};
}

// The first pair that the environment sets both of, checked.
template <size_t N>
std::optional<JobShape> launcher_pair(const VariablePair (&pairs)[N]) {
  for (const VariablePair& p : pairs) {
    const char* rank = std::getenv(p.rank);
    const char* size = std::getenv(p.size);
    if (rank && size) return checked_shape(launcher_int(p.rank, rank), launcher_int(p.size, size), p.rank, p.size);
  }
  return std::nullopt;
}

// HCOMM_RANK and HCOMM_SIZE, else the variables of the first launcher that set both.
JobShape job_shape_from_env() {
  bool has_rank = !settings::raw("HCOMM_RANK").empty();
  bool has_size = !settings::raw("HCOMM_SIZE").empty();
  if (has_rank != has_size)
    HCOMM_THROW(HCOMM_ERR_CONFIG, "%s is set but %s is not: set both", has_rank ? "HCOMM_RANK" : "HCOMM_SIZE",
                has_rank ? "HCOMM_SIZE" : "HCOMM_RANK");
  if (has_rank)
    return checked_shape(settings::get_int("HCOMM_RANK"), settings::get_int("HCOMM_SIZE"), "HCOMM_RANK", "HCOMM_SIZE");
  if (std::optional<JobShape> shape = launcher_pair(kLauncherShapes)) return *shape;
  HCOMM_THROW(HCOMM_ERR_CONFIG,
              "bootstrap: this process's rank is unknown: set HCOMM_RANK and HCOMM_SIZE (hcomm-run does), or start it "
              "under a launcher that sets OMPI_COMM_WORLD_RANK/SIZE, PMI_RANK/PMI_SIZE or SLURM_PROCID/SLURM_NTASKS");
}

Locality locality_from_env() {
  std::optional<JobShape> local = launcher_pair(kLocalities);
  return local ? Locality{local->rank, local->size} : Locality{};
}

// Variables that every PMIx server sets in the processes it starts.
bool pmix_server_present() { return std::getenv("PMIX_NAMESPACE") && std::getenv("PMIX_RANK"); }

struct RootAddress {
  std::string text;  // as HCOMM_ROOT gave it
  Endpoint connect_to;
  Endpoint listen_on;  // the given IP, or every address of the host when a name was given
};

RootAddress root_from_env() {
  RootAddress root{settings::get_string("HCOMM_ROOT"), {}, {}};
  if (root.text.empty())
    HCOMM_THROW(HCOMM_ERR_CONFIG,
                "HCOMM_ROOT is not set: expected host:port where rank 0 serves the rendezvous, e.g. "
                "127.0.0.1:29500%s",
                pmix_server_present() && !pmix_built_in()
                    ? " (a PMIx server started this process, but this libhcomm was built without libpmix, which "
                      "would have found the rendezvous by itself)"
                    : "");
  std::string host;
  uint16_t port = 0;
  if (!split_host_port(root.text, &host, &port))
    HCOMM_THROW(HCOMM_ERR_CONFIG,
                "HCOMM_ROOT='%s' does not parse: expected host:port with a port in 1..65535, e.g. 127.0.0.1:29500",
                root.text.c_str());
  uint32_t ip = 0;
  if (!resolve_ipv4(host, &ip))
    HCOMM_THROW(HCOMM_ERR_CONFIG, "HCOMM_ROOT='%s': host '%s' does not resolve to an IPv4 address", root.text.c_str(),
                host.c_str());
  uint32_t literal = 0;
  root.connect_to = Endpoint{ip, port};
  root.listen_on = Endpoint{parse_ipv4(host, &literal) ? literal : htonl(INADDR_ANY), port};
  return root;
}

// hcomm-run binds the root's port before it starts the ranks and hands rank 0
// the listening socket, so that no other process takes the port in between.
Fd inherited_listener(const RootAddress& root) {
  const int64_t fd = settings::get_int("HCOMM_ROOT_FD");
  if (fd < 0 || fd > std::numeric_limits<int>::max()) return Fd();
  Fd listener = adopt_listener(static_cast<int>(fd), root.listen_on);
  if (!listener)
    HCOMM_INFO(INIT, "bootstrap: HCOMM_ROOT_FD=%lld is not a socket listening on %s; binding a new one",
               static_cast<long long>(fd), root.text.c_str());
  return listener;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

// HCOMM_SECRET, which every rank must be given. Without it the job starts
// only where HCOMM_INSECURE=1 says so: the secret is then all zeroes, which
// any client knows.
Secret secret_from_env(bool serves, const std::string& root_text) {
  const std::string text = settings::get_string("HCOMM_SECRET");
  Secret secret{};
  if (text.empty()) {
    if (!settings::get_bool("HCOMM_INSECURE"))
      HCOMM_THROW(HCOMM_ERR_CONFIG,
                  "HCOMM_SECRET is not set: without the job's secret, any process that can reach the rendezvous at "
                  "%s could join the job. Set HCOMM_SECRET to the same 32 random hex digits on every rank (e.g. "
                  "od -An -N16 -tx1 /dev/urandom | tr -d ' \\n'; hcomm-run does this), launch under PMIx (mpirun, "
                  "srun --mpi=pmix), or set HCOMM_INSECURE=1 to start without a secret",
                  root_text.c_str());
    if (serves)
      HCOMM_WARN(NET,
                 "HCOMM_SECRET is not set and HCOMM_INSECURE=1: the rendezvous at %s accepts any client that can "
                 "reach it",
                 root_text.c_str());
    return secret;
  }
  // The value itself stays out of the message: it is a secret.
  auto malformed = [&text] {
    HCOMM_THROW(HCOMM_ERR_CONFIG, "HCOMM_SECRET does not parse: expected %zu hex digits, got %zu characters",
                2 * sizeof(Secret), text.size());
  };
  if (text.size() != 2 * secret.size()) malformed();
  for (size_t i = 0; i < secret.size(); ++i) {
    int high = hex_digit(text[2 * i]);
    int low = hex_digit(text[2 * i + 1]);
    if (high < 0 || low < 0) malformed();
    secret[i] = static_cast<uint8_t>(high << 4 | low);
  }
  return secret;
}

std::unique_ptr<Bootstrap> join(const Endpoint& root, const std::string& root_text, const Secret& secret,
                                const JobShape& shape, const Locality& locality, double timeout_s) {
  return std::make_unique<RendezvousClient>(ClientOptions{
      .root = root,
      .root_text = root_text,
      .secret = secret,
      .rank = shape.rank,
      .nranks = shape.size,
      .timeout_s = timeout_s,
      .hosts_rendezvous = root_service_runs_here(root.port, secret),
      .locality = locality,
  });
}

std::unique_ptr<Bootstrap> join_unique_id(const hcomm_unique_id_t& id, const JobShape& shape,
                                          const Locality& locality, double timeout_s) {
  UniqueId fields;
  if (!decode_unique_id(id, &fields))
    HCOMM_THROW(HCOMM_ERR_INVALID_ARGUMENT,
                "bootstrap: the unique id is not one made by hcomm_get_unique_id (its magic is missing): hand every "
                "rank the id's bytes unchanged");
  return join(fields.root, fields.root.to_string(), fields.secret, shape, locality, timeout_s);
}

// HCOMM_RANK/HCOMM_SIZE or a launcher's variables, and the rendezvous at HCOMM_ROOT.
std::unique_ptr<Bootstrap> from_variables(double timeout_s) {
  const JobShape shape = job_shape_from_env();
  const RootAddress root = root_from_env();
  const bool serves = shape.rank == 0;
  const Secret secret = secret_from_env(serves, root.text);
  if (serves) {
    Fd listener = inherited_listener(root);
    try {
      if (!listener) listener = listen_on(root.listen_on);
    } catch (const Error& e) {
      HCOMM_THROW(e.code(), "%s (HCOMM_ROOT=%s)", e.what(), root.text.c_str());
    }
    start_root_service(std::move(listener), RootOptions{secret, shape.size, timeout_s, root.text});
    HCOMM_INFO(INIT, "bootstrap: rank 0 serves the rendezvous for %d ranks at %s", shape.size, root.text.c_str());
  }
  return join(root.connect_to, root.text, secret, shape, locality_from_env(), timeout_s);
}

std::unique_ptr<Bootstrap> from_manager(const ManagedLaunch& launch, double timeout_s) {
  return join_unique_id(launch.rendezvous, JobShape{launch.rank, launch.size}, launch.locality, timeout_s);
}

std::unique_ptr<Bootstrap> from_pmix(double timeout_s) {
  if (!pmix_server_present() && pmix_built_in())
    HCOMM_THROW(HCOMM_ERR_CONFIG,
                "HCOMM_BOOTSTRAP=pmix, but no PMIx server started this process (PMIX_NAMESPACE and PMIX_RANK are "
                "unset): start it with mpirun, srun --mpi=pmix or prterun, or set HCOMM_BOOTSTRAP=auto");
  return from_manager(pmix_launch(timeout_s), timeout_s);
}

std::unique_ptr<Bootstrap> from_pmi1(double timeout_s) {
  if (!pmi1_manager_present())
    HCOMM_THROW(HCOMM_ERR_CONFIG,
                "HCOMM_BOOTSTRAP=pmi, but no PMI-1 process manager started this process (PMI_FD is unset): start it "
                "with mpiexec.hydra, or set HCOMM_BOOTSTRAP=auto");
  return from_manager(pmi1_launch(timeout_s), timeout_s);
}

enum class Method { kAuto, kEnv, kPmix, kPmi1 };

Method method_setting() {
  const std::string text = settings::get_string("HCOMM_BOOTSTRAP");
  if (strcasecmp(text.c_str(), "auto") == 0) return Method::kAuto;
  if (strcasecmp(text.c_str(), "env") == 0) return Method::kEnv;
  if (strcasecmp(text.c_str(), "pmix") == 0) return Method::kPmix;
  if (strcasecmp(text.c_str(), "pmi") == 0) return Method::kPmi1;
  HCOMM_THROW(HCOMM_ERR_CONFIG, "HCOMM_BOOTSTRAP='%s' does not parse: expected auto, env, pmix or pmi",
              text.c_str());
}

// auto: HCOMM_ROOT or HCOMM_RANK (hcomm-run, or a user's choice) win over a
// process manager, whose variables hcomm-run's children may inherit from an
// outer mpirun or mpiexec.hydra; then a PMIx server, then a PMI-1 one.
Method resolve(Method method) {
  if (method != Method::kAuto) return method;
  if (!settings::raw("HCOMM_ROOT").empty() || !settings::raw("HCOMM_RANK").empty()) return Method::kEnv;
  if (pmix_server_present() && pmix_built_in()) return Method::kPmix;
  if (pmi1_manager_present()) return Method::kPmi1;
  return Method::kEnv;
}

}  // namespace

std::string next_rendezvous_key() {
  static std::atomic<int> number{0};
  return "hcomm.rendezvous." + std::to_string(number++);
}

std::unique_ptr<Bootstrap> Bootstrap::from_env() {
  const double timeout_s = timeout_setting();
  switch (resolve(method_setting())) {
    case Method::kPmix: return from_pmix(timeout_s);
    case Method::kPmi1: return from_pmi1(timeout_s);
    default: return from_variables(timeout_s);
  }
}

std::unique_ptr<Bootstrap> Bootstrap::from_unique_id(const hcomm_unique_id_t& id, int nranks, int rank) {
  if (nranks < 1 || nranks > kMaxRanks)
    HCOMM_THROW(HCOMM_ERR_INVALID_ARGUMENT, "bootstrap: nranks must be in 1..%d, got %d", kMaxRanks, nranks);
  if (rank < 0 || rank >= nranks)
    HCOMM_THROW(HCOMM_ERR_INVALID_ARGUMENT, "bootstrap: rank must be in 0..%d (nranks - 1), got %d", nranks - 1, rank);
  return join_unique_id(id, JobShape{rank, nranks}, locality_from_env(), timeout_setting());
}

void Bootstrap::make_unique_id(hcomm_unique_id_t* id) {
  if (!id) HCOMM_THROW(HCOMM_ERR_INVALID_ARGUMENT, "bootstrap: make_unique_id: the id pointer is null");
  std::string addr = settings::get_string("HCOMM_BOOTSTRAP_ADDR");
  uint32_t ip = first_non_loopback_ipv4();
  if (!addr.empty() && !parse_ipv4(addr, &ip))
    HCOMM_THROW(HCOMM_ERR_CONFIG, "HCOMM_BOOTSTRAP_ADDR='%s' is not an IPv4 address of this host, e.g. 10.0.0.5",
                addr.c_str());
  make_unique_id_on(ip, timeout_setting(), id);
}

}  // namespace hcomm::bootstrap
