#include "group_runner.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <set>

#include "check_services.hpp"
#include "failure.hpp"
#include "plugin_library.hpp"
#include "rank_transport.hpp"

namespace hcomm::tcheck {

namespace {

// Ranks give up a little before the parent kills them, so that a rank stuck on
// a peer reports what it waited for instead of just "timeout".
double rank_margin_seconds(double timeout) { return std::min(2.0, timeout / 10); }

bool is_expected_death(const TestCase& test, int nranks, int rank, const RankExit& exit) {
  return test.last_rank_dies && rank == nranks - 1 && exit.how == RankExit::How::kSignaled && exit.status == SIGKILL;
}

std::string join(const std::vector<std::string>& items, const char* separator) {
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : separator) + item;
  return text;
}

}  // namespace

std::vector<std::string> GroupRunner::leaked_shm_files(const SharedState& shared) {
  std::set<std::string> leaked;
  for (int rank = 0; rank < shared.nranks; ++rank)
    for (const std::string& file : shared.slots[rank].shm_file_list())
      if (::access(file.c_str(), F_OK) == 0) leaked.insert(file);
  return {leaked.begin(), leaked.end()};
}

Row GroupRunner::run(const TestCase& test, int nranks) const {
  Clock::time_point begin = Clock::now();
  Deadline kill_at = Deadline::after(options_.timeout_seconds);
  Deadline rank_deadline = Deadline::after(options_.timeout_seconds - rank_margin_seconds(options_.timeout_seconds));
  SharedRegion region(nranks, options_.seed, rank_deadline);
  SharedState& shared = region.state();

  ProcessGroup group(nranks, [&](int rank) { return rank_main(test, shared, rank); });
  const std::vector<RankExit>& exits = group.wait(kill_at, [&](int rank, const RankExit& exit) {
    // A rank that died unexpectedly cannot report: release the others now.
    if (!exit.clean() && !is_expected_death(test, nranks, rank, exit)) shared.abort();
  });

  Row row = summarize(test, nranks, shared, exits);
  row.seconds = seconds_since(begin);
  std::vector<std::string> leaked = leaked_shm_files(shared);
  if (!leaked.empty()) {
    std::string leak = "left in /dev/shm after every rank ended: " + join(leaked, ", ");
    row.detail = row.result == Outcome::kFail ? row.detail + "; " + leak : leak;
    row.result = Outcome::kFail;
  }
  return row;
}

int GroupRunner::rank_main(const TestCase& test, SharedState& shared, int rank) const {
  RankSlot& slot = shared.slots[rank];
  slot.set_phase("loading the plugin");
  PluginLibrary plugin(options_.plugin_path);
  RankTransport transport(plugin, shared, rank);
  Outcome outcome = Outcome::kPass;
  std::string detail;
  try {
    if (!test.library_only) {
      plugin.require_usable();
      CheckServices::instance().configure(rank, plugin.header());
    }
    RankContext ctx{
        .plugin = plugin, .transport = transport, .rank = rank, .nranks = shared.nranks, .seed = shared.seed};
    test.run(ctx);
    std::vector<std::string> undeclared = CheckServices::instance().undeclared_settings();
    if (!undeclared.empty())
      TCHECK_FAIL("read settings it did not declare in its header: %s", join(undeclared, ", ").c_str());
    detail = ctx.notes;
  } catch (const Skipped& e) {
    outcome = Outcome::kSkip;
    detail = e.what();
  } catch (const std::exception& e) {
    outcome = Outcome::kFail;
    detail = dynamic_cast<const CheckFailure*>(&e) ? e.what() : format("unexpected error: %s", e.what());
    shared.report_failure(rank);  // at once: the other ranks stop waiting for this one
  }
  transport.record_shm_files();
  slot.retries = transport.retries();
  slot.finish(outcome, detail.c_str());
  return 0;
}

Row GroupRunner::summarize(const TestCase& test, int nranks, SharedState& shared,
                           const std::vector<RankExit>& exits) const {
  Row row{.test = test.name, .ranks = test.library_only ? 0 : nranks};
  auto phase_of = [&](int rank) { return format("rank %d during \"%s\"", rank, shared.slots[rank].phase); };
  auto outcome_of = [&](int rank) { return static_cast<Outcome>(shared.slots[rank].outcome.load()); };

  std::vector<std::string> timed_out;
  std::vector<std::string> died;
  for (int rank = 0; rank < nranks; ++rank) {
    const RankExit& exit = exits[static_cast<size_t>(rank)];
    if (exit.how == RankExit::How::kKilledAtDeadline)
      timed_out.push_back(phase_of(rank));
    else if (!exit.clean() && !is_expected_death(test, nranks, rank, exit))
      died.push_back(phase_of(rank) + ": " + exit.describe());
    else if (exit.clean() && outcome_of(rank) == Outcome::kNone)
      died.push_back(phase_of(rank) + ": exited without a result");
  }
  uint64_t retries = 0;
  std::vector<std::string> notes;
  bool all_skipped = true;
  for (int rank = 0; rank < nranks; ++rank) {
    const RankSlot& slot = shared.slots[rank];
    retries += slot.retries;
    all_skipped = all_skipped && outcome_of(rank) == Outcome::kSkip;
    if (outcome_of(rank) == Outcome::kPass && slot.detail[0])
      notes.push_back(rank == 0 ? slot.detail : format("rank %d: %s", rank, slot.detail));
  }

  int failed = shared.first_failed_rank.load();
  if (!timed_out.empty()) {
    row.result = Outcome::kFail;
    row.detail = format("timeout after %.0f s: ", options_.timeout_seconds) + join(timed_out, ", ");
  } else if (!died.empty()) {
    row.result = Outcome::kFail;
    row.detail = join(died, "; ");
  } else if (failed >= 0) {
    row.result = Outcome::kFail;
    row.detail =
        test.library_only ? shared.slots[failed].detail : format("rank %d: %s", failed, shared.slots[failed].detail);
  } else if (all_skipped) {
    row.result = Outcome::kSkip;
    row.detail = shared.slots[0].detail;
  } else {
    row.result = Outcome::kPass;
    row.detail = join(notes, "; ");
  }
  if (retries > 0 || test.reports_retries)
    row.detail += format("%s%llu null requests retried", row.detail.empty() ? "" : "; ",
                         static_cast<unsigned long long>(retries));
  return row;
}

}  // namespace hcomm::tcheck
