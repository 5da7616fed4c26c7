// Communicators on their parent's connections (hcomm_comm_split's
// split_share): that they share them, that operations in flight on a parent
// and its children at once never take each other's messages, the 16 tag
// contexts running out and coming back, a child destroyed with an operation
// in flight, a parent and a child used by two threads at once, and a child
// outliving its parent.
#include <algorithm>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "hcomm/hcomm.h"
#include "split_checks.hpp"

namespace hcomm::test {

namespace {

// Whether `comm` uses its parent's connections, from hcomm_comm_topology.
bool inherited(Job& job, hcomm_comm_t comm, const std::string& what) {
  const char* json = nullptr;
  job.check(hcomm_comm_topology(comm, &json), what + ": hcomm_comm_topology");
  std::string text = json ? json : "";
  std::erase_if(text, [](char c) { return c == ' ' || c == '\n'; });
  if (text.find("\"connections\":{") == std::string::npos) job.fail(what + ": the topology has no connections entry");
  return text.find("\"inherited\":true") != std::string::npos;
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// Whether the job's transports may be called from any thread: shm and tcp
// (HCOMM_CAP_ANY_THREAD); unset: shm on one host.
bool any_thread_transports() {
  const std::string t = env("HCOMM_TRANSPORTS");
  return t.empty() || t == "shm" || t == "tcp";
}

}  // namespace

// hcomm_comm_create_group: two disjoint groups made at once (different
// tags, each collective over its own ranks only), one in reverse order, a
// group of a group, collectives on each, and bad arguments.
void test_create_group(Job& job) {
  const int me = job.ranks.rank, n = job.ranks.size;
  std::vector<int> odd, even;  // job ranks, in the groups' order
  for (int r = n - 1; r >= 0; --r)
    if (r % 2) odd.push_back(r);
  for (int r = 0; r < n; r += 2) even.push_back(r);
  const std::vector<int>& mine = me % 2 ? odd : even;
  const int tag = me % 2 ? 0x7FFFFFF0 : 9;  // above 2^24 too
  hcomm_comm_t group = nullptr;
  job.check(hcomm_comm_create_group(job.comm, static_cast<int>(mine.size()), mine.data(), tag, nullptr, &group),
            "hcomm_comm_create_group");
  const int want_rank = static_cast<int>(std::find(mine.begin(), mine.end(), me) - mine.begin());
  check_shape(job, group, want_rank, static_cast<int>(mine.size()), "a group");
  check_allreduce(job, group, mine, 1027, "a group");
  // Its own group of all its ranks, reversed.
  std::vector<int> reversed(mine.size());
  for (size_t i = 0; i < mine.size(); ++i) reversed[i] = static_cast<int>(mine.size() - 1 - i);
  hcomm_comm_t inner = nullptr;
  job.check(hcomm_comm_create_group(group, static_cast<int>(reversed.size()), reversed.data(), 0, nullptr, &inner),
            "hcomm_comm_create_group of a group");
  check_shape(job, inner, static_cast<int>(mine.size()) - 1 - want_rank, static_cast<int>(mine.size()),
             "a group of a group");
  check_allreduce(job, inner, std::vector<int>(mine.rbegin(), mine.rend()), 61, "a group of a group");
  job.check(hcomm_comm_destroy(inner), "hcomm_comm_destroy of a group of a group");
  job.check(hcomm_comm_destroy(group), "hcomm_comm_destroy of a group");
  job.summary("hcomm_comm_create_group: two groups at once, one reversed, a group of a group");

  // Bad arguments fail on the calling rank alone, before any message.
  hcomm_comm_t none = nullptr;
  auto expect_invalid = [&](int nranks, const int* ranks, int t, const char* words, const std::string& what) {
    const hcomm_result_t rc = hcomm_comm_create_group(job.comm, nranks, ranks, t, nullptr, &none);
    const std::string error = hcomm_get_last_error();
    if (rc != HCOMM_ERR_INVALID_ARGUMENT || none || error.find(words) == std::string::npos)
      job.fail("hcomm_comm_create_group with " + what + " returned " + hcomm_result_string(rc) + ": " + error);
  };
  const int twice[] = {me, me};
  const int other[] = {(me + 1) % n};
  const int out_of_range[] = {me, n};
  if (n > 1) {  // two ranks are more than one rank's communicator has
    expect_invalid(2, twice, 0, "twice", "a rank listed twice");
    expect_invalid(1, other, 0, "not among ranks", "a group without the caller");
    expect_invalid(2, out_of_range, 0, "give ranks of comm", "a rank past the communicator");
  }
  expect_invalid(0, twice, 0, "nranks is 0", "nranks 0");
  expect_invalid(1, twice, -1, "tag is -1", "tag -1");
  expect_invalid(1, nullptr, 0, "ranks is NULL", "ranks NULL");
  check_allreduce(job, job.comm, first_ranks(n), 7, "the communicator after its groups");
  job.summary("hcomm_comm_create_group: bad arguments are errors on the caller");
}

void test_split_share(Job& job) {
  const int me = job.ranks.rank, n = job.ranks.size;
  const std::vector<int> everyone = first_ranks(n);
  const std::string setting = env("HCOMM_SPLIT_SHARE");  // auto when unset
  const bool share = setting == "on" || (setting != "off" && any_thread_transports());

  // A dup shares as HCOMM_SPLIT_SHARE says; a dup's dup too; a split whose
  // config says HCOMM_SPLIT_SHARE_OFF connects anew, unless the variable,
  // which wins over the field, says on.
  hcomm_comm_t dup = nullptr, dup2 = nullptr, own = nullptr;
  job.check(hcomm_comm_dup(job.comm, &dup), "hcomm_comm_dup");
  job.check(hcomm_comm_dup(dup, &dup2), "hcomm_comm_dup of a dup");
  hcomm_config_t config = HCOMM_CONFIG_INITIALIZER;
  config.split_share = HCOMM_SPLIT_SHARE_OFF;
  job.check(hcomm_comm_split(job.comm, 0, me, &config, &own), "hcomm_comm_split with HCOMM_SPLIT_SHARE_OFF");
  if (inherited(job, dup, "dup") != share || inherited(job, dup2, "dup of a dup") != share)
    job.fail(std::string("a dup ") + (share ? "connected anew" : "shares its parent's connections") +
             " with HCOMM_SPLIT_SHARE '" + setting + "' over HCOMM_TRANSPORTS '" + env("HCOMM_TRANSPORTS") + "'");
  const bool own_shares = setting == "on";
  if (inherited(job, own, "split with HCOMM_SPLIT_SHARE_OFF") != own_shares)
    job.fail(std::string("a split whose config's split_share is HCOMM_SPLIT_SHARE_OFF ") +
             (own_shares ? "connected anew with HCOMM_SPLIT_SHARE=on" : "shares its parent's connections"));
  if (inherited(job, job.comm, "the job's communicator")) job.fail("the job's communicator claims inherited connections");

  // Operations in flight on the parent and three children at once, started
  // in a different order on each rank, each communicator's first calls (so
  // their call numbers coincide), and point-to-point messages of one tag on
  // every communicator: none may take another's message. They are waited for
  // in one order everywhere, as a communicator moves only while its own
  // calls run.
  {
    const std::vector<hcomm_comm_t> comms = {job.comm, dup, dup2, own};
    const size_t count = 1027;
    std::vector<std::vector<double>> send(comms.size()), recv(comms.size());
    std::vector<std::vector<int>> p2p_out(comms.size()), p2p_in(comms.size());
    std::vector<std::vector<hcomm_request_t>> requests(comms.size());
    const int right = (me + 1) % n, left = (me + n - 1) % n;
    for (size_t k = 0; k < comms.size(); ++k) {
      const size_t c = (k + static_cast<size_t>(me)) % comms.size();  // each rank its own order
      send[c] = contribution(me, count, static_cast<double>(c) * 0.25);
      recv[c].assign(count, -1.0);
      p2p_out[c].assign(61, me * 100 + static_cast<int>(c));
      p2p_in[c].assign(61, -1);
      hcomm_request_t r = nullptr;
      job.check(hcomm_irecv(p2p_in[c].data(), 61, HCOMM_INT32, left, 5, comms[c], &r), "hcomm_irecv");
      requests[c].push_back(r);
      job.check(hcomm_iallreduce(send[c].data(), recv[c].data(), count, HCOMM_FLOAT64, HCOMM_SUM, comms[c], &r),
                "hcomm_iallreduce");
      requests[c].push_back(r);
      job.check(hcomm_isend(p2p_out[c].data(), 61, HCOMM_INT32, right, 5, comms[c], &r), "hcomm_isend");
      requests[c].push_back(r);
    }
    for (const auto& of_comm : requests)
      for (hcomm_request_t r : of_comm) job.check(hcomm_wait(r), "hcomm_wait");
    for (size_t c = 0; c < comms.size(); ++c) {
      check_sum(job, recv[c], everyone, static_cast<double>(c) * 0.25, "allreduce in flight on communicator " + std::to_string(c));
      for (int v : p2p_in[c])
        if (v != left * 100 + static_cast<int>(c)) {
          job.fail("a message of tag 5 on communicator " + std::to_string(c) + " carried " + std::to_string(v) +
                   ", expected " + std::to_string(left * 100 + static_cast<int>(c)));
          break;
        }
    }
  }
  job.summary("split_share: a parent and its children with operations in flight at once, one tag everywhere");

  // A child destroyed with an operation in flight completes it first.
  {
    const std::vector<double> send = contribution(me, 4099, 0.5);
    std::vector<double> recv(4099, -1.0);
    hcomm_request_t r = nullptr;
    job.check(hcomm_iallreduce(send.data(), recv.data(), recv.size(), HCOMM_FLOAT64, HCOMM_SUM, dup2, &r),
              "hcomm_iallreduce before destroying");
    job.check(hcomm_comm_destroy(dup2), "hcomm_comm_destroy with an operation in flight");
    check_sum(job, recv, everyone, 0.5, "the allreduce in flight when its communicator was destroyed");
    check_allreduce(job, dup, everyone, 7, "the parent of the destroyed child", 1.0);
  }
  job.summary("split_share: a child destroyed with an operation in flight completes it; its parent works on");

  // A parent and its child from two threads at once, where the sharing
  // allows it (HCOMM_SPLIT_SHARE=on over a transport that takes one thread
  // only asks for one thread at a time).
  if (setting != "on" || any_thread_transports()) {
    hcomm_comm_t child = nullptr;
    job.check(hcomm_comm_dup(dup, &child), "hcomm_comm_dup for the threads");
    auto loop = [&](hcomm_comm_t comm, double salt, const char* name) {
      for (int i = 0; i < 20; ++i) check_allreduce(job, comm, everyone, 1027, name, salt + i);
    };
    std::thread other(loop, child, 0.125, "a child used by a second thread");
    loop(dup, 0.375, "its parent used by the first thread");
    other.join();
    job.check(hcomm_comm_destroy(child), "hcomm_comm_destroy of the threads' child");
  }
  job.summary("split_share: a parent and its child used by two threads at once, where allowed");

  // The 16 contexts run out: children beyond them connect anew; all work.
  {
    std::vector<hcomm_comm_t> many(18, nullptr);
    int shared = 0;
    for (size_t i = 0; i < many.size(); ++i) {
      job.check(hcomm_comm_dup(job.comm, &many[i]), "hcomm_comm_dup number " + std::to_string(i));
      shared += inherited(job, many[i], "dup number " + std::to_string(i));
    }
    // The job's communicator, dup (and own where it shares) hold contexts of the job's connections.
    const int want = share ? 16 - 2 - (own_shares ? 1 : 0) : 0;
    if (shared != want)
      job.fail(std::to_string(shared) + " of 18 dups share their parent's connections, expected " +
               std::to_string(want));
    for (size_t i = 0; i < many.size(); ++i) check_allreduce(job, many[i], everyone, 61, "dup number " + std::to_string(i), i * 0.5);
    for (hcomm_comm_t c : many) job.check(hcomm_comm_destroy(c), "hcomm_comm_destroy of a dup");
    // Their contexts come back: dups made and destroyed one at a time all share.
    for (int i = 0; i < 24; ++i) {
      hcomm_comm_t c = nullptr;
      job.check(hcomm_comm_dup(job.comm, &c), "hcomm_comm_dup after the contexts came back");
      if (inherited(job, c, "a dup after the contexts came back") != share)
        job.fail("dup " + std::to_string(i) + " after 18 were destroyed does not share");
      check_allreduce(job, c, everyone, 7, "a dup after the contexts came back", i);
      job.check(hcomm_comm_destroy(c), "hcomm_comm_destroy");
    }
  }
  job.summary("split_share: 18 dups at once (beyond the 16 contexts), then 24 one at a time");

  check_allreduce(job, own, everyone, 1027, "the split with its own connections", 2.0);
  job.check(hcomm_comm_destroy(own), "hcomm_comm_destroy of own");
  // A child outlives its parent.
  hcomm_comm_t orphan = nullptr;
  job.check(hcomm_comm_dup(dup, &orphan), "hcomm_comm_dup of dup");
  job.check(hcomm_comm_destroy(dup), "hcomm_comm_destroy of dup");
  check_allreduce(job, orphan, everyone, 1027, "a child after its parent was destroyed", 2.5);
  job.check(hcomm_comm_destroy(orphan), "hcomm_comm_destroy of the child that outlived its parent");
  check_allreduce(job, job.comm, everyone, 1027, "the job's communicator after its children", 3.0);
}

}  // namespace hcomm::test
