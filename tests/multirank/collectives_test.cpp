// Runs under hcomm-run, one group of checks per launch:
//
//   hcomm_collectives_test GROUP [--counts 0,1,7,1027] [--large COUNT] [--memory cuda|emulated [--order stream|graph]]
//
// GROUP is a collective of cases.cpp's table, barrier, sendrecv, matching
// (point to point in matching mode any), split (sub-communicators), user_ops
// (user_ops.cpp), or mixed (every collective in flight at once, then the C++
// API). A collective runs
// under every algorithm that serves it: the names the algorithm plugins
// provide, each forced on the communicator in turn (those it refuses for this
// collective are skipped; none at all is a failure). Each algorithm runs every
// dtype, op, count, root and in-place form, blocking and nonblocking, then a
// few calls in flight at once completed in reverse order, then (--large) the
// large count in float32 sum and in a dtype of 1 or 2 bytes. Every element of
// every result is checked against a serial reference that each rank computes
// alone, and buffers the call must not touch are checked too. A wrong result
// is reported with the exact case and the run goes on (ranks stay in step); a
// failing call ends the process. Exits non-zero if anything was wrong.
// With --memory cuda or emulated (a collective group only) every call gets
// device buffers, CUDA's or the emulated device's (device_memory.hpp): each
// case's buffers are copied to device memory of the same layout before the
// call and back after it, blocking and nonblocking; cuda exits 77 (skipped)
// without a CUDA device. --order stream
// queues each call on a stream behind a held-back copy of its inputs, its
// results copied back behind it; --order graph (cuda) captures the copy in
// and the call into a CUDA graph and replays it twice.
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cases.hpp"
#include "device_memory.hpp"
#include "groups.hpp"
#include "hcomm/hcomm.h"
#include "test_job.hpp"

namespace hcomm::test {
namespace {

constexpr hcomm_op_t kAllOps[] = {HCOMM_SUM, HCOMM_PROD, HCOMM_MIN, HCOMM_MAX, HCOMM_AVG};
constexpr hcomm_op_t kRankOrderOps[] = {HCOMM_SUM, HCOMM_PROD, HCOMM_MIN, HCOMM_MAX};  // scan, exscan: no AVG
constexpr hcomm_op_t kSumOnly[] = {HCOMM_SUM};

std::span<const hcomm_op_t> ops_of(const CollectiveTest& test) {
  if (!test.reduces) return kSumOnly;
  return test.rank_order ? std::span<const hcomm_op_t>(kRankOrderOps) : std::span<const hcomm_op_t>(kAllOps);
}

// Every algorithm name the loaded algorithm plugins provide.
std::vector<std::string> provided_algorithms() {
  std::vector<std::string> names;
  for (int i = 0; i < hcomm_plugin_count(); ++i) {
    hcomm_plugin_desc_t d;
    if (hcomm_plugin_get(i, &d) != HCOMM_SUCCESS || d.status != HCOMM_SUCCESS || !d.provides ||
        std::strcmp(d.kind, "algorithm") != 0)
      continue;
    for (std::string_view rest = d.provides; !rest.empty();) {
      const size_t comma = rest.find(',');
      std::string_view name = rest.substr(0, comma);
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
      while (name.starts_with(' ')) name.remove_prefix(1);
      if (!name.empty() && std::find(names.begin(), names.end(), name) == names.end()) names.emplace_back(name);
    }
  }
  return names;
}

}  // namespace

// The algorithms the communicator accepts for `coll`; the choice goes back to
// the selector afterwards.
std::vector<std::string> algorithms_serving(Job& job, hcomm_coll_t coll, std::string_view coll_name) {
  std::vector<std::string> serving;
  for (const std::string& name : provided_algorithms()) {
    const hcomm_result_t rc = hcomm_comm_force_algorithm(job.comm, coll, name.c_str());
    if (rc == HCOMM_SUCCESS)
      serving.push_back(name);
    else if (rc != HCOMM_ERR_INVALID_ARGUMENT)  // a refusal is INVALID_ARGUMENT; anything else is a fault
      job.fatal("hcomm_comm_force_algorithm(" + std::string(coll_name) + ", " + name + ")", rc);
  }
  job.check(hcomm_comm_force_algorithm(job.comm, coll, nullptr), "hcomm_comm_force_algorithm(NULL)");
  return serving;
}

namespace {

// The algorithm the selector runs for a case: the forced one, unless it
// does not serve the call; empty when none does (the call then fails).
std::string algorithm_used(const Job& job, const Case& c) {
  const char* used = nullptr;
  if (hcomm_comm_query_algorithm(job.comm, c.coll, c.count, c.dtype, &used) != HCOMM_SUCCESS || !used) return "";
  return used;
}

std::string fallback_note(const Job& job, const Case& c) {
  const std::string used = algorithm_used(job, c);
  return c.algorithm.empty() || used == c.algorithm ? "" : " (the selector runs " + used + " for this call)";
}

// Reports what differs in one buffer of a case; true when all is right.
bool verify(Job& job, const Case& c, const CollectiveTest& test, const char* which, const CheckedBuffer& buffer) {
  const std::string problem = buffer.check();
  if (problem.empty()) return true;
  job.fail(describe(c, test) + fallback_note(job, c) + ": " + which + ": " + problem);
  return false;
}

void verify(Job& job, const Case& c, const CollectiveTest& test, const Setup& s) {
  if (verify(job, c, test, "receive buffer", s.recv)) verify(job, c, test, "send buffer", s.send);
}

void start(Job& job, const Case& c, const CollectiveTest& test, Setup& s, hcomm_request_t* request) {
  const hcomm_result_t rc = test.call(c, s, job.comm, request);
  if (rc != HCOMM_SUCCESS) job.fatal(describe(c, test), rc);
}

// --memory cuda|emulated: the calls get device buffers.
std::unique_ptr<DeviceMemory> g_device;
// --order stream|graph (with --memory): blocking calls are stream-ordered, or captured into a CUDA graph.
enum class Order { kHost, kStream, kGraph };
Order g_order = Order::kHost;

// A user op's function, which a call on device buffers must never reach.
void never_called(const void*, void*, size_t, hcomm_dtype_t, void*) { std::abort(); }

#ifdef HCOMM_TEST_CUDA
// --order graph: the copy in (from device copies of the inputs) and the call
// captured into a graph, which is replayed twice (each replay's copy in
// restores the inputs: only its call makes the results right).
hcomm_result_t graph_call(Job& job, const Case& c, const CollectiveTest& test, Setup& s, void* device[2],
                          void* pinned[2], const size_t bytes[2]) {
  auto& cuda = static_cast<CudaMemory&>(*g_device);
  const auto stream = static_cast<cudaStream_t>(cuda.stream());
  void* source[2] = {};
  for (int i = 0; i < 2; ++i) {
    source[i] = cuda.alloc(bytes[i]);
    cuda.copy(source[i], pinned[i], bytes[i], nullptr);
  }
  cuda.check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), "cudaStreamBeginCapture");
  for (int i = 0; i < 2; ++i) cuda.copy(device[i], source[i], bytes[i], stream);
  const hcomm_result_t rc = test.call(c, s, job.comm, nullptr);
  cudaGraph_t graph = nullptr;
  cuda.check(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture");
  if (rc == HCOMM_SUCCESS) {
    cudaGraphExec_t exec = nullptr;
    cuda.check(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
    for (int replay = 0; replay < 2; ++replay) cuda.check(cudaGraphLaunch(exec, stream), "cudaGraphLaunch");
    cuda.synchronize(stream);
    cudaGraphExecDestroy(exec);
  }
  cudaGraphDestroy(graph);
  for (void* p : source) cuda.release(p);
  return rc;
}
#endif

// The call on the test's stream, its device buffers (`device`, which hold
// garbage) filled from `pinned` behind a hold-up and copied back behind the
// call; or (--order graph) captured and replayed. Returns the call's status.
hcomm_result_t stream_ordered_call(Job& job, const Case& c, const CollectiveTest& test, Setup& s, void* device[2],
                                   void* pinned[2], const size_t bytes[2]) {
  void* const stream = g_device->stream();
  s.stream = stream;
  hcomm_result_t rc = HCOMM_SUCCESS;
  if (g_order == Order::kStream) {
    g_device->hold_back(stream);
    for (int i = 0; i < 2; ++i) g_device->copy(device[i], pinned[i], bytes[i], stream);
    rc = test.call(c, s, job.comm, nullptr);
  } else {
#ifdef HCOMM_TEST_CUDA
    rc = graph_call(job, c, test, s, device, pinned, bytes);
#endif
  }
  for (int i = 0; i < 2; ++i) g_device->copy(pinned[i], device[i], bytes[i], stream);
  g_device->synchronize(stream);
  s.stream = nullptr;
  hcomm_result_t async = HCOMM_SUCCESS;
  job.check(hcomm_comm_get_async_error(job.comm, &async), "hcomm_comm_get_async_error");
  if (async != HCOMM_SUCCESS) job.fatal(describe(c, test) + " (stream-ordered): " + hcomm_get_last_error(), async);
  return rc;
}

// The case's call on device copies of its buffers; the results come back to
// the host buffers for the checks. Returns the call's status.
hcomm_result_t call_on_device(Job& job, const Case& c, const CollectiveTest& test, Setup& s,
                              hcomm_request_t* request) {
  CheckedBuffer* buffers[] = {&s.send, &s.recv};
  void* device[2] = {};
  void* pinned[2] = {};
  size_t bytes[2];
  for (int i = 0; i < 2; ++i) {
    bytes[i] = buffers[i]->raw_bytes();
    device[i] = g_device->alloc(bytes[i]);
    pinned[i] = g_device->alloc_host(bytes[i]);
    std::memcpy(pinned[i], buffers[i]->raw(), bytes[i]);
    g_device->fill(device[i], 0xEE, bytes[i]);
  }
  auto on_device = [&](const void* p) -> void* {
    for (int i = 0; i < 2; ++i) {
      const auto* base = buffers[i]->raw();
      if (p >= base && p < base + buffers[i]->raw_bytes())
        return static_cast<unsigned char*>(device[i]) + (static_cast<const unsigned char*>(p) - base);
    }
    return const_cast<void*>(p);
  };
  const void* send = s.sendbuf;
  void* recv = s.recvbuf;
  s.sendbuf = on_device(send);
  s.recvbuf = on_device(recv);
  hcomm_result_t rc;
  if (g_order == Order::kHost) {
    for (int i = 0; i < 2; ++i) g_device->copy(device[i], pinned[i], bytes[i], nullptr);
    rc = test.call(c, s, job.comm, request);
    if (rc == HCOMM_SUCCESS && request) job.complete(*request, describe(c, test) + " (device buffers)");
    for (int i = 0; i < 2; ++i) g_device->copy(pinned[i], device[i], bytes[i], nullptr);
  } else {
    rc = stream_ordered_call(job, c, test, s, device, pinned, bytes);
  }
  s.sendbuf = send;
  s.recvbuf = recv;
  for (int i = 0; i < 2; ++i) {
    std::memcpy(buffers[i]->raw(), pinned[i], bytes[i]);
    g_device->release(device[i]);
    g_device->release_host(pinned[i]);
  }
  return rc;
}

void run_case(Job& job, const CollectiveTest& test, const Case& c) {
  Setup s;
  test.prepare(c, job.ranks, s);
  if (g_device) {
    hcomm_request_t request = nullptr;
    const hcomm_result_t rc = call_on_device(job, c, test, s, c.nonblocking ? &request : nullptr);
    if (rc != HCOMM_SUCCESS) job.fatal(describe(c, test) + " (device buffers)", rc);
    verify(job, c, test, s);
    return;
  }
  if (!c.nonblocking) {
    start(job, c, test, s, nullptr);
  } else {
    hcomm_request_t request = nullptr;
    start(job, c, test, s, &request);
    job.complete(request, describe(c, test));
  }
  verify(job, c, test, s);
}

// Starts every case, completes them in reverse order, then checks them all.
void run_in_flight(Job& job, const std::vector<std::pair<const CollectiveTest*, Case>>& cases) {
  std::vector<Setup> setups(cases.size());
  std::vector<hcomm_request_t> requests(cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    cases[i].first->prepare(cases[i].second, job.ranks, setups[i]);
    start(job, cases[i].second, *cases[i].first, setups[i], &requests[i]);
  }
  for (size_t i = cases.size(); i-- > 0;)
    job.complete(requests[i], describe(cases[i].second, *cases[i].first) + " (in flight with others)");
  for (size_t i = 0; i < cases.size(); ++i) verify(job, cases[i].second, *cases[i].first, setups[i]);
}

struct Options {
  std::string group;
  std::vector<size_t> counts = {0, 1, 7, 1027};
  size_t large = 0;  // 0: no large case
  std::string memory;  // --memory: cuda or emulated; empty: host memory
};

// Every dtype, op (reductions), count and in-place form. The root walks over
// the ranks and blocking alternates with nonblocking, so that each root sees
// both.
std::vector<Case> matrix(const CollectiveTest& test, const std::string& algorithm, const Options& o, int nranks) {
  std::vector<Case> cases;
  int k = 0;
  for (size_t count : o.counts)
    for (int t = 0; t < HCOMM_NUM_DTYPES; ++t)
      for (hcomm_op_t op : ops_of(test))
        for (bool in_place : {false, true}) {
          cases.push_back(Case{.coll = test.coll,
                               .algorithm = algorithm,
                               .dtype = static_cast<hcomm_dtype_t>(t),
                               .op = op,
                               .count = count,
                               .root = k % nranks,
                               .in_place = in_place,
                               .nonblocking = g_order == Order::kHost && (k / nranks) % 2 == 1});
          ++k;
        }
  if (o.large) {
    Case large{.coll = test.coll,
               .algorithm = algorithm,
               .dtype = HCOMM_FLOAT32,
               .op = HCOMM_SUM,
               .count = o.large,
               .root = nranks - 1};
    cases.push_back(large);
    large.root = 0;
    large.in_place = true;
    large.nonblocking = g_order == Order::kHost;
    cases.push_back(large);
    // Elements of 1 or 2 bytes: chunks that end off the 4-byte grid.
    large.dtype = test.reduces ? HCOMM_FLOAT16 : HCOMM_INT8;
    large.op = HCOMM_MAX;
    large.root = nranks / 2;
    large.in_place = false;
    cases.push_back(large);
  }
  return cases;
}

// Four calls of one collective in flight at once, apart in dtype, op, count,
// root and in-place form.
std::vector<std::pair<const CollectiveTest*, Case>> in_flight(const CollectiveTest& test, const std::string& algorithm,
                                                              int nranks) {
  const Case cases[] = {
      {test.coll, algorithm, HCOMM_INT32, HCOMM_SUM, 1027, 0, false, true},
      {test.coll, algorithm, HCOMM_FLOAT64, HCOMM_MAX, 7, nranks - 1, true, true},
      {test.coll, algorithm, HCOMM_UINT8, HCOMM_PROD, 1, nranks / 2, false, true},
      {test.coll, algorithm, HCOMM_FLOAT16, HCOMM_MIN, 0, nranks / 3, true, true},
  };
  std::vector<std::pair<const CollectiveTest*, Case>> out;
  for (const Case& c : cases) out.emplace_back(&test, c);
  return out;
}

void test_collective(Job& job, const CollectiveTest& test, const Options& o) {
  const std::vector<std::string> algorithms = algorithms_serving(job, test.coll, test.name);
  if (algorithms.empty()) {
    job.fail(std::string(test.name) +
             ": no loaded algorithm serves it (hcomm_comm_force_algorithm refused every "
             "name the algorithm plugins provide; see hcomm-info)");
    return;
  }
  // Each algorithm, with the cases hcomm_comm_query_algorithm says the
  // selector gives to another (a build that declines a call is not seen).
  std::vector<std::string> tally;
  size_t cases = 0;
  for (const std::string& algorithm : algorithms) {
    job.check(hcomm_comm_force_algorithm(job.comm, test.coll, algorithm.c_str()), "hcomm_comm_force_algorithm");
    const std::vector<Case> all = matrix(test, algorithm, o, job.ranks.size);
    size_t elsewhere = 0;
    for (const Case& c : all) {
      elsewhere += algorithm_used(job, c) != algorithm;
      run_case(job, test, c);
    }
    if (!g_device) run_in_flight(job, in_flight(test, algorithm, job.ranks.size));
    cases += all.size() + (g_device ? 0 : 4);
    tally.push_back(algorithm + (elsewhere ? " (" + std::to_string(elsewhere) + " of " + std::to_string(all.size()) +
                                                 " cases go to another algorithm)"
                                           : ""));
  }
  job.check(hcomm_comm_force_algorithm(job.comm, test.coll, nullptr), "hcomm_comm_force_algorithm(NULL)");
  // A user op on device buffers: refused (user ops run on the host).
  if (g_device && test.reduces) {
    Case u{.coll = test.coll, .dtype = HCOMM_INT32, .op = HCOMM_SUM, .count = 7, .root = 0};
    Setup us;
    test.prepare(u, job.ranks, us);
    job.check(hcomm_op_create(never_called, nullptr, 1, &u.op), "hcomm_op_create");
    const hcomm_result_t user_rc = call_on_device(job, u, test, us, nullptr);
    job.check(hcomm_op_destroy(u.op), "hcomm_op_destroy");
    if (user_rc != HCOMM_ERR_UNSUPPORTED)
      job.fail(std::string(test.name) + " with a user op on device buffers: expected HCOMM_ERR_UNSUPPORTED, got " +
               hcomm_result_string(user_rc));
  }
  job.summary(std::string(g_device ? "device memory: " : "") + std::string(test.name) + ", each of " + std::to_string(algorithms.size()) + " algorithm(s) forced (" +
              join(tally) + "): " + std::to_string(cases) + " cases");
}

double now_seconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);  // one clock for every process of the host
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// No rank may leave a barrier before the last one entered it; a late rank
// takes turns. Then barriers in flight at once, completed in reverse order.
void test_barrier(Job& job) {
  const std::vector<std::string> algorithms = algorithms_serving(job, HCOMM_COLL_BARRIER, "barrier");
  if (algorithms.empty()) return job.fail("barrier: no loaded algorithm serves it (see hcomm-info)");
  for (const std::string& algorithm : algorithms) {
    job.check(hcomm_comm_force_algorithm(job.comm, HCOMM_COLL_BARRIER, algorithm.c_str()),
              "hcomm_comm_force_algorithm");
    for (int round = 0; round < 4; ++round) {
      const int late = round % job.ranks.size;
      if (job.ranks.rank == late) {
        timespec nap{0, 20 * 1000 * 1000};
        nanosleep(&nap, nullptr);
      }
      const double entered = now_seconds();
      const std::string what = "barrier algorithm " + algorithm + (round % 2 ? ", nonblocking" : "");
      if (round % 2 == 0) {
        job.check(hcomm_barrier(job.comm, nullptr), what);
      } else {
        hcomm_request_t request = nullptr;
        job.check(hcomm_ibarrier(job.comm, &request), what);
        job.complete(request, what);
      }
      const double left = now_seconds();
      double last_entry = 0;
      job.check(hcomm_allreduce(&entered, &last_entry, 1, HCOMM_FLOAT64, HCOMM_MAX, job.comm, nullptr),
                "hcomm_allreduce (of the barrier entry times)");
      if (left < last_entry)
        job.fail(what + ": left at " + std::to_string(left) + ", before rank " + std::to_string(late) + " entered at " +
                 std::to_string(last_entry));
    }
    hcomm_request_t requests[3];
    for (hcomm_request_t& r : requests) job.check(hcomm_ibarrier(job.comm, &r), "barrier " + algorithm + " in flight");
    for (int i = 2; i >= 0; --i) job.complete(requests[i], "barrier " + algorithm + " in flight");
  }
  job.check(hcomm_comm_force_algorithm(job.comm, HCOMM_COLL_BARRIER, nullptr), "hcomm_comm_force_algorithm(NULL)");
  job.summary("barrier, each of " + std::to_string(algorithms.size()) + " algorithm(s) forced (" + join(algorithms) +
              ")");
}

// Every collective in flight at once (with a barrier among them), under the
// selector's choice, twice: odd counts, then the smallest.
void test_mixed(Job& job) {
  for (size_t count : {size_t{1027}, size_t{1}}) {
    std::vector<std::pair<const CollectiveTest*, Case>> cases;
    int k = 0;
    for (const CollectiveTest& test : collective_tests()) {
      const std::span<const hcomm_op_t> ops = ops_of(test);
      cases.emplace_back(&test, Case{.coll = test.coll,
                                     .dtype = static_cast<hcomm_dtype_t>(k % HCOMM_NUM_DTYPES),
                                     .op = ops[static_cast<size_t>(k) % ops.size()],
                                     .count = count + static_cast<size_t>(k),
                                     .root = k % job.ranks.size,
                                     .in_place = k % 2 == 1,
                                     .nonblocking = true});
      ++k;
    }
    hcomm_request_t barrier = nullptr;
    job.check(hcomm_ibarrier(job.comm, &barrier), "hcomm_ibarrier (among the mixed collectives)");
    run_in_flight(job, cases);
    job.complete(barrier, "hcomm_ibarrier (among the mixed collectives)");
  }
  job.summary("every collective in flight at once");
}

std::vector<size_t> parse_counts(const char* text) {
  std::vector<size_t> out;
  for (const char* p = text; *p;) {
    char* end = nullptr;
    out.push_back(std::strtoull(p, &end, 10));
    if (end == p || (*end && *end != ',')) {
      std::fprintf(stderr, "--counts '%s': expected numbers separated by commas\n", text);
      std::exit(2);
    }
    p = *end ? end + 1 : end;
  }
  return out;
}

Options parse_options(int argc, char** argv) {
  Options o;
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: %s COLLECTIVE|barrier|sendrecv|matching|mixed|split|user_ops [--counts 0,1,7] [--large COUNT]\n",
                 argv[0]);
    std::exit(2);
  }
  o.group = argv[1];
  for (int i = 2; i < argc; i += 2) {
    if (i + 1 == argc) {
      std::fprintf(stderr, "%s needs a value\n", argv[i]);
      std::exit(2);
    } else if (std::strcmp(argv[i], "--counts") == 0) {
      o.counts = parse_counts(argv[i + 1]);
    } else if (std::strcmp(argv[i], "--large") == 0) {
      o.large = std::strtoull(argv[i + 1], nullptr, 10);
    } else if (std::strcmp(argv[i], "--memory") == 0 &&
               (std::strcmp(argv[i + 1], "cuda") == 0 || std::strcmp(argv[i + 1], "emulated") == 0)) {
      o.memory = argv[i + 1];
    } else if (std::strcmp(argv[i], "--order") == 0 && std::strcmp(argv[i + 1], "host") == 0) {
      g_order = Order::kHost;
    } else if (std::strcmp(argv[i], "--order") == 0 && std::strcmp(argv[i + 1], "stream") == 0) {
      g_order = Order::kStream;
    } else if (std::strcmp(argv[i], "--order") == 0 && std::strcmp(argv[i + 1], "graph") == 0) {
      g_order = Order::kGraph;
    } else {
      std::fprintf(stderr, "unknown argument '%s'\n", argv[i]);
      std::exit(2);
    }
  }
  return o;
}

}  // namespace
}  // namespace hcomm::test

int main(int argc, char** argv) {
  using namespace hcomm::test;
  const Options options = parse_options(argc, argv);
  const CollectiveTest* test = find_collective_test(options.group);
  if (!test && options.group != "barrier" && options.group != "sendrecv" && options.group != "mixed" &&
      options.group != "split" && options.group != "user_ops" && options.group != "matching") {
    std::fprintf(stderr, "no test group '%s'\n", options.group.c_str());
    return 2;
  }
  if (g_order != Order::kHost && options.memory.empty()) {
    std::fprintf(stderr, "--order stream|graph: with --memory only\n");
    return 2;
  }
  if (g_order == Order::kGraph && options.memory != "cuda") {
    std::fprintf(stderr, "--order graph: with --memory cuda only\n");
    return 2;
  }
  if (!options.memory.empty() && !test) {
    std::fprintf(stderr, "--memory: for the collective groups only, not '%s'\n", options.group.c_str());
    return 2;
  }
  if (options.memory == "cuda") {
#ifdef HCOMM_TEST_CUDA
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices < 1) {
      std::printf("no CUDA device: skipped\n");
      return 77;
    }
#else
    std::printf("built without CUDA: skipped\n");
    return 77;
#endif
  }
  // The core finds the emulated device first (and the CUDA one where there is no GPU anyway).
  if (options.memory == "emulated") setenv("HCOMM_PLUGIN_PATH", EmulatedMemory::kDir, 1);
  Job job;
  const DeviceMemory::Fail fail = [&](const std::string& what) { job.fatal(what, HCOMM_ERR_SYSTEM); };
#ifdef HCOMM_TEST_CUDA
  if (options.memory == "cuda") g_device = std::make_unique<CudaMemory>(fail);
#endif
  if (options.memory == "emulated") g_device = std::make_unique<EmulatedMemory>(fail);
  if (test)
    test_collective(job, *test, options);
  else if (options.group == "barrier")
    test_barrier(job);
  else if (options.group == "split") {
    test_split(job, options.counts);
    test_split_share(job);
    test_create_group(job);
  } else if (options.group == "sendrecv")
    test_point_to_point(job, options.counts, options.large);
  else if (options.group == "user_ops")
    test_user_ops(job, options.counts, options.large);
  else if (options.group == "matching")
    test_matching(job, options.counts, options.large);
  else {
    test_mixed(job);
    test_cxx(job);
  }
  return job.finish();
}
