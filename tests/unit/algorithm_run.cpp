#include "algorithm_run.hpp"

#include <cmath>
#include <iterator>
#include <utility>

#include "algorithm_checker.hpp"
#include "algorithm_layout.hpp"
#include "algorithm_reference.hpp"
#include "algorithm_simulator.hpp"

namespace hcomm::algotest {

namespace {

bool same_ref(const hcomm_bufref_t& a, const hcomm_bufref_t& b) { return a.buffer == b.buffer && a.offset == b.offset; }

bool same_step(const hcomm_step_t& a, const hcomm_step_t& b) {
  if (a.kind != b.kind || a.flags != b.flags || a.peer != b.peer || a.match != b.match || !same_ref(a.src, b.src) ||
      !same_ref(a.src2, b.src2) || !same_ref(a.dst, b.dst) || a.bytes != b.bytes || a.nchunks != b.nchunks ||
      a.ndeps != b.ndeps || a.whole_deps != b.whole_deps)
    return false;
  for (uint32_t d = 0; d < a.ndeps && d < HCOMM_STEP_MAX_DEPS; ++d)
    if (a.deps[d] != b.deps[d]) return false;
  return true;
}

bool same_schedules(const std::vector<RankSchedule>& a, const std::vector<RankSchedule>& b) {
  for (size_t r = 0; r < a.size(); ++r) {
    if (a[r].scratch != b[r].scratch || a[r].steps.size() != b[r].steps.size()) return false;
    for (size_t i = 0; i < a[r].steps.size(); ++i)
      if (!same_step(a[r].steps[i], b[r].steps[i])) return false;
  }
  return true;
}

std::string result_name(hcomm_result_t r) {
  static const char* const kNames[] = {"HCOMM_SUCCESS",     "HCOMM_ERR_INVALID_ARGUMENT", "HCOMM_ERR_UNSUPPORTED",
                                       "HCOMM_ERR_SYSTEM",  "HCOMM_ERR_TIMEOUT",          "HCOMM_ERR_REMOTE",
                                       "HCOMM_ERR_PLUGIN",  "HCOMM_ERR_INTERNAL",         "HCOMM_ERR_CONFIG",
                                       "HCOMM_IN_PROGRESS", "HCOMM_ERR_TRUNCATED"};
  return static_cast<unsigned>(r) < std::size(kNames) ? kNames[r] : "result " + std::to_string(r);
}

// A valid call is built or declined, alike on every rank: ranks that chose
// differently would run different algorithms against each other.
std::vector<std::string> build_problems(const Built& built) {
  std::vector<std::string> out;
  for (size_t r = 0; r < built.results.size(); ++r) {
    const hcomm_result_t result = built.results[r];
    if (result == HCOMM_SUCCESS || result == HCOMM_ERR_UNSUPPORTED) continue;
    out.push_back("rank " + std::to_string(r) + " returned " + result_name(result) + ": " + built.errors[r]);
  }
  if (out.empty())
    for (size_t r = 1; r < built.results.size(); ++r)
      if (built.results[r] != built.results[0]) {
        out.push_back("rank 0 returned " + result_name(built.results[0]) + " but rank " + std::to_string(r) + " " +
                      result_name(built.results[r]) + (built.errors[r].empty() ? "" : ": " + built.errors[r]));
        break;
      }
  return out;
}

std::vector<std::string> cost_problems(const hcomm_algorithm_desc_t& algo, const CallArgs& args, const Case& c) {
  std::vector<std::string> out;
  for (int r = 0; r < c.nranks; ++r) {
    const hcomm_comm_view_t comm = comm_view(c.nranks, r, *c.view);
    const double cost = algo.cost(&args.at(r), &comm);
    if (!std::isfinite(cost) || cost < 0)
      out.push_back("rank " + std::to_string(r) + ": cost " + std::to_string(cost) + " is not a time");
  }
  return out;
}

// Ranks that enter a barrier last: all on small communicators.
std::vector<int> late_ranks(int n) {
  if (n <= 9) {
    std::vector<int> all;
    for (int r = 0; r < n; ++r) all.push_back(r);
    return all;
  }
  return {0, 1, n / 2, n - 1};
}

std::vector<std::string> run_barrier(const Built& built, const CallArgs& args, const Case& c,
                                     std::vector<RankMemory>& memory, Sends sends) {
  std::vector<std::string> out;
  for (int late : late_ranks(c.nranks)) {
    Simulator sim(built.ranks, args.at(0).dtype, args.at(0).op, memory, c.seed + static_cast<uint32_t>(late), sends);
    sim.hold(late);
    sim.run();
    for (int r = 0; r < c.nranks; ++r)
      if (r != late && sim.finished(r))
        out.push_back("rank " + std::to_string(r) + " left the barrier before rank " + std::to_string(late) +
                      " entered it");
    sim.release(late);
    sim.run();
    if (!sim.unfinished().empty())
      out.push_back("deadlock with rank " + std::to_string(late) + " late:" + sim.unfinished());
  }
  return out;
}

Verdict verdict(std::vector<std::string> problems) {
  return {problems.empty() ? Verdict::kPassed : Verdict::kFailed, std::move(problems)};
}

}  // namespace

Verdict run_case(const hcomm_algorithm_desc_t& algo, const Case& c, SeenSchedules& seen) {
  const CallArgs args(c);
  const uint64_t bytes = message_bytes(args.at(0), c.nranks);
  if (bytes < algo.min_bytes || bytes > algo.max_bytes) return {Verdict::kOutOfRange, {}};
  const Built built = build_all(algo, args, c);
  std::vector<std::string> problems = build_problems(built);
  if (problems.empty() && built.all(HCOMM_ERR_UNSUPPORTED)) return {Verdict::kDeclined, {}};
  if (problems.empty()) problems = cost_problems(algo, args, c);
  if (!problems.empty()) return verdict(problems);
  const std::vector<RankMemory> initial = initial_memory(args, built.ranks, c.view->window_bytes);
  problems = check_schedules(built.ranks, initial, *c.view, args.at(0).dtype_size);
  if (!problems.empty()) return verdict(problems);
  for (const std::vector<RankSchedule>& earlier : seen)
    if (same_schedules(earlier, built.ranks)) return {Verdict::kPassed, {}};
  seen.push_back(built.ranks);

  const std::vector<RankMemory> expected = expected_memory(args, initial);
  // Where peers read a RECV that is published: both ways, and mixed.
  const std::vector<Receives> receives =
      publishes_recv(built.ranks) ? std::vector<Receives>(std::begin(kEveryReceives), std::end(kEveryReceives))
                                  : std::vector<Receives>{Receives::kInWindow};
  for (Sends sends : kBothSends)
    for (Receives kind : receives) {
      std::string how = sends == Sends::kEager ? " (eager sends" : " (rendezvous sends";
      if (receives.size() > 1)
        how += kind == Receives::kInWindow ? ", RECV published in windows"
               : kind == Receives::kInPlace ? ", RECV read in place"
                                            : ", RECV read in place on even ranks";
      how += ")";
      std::vector<RankMemory> memory = initial;
      if (c.coll == HCOMM_COLL_BARRIER) {
        problems = run_barrier(built, args, c, memory, sends);
      } else {
        Simulator sim(built.ranks, args.at(0).dtype, args.at(0).op, memory, c.seed, sends, kind);
        sim.run();
        problems = sim.unfinished().empty() ? compare_memory(args, expected, memory)
                                            : std::vector<std::string>{"deadlock:" + sim.unfinished()};
      }
      if (!problems.empty()) {
        problems.front() += how;
        return verdict(problems);
      }
    }
  return {Verdict::kPassed, {}};
}

std::string joined(const std::vector<std::string>& problems) {
  std::string out;
  for (size_t i = 0; i < problems.size() && i < 20; ++i) out += "\n  " + problems[i];
  if (problems.size() > 20) out += "\n  ... " + std::to_string(problems.size() - 20) + " more";
  return out;
}

}  // namespace hcomm::algotest
