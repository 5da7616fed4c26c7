// PMIx carries only the rendezvous's address and secret, not every
// all-gather (PMIx_Put/PMIx_Fence/PMIx_Get per round), because:
// - the rendezvous's connections tell every rank when another one dies, so a
//   dead peer is an error naming it on every survivor; a fence only hangs or
//   times out, and PMIx's failure events differ from server to server;
// - a fence is a round trip through the launcher's daemons, slower than the
//   rendezvous's one hop, and a communicator all-gathers at its creation and
//   at every memory registration;
// - every launcher then runs the same rendezvous code, and PMIx is used only
//   while a communicator starts, out of the way of an MPI program's own use.
#include "core/bootstrap/pmix.hpp"

#include <pmix.h>

#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

#include "core/bootstrap/wire.hpp"
#include "core/common/error.hpp"
#include "core/common/log.hpp"

namespace hcomm::bootstrap {

namespace {

// The process's PMIx session, from the first communicator made from the
// environment to the process's exit. PMIx_Init after PMIx_Finalize comes
// back without the job's data, so the session is not ended earlier; and
// mpirun counts a process that initialised PMIx but exits without
// PMIx_Finalize as failed, so exit ends it. PMIx counts its
// initialisations: in an MPI program this only adds one to MPI_Init's.
class Session {
 public:
  static const Session& get() {
    static const Session* session = [] {
      auto* s = new Session();
      std::atexit([] { PMIx_Finalize(nullptr, 0); });
      return s;
    }();
    return *session;
  }

  const pmix_proc_t& me() const { return me_; }
  pmix_proc_t peer(pmix_rank_t rank) const {
    pmix_proc_t proc{};
    PMIX_LOAD_PROCID(&proc, me_.nspace, rank);
    return proc;
  }

 private:
  Session() {
    pmix_status_t rc = PMIx_Init(&me_, nullptr, 0);
    if (rc != PMIX_SUCCESS) {
      const char* nspace = std::getenv("PMIX_NAMESPACE");
      HCOMM_THROW(HCOMM_ERR_SYSTEM,
                  "bootstrap: a PMIx server started this process (PMIX_NAMESPACE=%s) but PMIx_Init failed: %s. Check "
                  "that the launcher still runs and that its PMIx works with this libpmix (%s), or launch without "
                  "PMIx: HCOMM_BOOTSTRAP=env with HCOMM_ROOT and HCOMM_SECRET set on every rank",
                  nspace ? nspace : "(unset)", PMIx_Error_string(rc), PMIx_Get_version());
    }
  }

  pmix_proc_t me_{};
};

// `key` of `proc` (PMIX_RANK_WILDCARD: the job's) as an integer; none when
// the server does not know it.
std::optional<int64_t> get_integer(const pmix_proc_t& proc, const char* key) {
  pmix_value_t* value = nullptr;
  if (PMIx_Get(&proc, key, nullptr, 0, &value) != PMIX_SUCCESS || !value) return std::nullopt;
  std::optional<int64_t> out;
  switch (value->type) {
    case PMIX_UINT16: out = value->data.uint16; break;
    case PMIX_UINT32: out = value->data.uint32; break;
    case PMIX_INT: out = value->data.integer; break;
    default: break;
  }
  PMIX_VALUE_RELEASE(value);
  return out;
}

void check(pmix_status_t rc, const char* what) {
  if (rc != PMIX_SUCCESS) HCOMM_THROW(HCOMM_ERR_SYSTEM, "bootstrap: PMIx: %s failed: %s", what, PMIx_Error_string(rc));
}

// Rank 0's side: the rendezvous under `key`, visible to all after the fence.
void publish(const std::string& key, hcomm_unique_id_t* id) {
  pmix_value_t value{};
  value.type = PMIX_BYTE_OBJECT;
  value.data.bo.bytes = id->internal;
  value.data.bo.size = sizeof id->internal;
  check(PMIx_Put(PMIX_GLOBAL, key.c_str(), &value), "PMIx_Put of the rendezvous's address");
  check(PMIx_Commit(), "PMIx_Commit");
}

// Waits for every rank of the job (at most `timeout_s`) and hands each the
// data the others committed.
void fence(double timeout_s, int rank, int size) {
  bool collect = true;
  int seconds = static_cast<int>(timeout_s + 0.999);
  pmix_info_t info[2];
  check(PMIx_Info_load(&info[0], PMIX_COLLECT_DATA, &collect, PMIX_BOOL), "PMIx_Info_load");
  check(PMIx_Info_load(&info[1], PMIX_TIMEOUT, &seconds, PMIX_INT), "PMIx_Info_load");
  pmix_status_t rc = PMIx_Fence(nullptr, 0, info, 2);
  if (rc == PMIX_ERR_TIMEOUT)
    HCOMM_THROW(HCOMM_ERR_TIMEOUT,
                "bootstrap: rank %d of %d waited %d s (HCOMM_TIMEOUT) in a PMIx fence for the other ranks: every rank "
                "of the job must create the communicator",
                rank, size, seconds);
  check(rc, "PMIx_Fence");
}

void fetch(const Session& session, const std::string& key, hcomm_unique_id_t* id) {
  pmix_proc_t root = session.peer(0);
  pmix_value_t* value = nullptr;
  check(PMIx_Get(&root, key.c_str(), nullptr, 0, &value), "PMIx_Get of rank 0's rendezvous address");
  const bool fits = value->type == PMIX_BYTE_OBJECT && value->data.bo.size == sizeof id->internal;
  if (fits) std::memcpy(id->internal, value->data.bo.bytes, sizeof id->internal);
  PMIX_VALUE_RELEASE(value);
  if (!fits)
    HCOMM_THROW(HCOMM_ERR_INTERNAL, "bootstrap: PMIx key %s of rank 0 does not hold a rendezvous address: does "
                "every rank run the same HComm?", key.c_str());
}

}  // namespace

bool pmix_built_in() { return true; }

ManagedLaunch pmix_launch(double timeout_s) {
  const Session& session = Session::get();
  const pmix_proc_t job = session.peer(PMIX_RANK_WILDCARD);
  std::optional<int64_t> size = get_integer(job, PMIX_JOB_SIZE);
  if (!size)
    HCOMM_THROW(HCOMM_ERR_SYSTEM, "bootstrap: the PMIx server of job %s does not say the job's size (PMIX_JOB_SIZE)",
                session.me().nspace);
  if (*size < 1 || *size > kMaxRanks || session.me().rank >= *size)
    HCOMM_THROW(HCOMM_ERR_CONFIG, "bootstrap: PMIx says rank %u of %lld ranks: expected a job of 1..%d ranks",
                session.me().rank, static_cast<long long>(*size), kMaxRanks);
  ManagedLaunch launch;
  launch.rank = static_cast<int>(session.me().rank);
  launch.size = static_cast<int>(*size);
  std::optional<int64_t> local_rank = get_integer(session.me(), PMIX_LOCAL_RANK);
  std::optional<int64_t> local_size = get_integer(job, PMIX_LOCAL_SIZE);
  if (local_rank && local_size && *local_rank < *local_size)
    launch.locality = Locality{static_cast<int>(*local_rank), static_cast<int>(*local_size)};

  const std::string key = next_rendezvous_key();
  if (launch.rank == 0) {
    Bootstrap::make_unique_id(&launch.rendezvous);
    publish(key, &launch.rendezvous);
  }
  fence(timeout_s, launch.rank, launch.size);
  if (launch.rank != 0) fetch(session, key, &launch.rendezvous);
  HCOMM_INFO(INIT, "bootstrap: PMIx job %s, rank %d of %d (local %d of %d)", session.me().nspace, launch.rank,
             launch.size, launch.locality.rank, launch.locality.size);
  return launch;
}

}  // namespace hcomm::bootstrap
