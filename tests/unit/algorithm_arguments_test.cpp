// Bad calls to every collective of every algorithm: HCOMM_ERR_INVALID_ARGUMENT
// with a text that names the argument, and nothing built; a builder that
// refuses a step ends the build with HCOMM_ERR_INTERNAL and keeps its own
// text. Each bad call runs in a child process, so that an algorithm that
// crashes or hangs on it fails its own test with the signal instead of
// ending the whole run.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <climits>
#include <cstring>
#include <functional>
#include <optional>

#include "algorithm_plugins.hpp"
#include "algorithm_run.hpp"
#include "algorithm_values.hpp"

namespace hcomm::algotest {
namespace {

// The rank whose build is spoiled; every case below has at least two ranks.
constexpr int kRank = 1;

// A case that `entry` builds, with steps on kRank: the base every bad call
// spoils in one argument. An algorithm that keeps rank order may serve
// user ops that do not commute only.
std::optional<Case> buildable_case(const AlgorithmEntry& entry) {
  std::vector<Workload> workloads = {{HCOMM_INT64, HCOMM_SUM}};
  if (keeps_rank_order(*entry.desc, entry.coll)) workloads.push_back({kRecordDtype, HCOMM_OP_USER_ORDERED});
  for (const Workload& workload : workloads)
    for (const View& view : kViews)
      for (int n : {4, 5, 3, 2, 8})
        for (uint64_t count : {10, 37}) {
          if (n < entry.desc->min_ranks || n > entry.desc->max_ranks) continue;
          const Case c = {.coll = entry.coll,
                          .nranks = n,
                          .count = count,
                          .root = 0,
                          .in_place = false,
                          .chunking = &kChunkings[0],
                          .workload = workload,
                          .view = &view,
                          .seed = 1};
          const CallArgs args(c);
          const Built built = build_all(*entry.desc, args, c);
          if (built.all(HCOMM_SUCCESS) && !built.ranks[kRank].steps.empty()) return c;
        }
  return std::nullopt;
}

struct Outcome {
  hcomm_result_t result;
  std::string error;
  size_t steps;
  int signal;  // the child died of it; 0 when it returned
};

// Runs `call` in a child process and reports what it returned.
Outcome in_child(const std::function<hcomm_result_t(RankSchedule&)>& call) {
  int fds[2];
  if (pipe(fds) != 0) return {HCOMM_ERR_SYSTEM, "pipe failed", 0, 0};
  const pid_t pid = fork();
  if (pid == 0) {
    alarm(30);  // a build that hangs fails with SIGALRM
    close(fds[0]);
    RankSchedule out;
    AlgorithmPlugins::get().reclaim();
    plugin_error_text().clear();
    const int32_t head[2] = {static_cast<int32_t>(call(out)), static_cast<int32_t>(out.steps.size())};
    const std::string& text = plugin_error_text();
    bool ok = write(fds[1], head, sizeof head) == sizeof head;
    ok = ok && write(fds[1], text.data(), text.size()) == static_cast<ssize_t>(text.size());
    _exit(ok ? 0 : 1);
  }
  close(fds[1]);
  int32_t head[2] = {HCOMM_ERR_SYSTEM, 0};
  std::string text;
  bool got_head = read(fds[0], head, sizeof head) == sizeof head;
  char buf[512];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) return {HCOMM_ERR_SYSTEM, "", 0, WTERMSIG(status)};
  if (!got_head) text = "the child process wrote no result";
  return {static_cast<hcomm_result_t>(head[0]), text, static_cast<size_t>(head[1]), 0};
}

struct BadCall {
  const char* what;
  std::function<void(hcomm_coll_args_t&, hcomm_comm_view_t&)> spoil;
  const char* named;  // the text the error must contain
};

// The bad calls that apply to `entry`'s collective.
std::vector<BadCall> bad_calls(const AlgorithmEntry& entry, int nranks) {
  const CollTraits& t = *coll_traits(entry.coll);
  std::vector<BadCall> out = {
      {"short args", [](auto& a, auto&) { a.size = 8; }, "args"},
      {"short comm view", [](auto&, auto& c) { c.size = 8; }, "comm"},
      {"rank past the end", [=](auto&, auto& c) { c.rank = nranks; }, "comm->rank"},
      {"negative rank", [](auto&, auto& c) { c.rank = -1; }, "comm->rank"},
      {"no ranks", [](auto&, auto& c) { c.nranks = 0; }, "comm->nranks"},
  };
  for (int other = 0; other < HCOMM_NUM_COLLS; ++other)
    if (!(entry.desc->colls & (1u << other))) {
      out.push_back({"a collective it does not serve",
                     [=](auto& a, auto&) { a.coll = static_cast<hcomm_coll_t>(other); }, "args->coll"});
      break;
    }
  if (t.rooted) {
    out.push_back({"negative root", [](auto& a, auto&) { a.root = -1; }, "args->root"});
    out.push_back({"root past the end", [=](auto& a, auto&) { a.root = nranks; }, "args->root"});
  }
  if (t.variable) {
    out.push_back({"no recv_counts", [](auto& a, auto&) { a.recv_counts = nullptr; }, "recv_counts"});
    if (entry.coll != HCOMM_COLL_REDUCE_SCATTER_V)
      out.push_back({"no recv_displs", [](auto& a, auto&) { a.recv_displs = nullptr; }, "recv_displs"});
    if (entry.coll == HCOMM_COLL_ALLTOALLV) {
      out.push_back({"no send_counts", [](auto& a, auto&) { a.send_counts = nullptr; }, "send_counts"});
      out.push_back({"no send_displs", [](auto& a, auto&) { a.send_displs = nullptr; }, "send_displs"});
    }
  } else if (entry.coll != HCOMM_COLL_BARRIER) {
    out.push_back({"zero dtype size", [](auto& a, auto&) { a.dtype_size = 0; }, "args->dtype_size"});
    out.push_back({"count overflows", [](auto& a, auto&) { a.count = SIZE_MAX / 4; }, "overflows"});
  }
  return out;
}

class AlgorithmArguments : public ::testing::TestWithParam<AlgorithmEntry> {};

TEST_P(AlgorithmArguments, RejectsBadArgumentsByName) {
  const AlgorithmEntry& entry = GetParam();
  const std::optional<Case> good = buildable_case(entry);
  ASSERT_TRUE(good) << entry.id << " builds no call of 2 to 8 ranks and 10 or 37 elements in any view";
  const CallArgs args(*good);
  const hcomm_comm_view_t comm = comm_view(good->nranks, kRank, *good->view);
  const Chunking& chunking = kChunkings[0];
  for (const BadCall& bad : bad_calls(entry, good->nranks)) {
    SCOPED_TRACE(entry.id + ": " + bad.what + ", spoiling " + good->describe());
    hcomm_coll_args_t a = args.at(kRank);
    hcomm_comm_view_t c = comm;
    bad.spoil(a, c);
    const Outcome o = in_child([&](RankSchedule& out) {
      TestBuilder builder(out, chunking);
      return entry.desc->build(&a, &c, builder.c());
    });
    EXPECT_EQ(o.signal, 0) << "the build crashed with signal " << o.signal << " (" << strsignal(o.signal) << ")";
    EXPECT_EQ(o.result, HCOMM_ERR_INVALID_ARGUMENT) << o.error;
    EXPECT_NE(o.error.find(bad.named), std::string::npos) << "the error does not name " << bad.named << ": " << o.error;
    EXPECT_EQ(o.steps, 0u) << "steps were added before the error";
  }
  const std::pair<const char*, std::function<hcomm_result_t(hcomm_schedule_builder_t*)>> nulls[] = {
      {"NULL args", [&](auto* b) { return entry.desc->build(nullptr, &comm, b); }},
      {"NULL comm", [&](auto* b) { return entry.desc->build(&args.at(kRank), nullptr, b); }},
      {"NULL builder", [&](auto*) { return entry.desc->build(&args.at(kRank), &comm, nullptr); }},
  };
  for (const auto& [what, call] : nulls) {
    const Outcome o = in_child([&](RankSchedule& out) {
      TestBuilder builder(out, chunking);
      return call(builder.c());
    });
    EXPECT_EQ(o.signal, 0) << entry.id << ", " << what << ": crashed with signal " << o.signal;
    EXPECT_EQ(o.result, HCOMM_ERR_INVALID_ARGUMENT) << entry.id << ", " << what << ": " << o.error;
  }
}

TEST_P(AlgorithmArguments, RefusedStepEndsTheBuild) {
  const AlgorithmEntry& entry = GetParam();
  const std::optional<Case> good = buildable_case(entry);
  ASSERT_TRUE(good) << entry.id << " builds no call of 2 to 8 ranks and 10 or 37 elements in any view";
  const CallArgs args(*good);
  const hcomm_comm_view_t comm = comm_view(good->nranks, kRank, *good->view);
  RankSchedule out;
  TestBuilder builder(out, kChunkings[0], true);
  plugin_error_text() = "the builder's reason";
  EXPECT_EQ(entry.desc->build(&args.at(kRank), &comm, builder.c()), HCOMM_ERR_INTERNAL) << good->describe();
  EXPECT_EQ(plugin_error_text(), "the builder's reason");
}

std::string entry_name(const ::testing::TestParamInfo<AlgorithmEntry>& info) { return info.param.id; }

INSTANTIATE_TEST_SUITE_P(Algorithms, AlgorithmArguments, ::testing::ValuesIn(algorithm_entries()), entry_name);

}  // namespace
}  // namespace hcomm::algotest
