// Bootstrap: who am I, how many, and an all-gather of small blobs before any
// transport exists. Rank 0 (env) or the unique id's maker serves a small TCP
// rendezvous; every client proves that it knows the job's 16-byte secret (by
// challenge and response: the secret never travels) or is dropped.
// The connections stay open for the communicator's lifetime: the root tells
// every rank when another one disappears, so a dead peer becomes an error on
// the others whatever transport they use.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hcomm/hcomm.h"

namespace hcomm::bootstrap {

using Secret = std::array<uint8_t, 16>;

// A rank's place among the ranks of its host, as the launcher told it.
struct Locality {
  int rank = -1;  // -1: the launcher did not say
  int size = -1;
};

class Bootstrap {
 public:
  virtual ~Bootstrap() = default;

  // From the launcher, as HCOMM_BOOTSTRAP says: `env` reads HCOMM_RANK,
  // HCOMM_SIZE (or another launcher's rank variables), HCOMM_ROOT (host:port)
  // and HCOMM_SECRET (32 hex digits), and rank 0 serves the rendezvous at
  // HCOMM_ROOT; `pmix` asks the PMIx server that started the process (mpirun,
  // srun --mpi=pmix); `auto` takes PMIx when such a server is there and
  // HCOMM_ROOT and HCOMM_RANK are unset, else env.
  static std::unique_ptr<Bootstrap> from_env();
  // From an id made by make_unique_id in some process of the job.
  static std::unique_ptr<Bootstrap> from_unique_id(const hcomm_unique_id_t& id, int nranks, int rank);
  // Starts a rendezvous service in this process (a thread that lives until
  // its job's ranks have all left) and describes it in *id.
  static void make_unique_id(hcomm_unique_id_t* id);

  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual Locality locality() const = 0;
  // Every rank gives `len` bytes; `all` receives size()*len bytes in rank
  // order. Fails (HCOMM_ERR_TIMEOUT / HCOMM_ERR_REMOTE) naming the missing
  // ranks after HCOMM_TIMEOUT.
  virtual void allgather(const void* mine, size_t len, void* all) = 0;
  virtual void barrier() = 0;
  // Non-blocking: the rank of a peer known to have died or left without
  // saying goodbye, or -1.
  virtual int failed_peer() = 0;
  // Says goodbye (an orderly exit, not a failure) and closes.
  virtual void close() = 0;
  // A key that only the ranks of this job can compute, and that never
  // travels: a keyed hash of `context` under the job's secret. Ranks that
  // pass the same context get the same key.
  virtual std::array<uint8_t, 16> derive_key(const void* context, size_t len) const = 0;
  // A call of this rank has made no progress for a while: it waits on these
  // peers (none: it moves again). After `judge_after_s` the rendezvous
  // follows the waits from rank to rank to those that wait on nobody and
  // tells this rank, so that a rank that stopped is named by every rank it
  // holds up, not only by those that wait on it directly. Bootstraps without
  // a rendezvous ignore it.
  virtual void report_stall(const std::vector<int>& waits_on, double judge_after_s) {
    (void)waits_on, (void)judge_after_s;
  }
  // The ranks the rendezvous found holding this rank up, once it has judged.
  virtual std::optional<std::vector<int>> held_up_by() { return std::nullopt; }
};

}  // namespace hcomm::bootstrap
