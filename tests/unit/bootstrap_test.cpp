// The bootstrap's rendezvous, with every rank a real process made by fork().
#include "core/bootstrap/bootstrap.hpp"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/bootstrap/root_service.hpp"
#include "core/bootstrap/socket.hpp"
#include "core/bootstrap/unique_id.hpp"
#include "core/bootstrap/wire.hpp"
#include "core/common/error.hpp"
#include "tests/unit/recording_proxy.hpp"

namespace hcomm::bootstrap {
namespace {

using std::chrono::milliseconds;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Inside a process of a test job a failed check throws; the harness reports its text.
void check(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error(what);
}

// Empty when `call` throws an Error with `code` whose text contains `needle`;
// otherwise what happened instead.
std::string error_mismatch(hcomm_result_t code, const std::string& needle, const std::function<void()>& call) {
  try {
    call();
  } catch (const Error& e) {
    if (e.code() == code && std::string(e.what()).find(needle) != std::string::npos) return "";
    return format("expected error %d containing '%s', got error %d: %s", code, needle.c_str(), e.code(), e.what());
  }
  return format("expected error %d containing '%s', but the call succeeded", code, needle.c_str());
}

void expect_error_in_child(hcomm_result_t code, const std::string& needle, const std::function<void()>& call) {
  std::string mismatch = error_mismatch(code, needle, call);
  check(mismatch.empty(), mismatch);
}

// The launcher variables must not leak into a job from the shell that runs the tests.
void clear_job_environment() {
  for (const char* name :
       {"HCOMM_RANK", "HCOMM_SIZE", "HCOMM_ROOT", "HCOMM_SECRET", "HCOMM_INSECURE", "OMPI_COMM_WORLD_RANK",
        "OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMI_SIZE", "SLURM_PROCID", "SLURM_NTASKS"})
    ::unsetenv(name);
}

struct ProcessResult {
  int exit_code = -1;  // -1 when a signal ended it
  int signal = 0;
  std::string report;  // a failed check's text
  std::string log;     // its stderr
};

struct JobOptions {
  int maker = 0;          // the process that makes the unique id on 127.0.0.1; -1: no id
  double timeout_s = 10;  // HCOMM_TIMEOUT in every process
  double limit_s = 15;    // processes still running then are killed
};

// A process's work: its index in the job and the job's unique id.
using Body = std::function<void(int index, const hcomm_unique_id_t& id)>;

class Job {
 public:
  Job(int count, const JobOptions& options) : count_(count), options_(options) {}

  std::vector<ProcessResult> run(const Body& body) {
    std::vector<std::array<int, 2>> id_pipes(count_), report_pipes(count_);
    std::vector<std::string> log_paths;
    for (int i = 0; i < count_; ++i) {
      EXPECT_EQ(::pipe(id_pipes[i].data()), 0);
      EXPECT_EQ(::pipe(report_pipes[i].data()), 0);
      char path[] = "/tmp/hcomm_bootstrap_test_XXXXXX";
      int fd = ::mkstemp(path);
      EXPECT_GE(fd, 0);
      ::close(fd);
      log_paths.push_back(path);
    }
    // Buffered output would be written again by every child's exit().
    std::fflush(stdout);
    std::fflush(stderr);
    std::vector<pid_t> pids;
    for (int i = 0; i < count_; ++i) {
      pid_t pid = ::fork();
      if (pid == 0) run_child(i, body, id_pipes, report_pipes[i][1], log_paths[i]);
      EXPECT_GT(pid, 0) << "fork failed: " << std::strerror(errno);
      pids.push_back(pid);
    }
    for (int i = 0; i < count_; ++i) {
      ::close(id_pipes[i][0]);
      ::close(id_pipes[i][1]);
      ::close(report_pipes[i][1]);
    }
    std::vector<ProcessResult> results = wait_all(pids);
    for (int i = 0; i < count_; ++i) {
      results[i].report = read_all(report_pipes[i][0]);
      ::close(report_pipes[i][0]);
      std::ifstream log(log_paths[i]);
      results[i].log.assign(std::istreambuf_iterator<char>(log), {});
      ::unlink(log_paths[i].c_str());
    }
    return results;
  }

 private:
  [[noreturn]] void run_child(int index, const Body& body, const std::vector<std::array<int, 2>>& id_pipes,
                              int report_fd, const std::string& log_path) {
    try {
      check(std::freopen(log_path.c_str(), "w", stderr) != nullptr, "cannot redirect stderr");
      clear_job_environment();
      ::setenv("HCOMM_TIMEOUT", std::to_string(options_.timeout_s).c_str(), 1);
      hcomm_unique_id_t id{};
      if (index == options_.maker) {
        make_unique_id_on(htonl(INADDR_LOOPBACK), options_.timeout_s, &id);
        for (int i = 0; i < count_; ++i)
          if (i != index)
            check(::write(id_pipes[i][1], &id, sizeof id) == static_cast<ssize_t>(sizeof id), "cannot hand out the id");
      } else if (options_.maker >= 0) {
        // Only the maker keeps write ends, so its death ends the read.
        for (const auto& p : id_pipes) ::close(p[1]);
        check(::read(id_pipes[index][0], &id, sizeof id) == static_cast<ssize_t>(sizeof id), "the id never came");
      }
      body(index, id);
      // exit(), as a rank's process ends, so that a rendezvous it serves winds down as in a real job.
      std::exit(0);
    } catch (const std::exception& e) {
      std::string text = e.what();
      [[maybe_unused]] ssize_t n = ::write(report_fd, text.data(), text.size());
    }
    std::exit(1);
  }

  // Reaps the processes; those still running at the limit are killed (only
  // real children: a failed fork left no pid to signal).
  std::vector<ProcessResult> wait_all(const std::vector<pid_t>& pids) {
    std::vector<ProcessResult> results(pids.size());
    std::vector<bool> done(pids.size());
    size_t left = 0;
    for (size_t i = 0; i < pids.size(); ++i) {
      done[i] = pids[i] <= 0;
      left += !done[i];
    }
    const Deadline limit = Deadline::after(options_.limit_s);
    bool killed = false;
    while (left > 0) {
      for (size_t i = 0; i < pids.size(); ++i) {
        int status = 0;
        if (done[i] || ::waitpid(pids[i], &status, WNOHANG) != pids[i]) continue;
        done[i] = true;
        --left;
        if (WIFEXITED(status)) results[i].exit_code = WEXITSTATUS(status);
        if (WIFSIGNALED(status)) results[i].signal = WTERMSIG(status);
      }
      if (left > 0 && !killed && limit.expired()) {
        for (size_t i = 0; i < pids.size(); ++i)
          if (!done[i]) ::kill(pids[i], SIGKILL);
        ADD_FAILURE() << "a process of the job still ran after " << options_.limit_s << " s: killed";
        killed = true;
      }
      if (left > 0) std::this_thread::sleep_for(milliseconds(5));
    }
    return results;
  }

  static std::string read_all(int fd) {
    std::string text;
    char buffer[4096];
    for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) > 0;) text.append(buffer, static_cast<size_t>(n));
    return text;
  }

  int count_;
  JobOptions options_;
};

std::string describe(const ProcessResult& r, size_t index) {
  std::ostringstream text;
  text << "process " << index << ": exit " << r.exit_code << ", signal " << r.signal << "\n  report: " << r.report
       << "\n  log:\n"
       << r.log;
  return text.str();
}

void expect_exited_cleanly(const std::vector<ProcessResult>& results, size_t index) {
  EXPECT_EQ(results[index].exit_code, 0) << describe(results[index], index);
}

void expect_all_exited_cleanly(const std::vector<ProcessResult>& results) {
  for (size_t i = 0; i < results.size(); ++i) expect_exited_cleanly(results, i);
}

// True when one line of `log` contains every one of `parts`.
bool has_line_with(const std::string& log, const std::vector<std::string>& parts) {
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    bool all = true;
    for (const std::string& p : parts) all = all && line.find(p) != std::string::npos;
    if (all) return true;
  }
  return false;
}

uint8_t pattern(int rank, int round, size_t len, size_t i) {
  return static_cast<uint8_t>(rank * 131 + round * 17 + len * 3 + i * 7 + 1);
}

// Several all-gathers of `len` bytes, each result checked byte by byte.
void check_allgathers(Bootstrap& bs, size_t len, int rounds) {
  const auto n = static_cast<size_t>(bs.size());
  std::vector<uint8_t> mine(len), all;
  for (int round = 0; round < rounds; ++round) {
    for (size_t i = 0; i < len; ++i) mine[i] = pattern(bs.rank(), round, len, i);
    all.assign(n * len, 0xEE);
    bs.allgather(mine.data(), len, all.data());
    for (size_t r = 0; r < n; ++r)
      for (size_t i = 0; i < len; ++i)
        if (all[r * len + i] != pattern(static_cast<int>(r), round, len, i))
          throw std::runtime_error(format("rank %d, %zu bytes, round %d: byte %zu of rank %zu is %u, expected %u",
                                          bs.rank(), len, round, i, r, all[r * len + i],
                                          pattern(static_cast<int>(r), round, len, i)));
  }
}

// Polls failed_peer() until it names a rank or `limit` passes.
int wait_for_failed_peer(Bootstrap& bs, double limit_s) {
  const Deadline limit = Deadline::after(limit_s);
  int failed = bs.failed_peer();
  while (failed < 0 && !limit.expired()) {
    std::this_thread::sleep_for(milliseconds(5));
    failed = bs.failed_peer();
  }
  return failed;
}

// A port that nothing listens on (a moment ago, the kernel handed it out).
uint16_t free_loopback_port() { return local_endpoint(listen_on(Endpoint{htonl(INADDR_LOOPBACK), 0}).get()).port; }

Endpoint root_of(const hcomm_unique_id_t& id) {
  UniqueId fields;
  check(decode_unique_id(id, &fields), "the id does not decode");
  return fields.root;
}

class BootstrapAllgather : public ::testing::TestWithParam<int> {};

TEST_P(BootstrapAllgather, GathersEveryRankInOrderOverSeveralRounds) {
  const int nranks = GetParam();
  auto results = Job(nranks, {.maker = nranks / 2}).run([nranks](int rank, const hcomm_unique_id_t& id) {
    auto bs = Bootstrap::from_unique_id(id, nranks, rank);
    check(bs->rank() == rank && bs->size() == nranks, "rank or size differs from the arguments");
    for (size_t len : {size_t{0}, size_t{1}, size_t{13}, size_t{100000}}) check_allgathers(*bs, len, 3);
    bs->barrier();
    check(bs->failed_peer() == -1, format("failed_peer() is %d with every rank alive", bs->failed_peer()));
    bs->close();
  });
  expect_all_exited_cleanly(results);
}

INSTANTIATE_TEST_SUITE_P(Ranks, BootstrapAllgather, ::testing::Values(1, 2, 3, 5, 7));

TEST(Bootstrap, BarrierWaitsForTheLastRank) {
  auto results = Job(3, {}).run([](int rank, const hcomm_unique_id_t& id) {
    auto bs = Bootstrap::from_unique_id(id, 3, rank);
    bs->barrier();
    const auto start = Clock::now();
    if (rank == 1) std::this_thread::sleep_for(milliseconds(300));
    bs->barrier();
    check(seconds_since(start) >= 0.29,
          format("rank %d left the barrier after %.3f s, before rank 1 entered it", rank, seconds_since(start)));
    bs->close();
  });
  expect_all_exited_cleanly(results);
}

TEST(Bootstrap, StrangersAreRefusedWhileTheJobGoesOn) {
  auto results = Job(2, {}).run([](int rank, const hcomm_unique_id_t& id) {
    auto bs = Bootstrap::from_unique_id(id, 2, rank);
    if (rank == 1) {
      const Endpoint root = root_of(id);
      int err = 0;
      Fd silent = connect_with_retry(root, Deadline::after(2), &err);
      Fd garbage = connect_with_retry(root, Deadline::after(2), &err);
      check(silent && garbage, "cannot connect to the rendezvous");
      const std::string junk(64, 'x');
      check(send_all(garbage.get(), junk.data(), junk.size(), Deadline::after(2)) == IoStatus::kDone, "send failed");

      UniqueId tampered;
      decode_unique_id(id, &tampered);
      tampered.secret[5] ^= 1;
      hcomm_unique_id_t wrong_secret_id;
      encode_unique_id(tampered, &wrong_secret_id);
      // Answered at once although the silent client has not sent its hello.
      const auto start = Clock::now();
      expect_error_in_child(HCOMM_ERR_INVALID_ARGUMENT, "could not prove this job's secret",
                            [&] { Bootstrap::from_unique_id(wrong_secret_id, 2, 1); });
      check(seconds_since(start) < 1, format("the refusal took %.3f s", seconds_since(start)));
      expect_error_in_child(HCOMM_ERR_INVALID_ARGUMENT, "rank 1 has joined already",
                            [&] { Bootstrap::from_unique_id(id, 2, 1); });
      expect_error_in_child(HCOMM_ERR_INVALID_ARGUMENT, "it names a job of 3 ranks, this job has 2",
                            [&] { Bootstrap::from_unique_id(id, 3, 2); });
      check_allgathers(*bs, 13, 2);
      // Both are closed in order (no reset), although the junk was longer than a hello.
      char byte;
      check(wait_for(garbage.get(), POLLIN, Deadline::after(3)) && ::recv(garbage.get(), &byte, 1, 0) == 0,
            "the client with the wrong magic was not closed in order");
      check(wait_for(silent.get(), POLLIN, Deadline::after(4)) && ::recv(silent.get(), &byte, 1, 0) == 0,
            "the silent client was not closed in order");
    } else {
      check_allgathers(*bs, 13, 2);
    }
    bs->barrier();
    check(bs->failed_peer() == -1, "a refused client was taken for a failed rank");
    bs->close();
  });
  expect_all_exited_cleanly(results);
  const std::string& log = results[0].log;
  const std::string who = "refused a client from 127.0.0.1:";
  EXPECT_TRUE(has_line_with(log, {"WARN", who, "closed the connection before its proof"})) << log;
  EXPECT_TRUE(has_line_with(log, {"WARN", who, "wrong magic"})) << log;
  EXPECT_TRUE(has_line_with(log, {"WARN", who, "sent no hello within 2 s"})) << log;
  EXPECT_TRUE(has_line_with(log, {"WARN", who, "rank 1 has joined already"})) << log;
  EXPECT_TRUE(has_line_with(log, {"WARN", who, "job of 3 ranks"})) << log;
}

TEST(Bootstrap, MissingRankTimesOutEveryOtherRankNamingIt) {
  constexpr double kTimeout = 2;
  auto results = Job(4, {.timeout_s = kTimeout}).run([](int rank, const hcomm_unique_id_t& id) {
    if (rank == 2) return;  // never arrives
    const auto start = Clock::now();
    expect_error_in_child(HCOMM_ERR_TIMEOUT, "bootstrap: rank 2 of 4 did not join the rendezvous at 127.0.0.1:", [&] {
      Bootstrap::from_unique_id(id, 4, rank);
    });
    check(seconds_since(start) < kTimeout + 1.5, format("the error came after %.3f s", seconds_since(start)));
  });
  expect_all_exited_cleanly(results);
}

TEST(Bootstrap, KilledRankIsReportedToTheOthers) {
  auto results = Job(4, {}).run([](int rank, const hcomm_unique_id_t& id) {
    auto bs = Bootstrap::from_unique_id(id, 4, rank);
    bs->barrier();
    if (rank == 3) ::raise(SIGKILL);
    int failed = wait_for_failed_peer(*bs, 2);
    check(failed == 3, format("rank %d: failed_peer() is %d, expected 3", rank, failed));
    expect_error_in_child(HCOMM_ERR_REMOTE, "rank 3 failed", [&] { bs->barrier(); });
    bs->close();
  });
  EXPECT_EQ(results[3].signal, SIGKILL) << describe(results[3], 3);
  for (size_t i = 0; i < 3; ++i) expect_exited_cleanly(results, i);
}

TEST(Bootstrap, DeathOfTheServingProcessNamesItsRank) {
  auto results = Job(3, {.maker = 2}).run([](int rank, const hcomm_unique_id_t& id) {
    auto bs = Bootstrap::from_unique_id(id, 3, rank);
    bs->barrier();
    if (rank == 2) ::raise(SIGKILL);
    int failed = wait_for_failed_peer(*bs, 2);
    check(failed == 2, format("rank %d: failed_peer() is %d, expected 2", rank, failed));
    expect_error_in_child(HCOMM_ERR_REMOTE, "rank 2 failed", [&] { bs->barrier(); });
    bs->close();
  });
  EXPECT_EQ(results[2].signal, SIGKILL) << describe(results[2], 2);
  for (size_t i = 0; i < 2; ++i) expect_exited_cleanly(results, i);
}

TEST(Bootstrap, GoodbyeIsNotAFailure) {
  auto results = Job(3, {}).run([](int rank, const hcomm_unique_id_t& id) {
    auto bs = Bootstrap::from_unique_id(id, 3, rank);
    bs->barrier();
    if (rank == 2) return bs->close();
    std::this_thread::sleep_for(milliseconds(200));
    check(bs->failed_peer() == -1, format("failed_peer() is %d after an orderly close", bs->failed_peer()));
    expect_error_in_child(HCOMM_ERR_REMOTE, "rank 2 of 3 closed the bootstrap while the others wait",
                          [&] { bs->barrier(); });
  });
  expect_all_exited_cleanly(results);
}

TEST(Bootstrap, LengthMismatchFailsEveryRank) {
  auto results = Job(3, {}).run([](int rank, const hcomm_unique_id_t& id) {
    auto bs = Bootstrap::from_unique_id(id, 3, rank);
    std::vector<uint8_t> mine(rank == 1 ? 8 : 4), all(3 * mine.size());
    expect_error_in_child(HCOMM_ERR_INVALID_ARGUMENT, "every rank must give the same length",
                          [&] { bs->allgather(mine.data(), mine.size(), all.data()); });
  });
  expect_all_exited_cleanly(results);
}

TEST(Bootstrap, UnreachableRendezvousTimesOutNamingIt) {
  auto results = Job(1, {.maker = -1, .timeout_s = 1}).run([](int, const hcomm_unique_id_t&) {
    const uint16_t port = free_loopback_port();
    hcomm_unique_id_t id;
    encode_unique_id(UniqueId{Endpoint{htonl(INADDR_LOOPBACK), port}, {}}, &id);
    const auto start = Clock::now();
    expect_error_in_child(
        HCOMM_ERR_TIMEOUT,
        format("could not reach the rendezvous at 127.0.0.1:%u within 1 s", static_cast<unsigned>(port)),
        [&] { Bootstrap::from_unique_id(id, 2, 1); });
    check(seconds_since(start) >= 0.9 && seconds_since(start) < 2.5,
          format("gave up after %.3f s instead of about 1 s", seconds_since(start)));
  });
  expect_all_exited_cleanly(results);
}

TEST(Bootstrap, EnvironmentRendezvousWithLauncherVariables) {
  const std::string root = "127.0.0.1:" + std::to_string(free_loopback_port());
  auto results = Job(3, {.maker = -1}).run([&root](int rank, const hcomm_unique_id_t&) {
    ::setenv("HCOMM_ROOT", root.c_str(), 1);
    ::setenv("HCOMM_SECRET", "00112233445566778899aabbccddeeff", 1);
    const char* rank_names[] = {"HCOMM_RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID"};
    const char* size_names[] = {"HCOMM_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS"};
    ::setenv(rank_names[rank], std::to_string(rank).c_str(), 1);
    ::setenv(size_names[rank], "3", 1);
    // The others start first and retry until rank 0 serves.
    if (rank == 0) std::this_thread::sleep_for(milliseconds(300));
    auto bs = Bootstrap::from_env();
    check(bs->rank() == rank && bs->size() == 3, format("rank %d of %d from the environment", bs->rank(), bs->size()));
    check_allgathers(*bs, 13, 2);
    bs->barrier();
    bs->close();
  });
  expect_all_exited_cleanly(results);
  EXPECT_FALSE(has_line_with(results[0].log, {"HCOMM_SECRET is not set"})) << results[0].log;
}

TEST(Bootstrap, EnvironmentWithoutSecretRefusesUnlessInsecure) {
  const std::string root = "127.0.0.1:" + std::to_string(free_loopback_port());
  auto results = Job(1, {.maker = -1}).run([&root](int, const hcomm_unique_id_t&) {
    ::setenv("HCOMM_ROOT", root.c_str(), 1);
    ::setenv("HCOMM_RANK", "0", 1);
    ::setenv("HCOMM_SIZE", "1", 1);
    expect_error_in_child(HCOMM_ERR_CONFIG, "HCOMM_SECRET is not set: without the job's secret, any process",
                          [] { Bootstrap::from_env(); });
    ::setenv("HCOMM_INSECURE", "1", 1);
    auto bs = Bootstrap::from_env();
    check_allgathers(*bs, 100000, 1);
    bs->close();
  });
  expect_all_exited_cleanly(results);
  EXPECT_TRUE(has_line_with(results[0].log, {"HCOMM_SECRET is not set and HCOMM_INSECURE=1", "accepts any client"}))
      << results[0].log;
}

// A rendezvous of this process for a job of `nranks`, with a chosen secret,
// as a second run of a job with the same HCOMM_SECRET would have.
Endpoint serve_rendezvous(const Secret& secret, int nranks) {
  Fd listener = listen_on(Endpoint{htonl(INADDR_LOOPBACK), 0});
  const Endpoint at = local_endpoint(listener.get());
  start_root_service(std::move(listener), RootOptions{secret, nranks, 5, at.to_string()});
  return at;
}

hcomm_unique_id_t id_for(const Endpoint& root, const Secret& secret) {
  hcomm_unique_id_t id;
  encode_unique_id(UniqueId{root, secret}, &id);
  return id;
}

// What a rendezvous answers to `bytes` sent at once: the frames it sends
// until it closes the connection (or 3 s pass).
std::vector<std::pair<FrameType, Bytes>> answer_to(const Endpoint& root, const std::vector<uint8_t>& bytes) {
  int err = 0;
  Fd fd = connect_with_retry(root, Deadline::after(2), &err);
  check(bool(fd), "cannot connect to the rendezvous");
  check(send_all(fd.get(), bytes.data(), bytes.size(), Deadline::after(2)) == IoStatus::kDone, "send failed");
  std::vector<std::pair<FrameType, Bytes>> frames;
  FrameReader reader(kMaxGatheredBytes);
  const Deadline limit = Deadline::after(3);
  while (wait_for(fd.get(), POLLIN, limit) && !limit.expired()) {
    FrameReader::Status status = reader.read(fd.get());
    if (status == FrameReader::Status::kFrame) frames.emplace_back(reader.type(), reader.take_payload());
    if (status == FrameReader::Status::kClosed || status == FrameReader::Status::kTooLong) break;
  }
  return frames;
}

TEST(Bootstrap, ReplayedHandshakeIsRefused) {
  auto results = Job(1, {.maker = -1}).run([](int, const hcomm_unique_id_t&) {
    const Secret secret{7, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    // Yesterday's run of a one-rank job, its handshake recorded on the way.
    const Endpoint yesterday = serve_rendezvous(secret, 1);
    std::vector<uint8_t> recorded;
    {
      test::RecordingProxy proxy(yesterday);
      auto bs = Bootstrap::from_unique_id(id_for(proxy.address(), secret), 1, 0);
      bs->barrier();
      recorded = proxy.recorded();
      bs->close();
    }
    check(!recorded.empty(), "nothing was recorded");
    // Today's run with the same secret: the recorded bytes, replayed, are refused.
    const Endpoint today = serve_rendezvous(secret, 1);
    bool rejected = false;
    for (const auto& [type, payload] : answer_to(today, recorded)) {
      check(type != FrameType::kReady && type != FrameType::kGathered,
            format("the replayed handshake was admitted (frame type %u)", static_cast<unsigned>(type)));
      hcomm_result_t code;
      std::string text;
      if (type == FrameType::kReject && decode_error(payload, &code, &text))
        rejected = text.find("refused rank 0: wrong secret") != std::string::npos;
    }
    check(rejected, "the replayed handshake was not refused for its proof");
    // The real rank still joins.
    auto bs = Bootstrap::from_unique_id(id_for(today, secret), 1, 0);
    check_allgathers(*bs, 13, 1);
    bs->close();
  });
  expect_all_exited_cleanly(results);
  EXPECT_TRUE(has_line_with(results[0].log, {"WARN", "refused a client from 127.0.0.1:", "wrong secret"}))
      << results[0].log;
}

// A listener that plays the rendezvous without the job's secret: it answers
// whatever it reads with `answer`, and records what the rank sent.
class FakeRoot {
 public:
  explicit FakeRoot(Bytes answer)
      : listener_(listen_on(Endpoint{htonl(INADDR_LOOPBACK), 0})),
        answer_(std::move(answer)),
        thread_([this] { serve(); }) {}
  ~FakeRoot() { thread_.join(); }
  Endpoint address() const { return local_endpoint(listener_.get()); }
  // What the rank sent, once it closed the connection.
  const std::vector<uint8_t>& received() const { return received_; }

 private:
  void serve() {
    Endpoint peer;
    Fd client;
    const Deadline limit = Deadline::after(5);
    while (!client && wait_for(listener_.get(), POLLIN, limit) && !limit.expired())
      client = accept_connection(listener_.get(), &peer);
    bool answered = false;
    uint8_t buffer[4096];
    while (client && wait_for(client.get(), POLLIN, limit) && !limit.expired()) {
      ptrdiff_t n = recv_some(client.get(), buffer, sizeof buffer);
      if (n < 0) break;
      received_.insert(received_.end(), buffer, buffer + n);
      if (n > 0 && !answered)
        answered = send_all(client.get(), answer_.data(), answer_.size(), limit) == IoStatus::kDone;
    }
  }

  Fd listener_;
  Bytes answer_;
  std::vector<uint8_t> received_;
  std::thread thread_;
};

bool contains(const std::vector<uint8_t>& haystack, const Secret& needle) {
  return std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end()) != haystack.end();
}

TEST(Bootstrap, RendezvousWithoutTheSecretIsRefusedAndLearnsNothing) {
  auto results = Job(1, {.maker = -1, .timeout_s = 2}).run([](int, const hcomm_unique_id_t&) {
    const Secret secret{9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 1, 2, 3, 4, 5, 6};
    // A challenge frame of the right length whose proof is made up.
    std::vector<uint8_t> made_up(48, 0x5a);
    FakeRoot fake(encode_frame(static_cast<FrameType>(8), made_up.data(), made_up.size()));
    expect_error_in_child(HCOMM_ERR_INVALID_ARGUMENT, "could not prove this job's secret",
                          [&] { Bootstrap::from_unique_id(id_for(fake.address(), secret), 2, 1); });
    ::usleep(100000);  // the fake root reads the close
    check(!contains(fake.received(), secret), "the rank sent the job's secret to a rendezvous that did not prove it");
  });
  expect_all_exited_cleanly(results);
}

// The largest resident size this process has had, in bytes.
size_t peak_resident_bytes() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  return 0;
}

TEST(Bootstrap, OversizedFrameFromTheRendezvousIsRefusedWithoutAllocating) {
  auto results = Job(1, {.maker = -1, .timeout_s = 2}).run([](int, const hcomm_unique_id_t&) {
    constexpr uint64_t kAnnounced = uint64_t{512} << 20;
    const FrameHeader header{static_cast<uint32_t>(FrameType::kReject), 0, kAnnounced};
    const auto* bytes = reinterpret_cast<const uint8_t*>(&header);
    FakeRoot fake(Bytes(bytes, bytes + sizeof header));
    const size_t before = peak_resident_bytes();
    const auto start = Clock::now();
    expect_error_in_child(
        HCOMM_ERR_INTERNAL,
        format("announced a message of %llu bytes where at most", static_cast<unsigned long long>(kAnnounced)),
        [&] { Bootstrap::from_unique_id(id_for(fake.address(), Secret{1}), 2, 1); });
    check(seconds_since(start) < 1, format("the error came after %.3f s", seconds_since(start)));
    check(peak_resident_bytes() < before + (64 << 20),
          format("the peak resident size grew from %zu to %zu bytes", before, peak_resident_bytes()));
  });
  expect_all_exited_cleanly(results);
}

TEST(Bootstrap, EnvironmentErrorsNameTheVariable) {
  auto results = Job(1, {.maker = -1, .timeout_s = 1}).run([](int, const hcomm_unique_id_t&) {
    auto expect_config_error = [](const std::string& needle) {
      expect_error_in_child(HCOMM_ERR_CONFIG, needle, [] { Bootstrap::from_env(); });
    };
    expect_config_error("this process's rank is unknown: set HCOMM_RANK and HCOMM_SIZE");
    ::setenv("HCOMM_RANK", "1", 1);
    expect_config_error("HCOMM_RANK is set but HCOMM_SIZE is not");
    ::setenv("HCOMM_SIZE", "1", 1);
    expect_config_error("HCOMM_RANK=1: expected a rank in 0..0");
    ::setenv("HCOMM_SIZE", "2", 1);
    expect_config_error("HCOMM_ROOT is not set: expected host:port");
    for (const char* root : {"127.0.0.1", "127.0.0.1:0", "127.0.0.1:65536", ":4242", "127.0.0.1:42x"}) {
      ::setenv("HCOMM_ROOT", root, 1);
      expect_config_error(format("HCOMM_ROOT='%s' does not parse: expected host:port", root));
    }
    ::setenv("HCOMM_ROOT", "127.0.0.1:1", 1);
    for (const char* secret : {"0011", "00112233445566778899aabbccddeefg"}) {
      ::setenv("HCOMM_SECRET", secret, 1);
      expect_config_error("HCOMM_SECRET does not parse: expected 32 hex digits");
    }
    ::setenv("HCOMM_TIMEOUT", "0", 1);
    expect_config_error("HCOMM_TIMEOUT='0' is out of range: expected a number from 0.001 to 1000000");
    ::unsetenv("HCOMM_TIMEOUT");
    clear_job_environment();
    ::setenv("PMI_RANK", "x", 1);
    ::setenv("PMI_SIZE", "4", 1);
    expect_config_error("PMI_RANK='x' does not parse");
  });
  expect_all_exited_cleanly(results);
}

TEST(Bootstrap, ArgumentsAreChecked) {
  hcomm_unique_id_t id{};
  EXPECT_EQ(
      error_mismatch(HCOMM_ERR_INVALID_ARGUMENT, "nranks must be in 1..", [&] { Bootstrap::from_unique_id(id, 0, 0); }),
      "");
  EXPECT_EQ(error_mismatch(HCOMM_ERR_INVALID_ARGUMENT, "rank must be in 0..1 (nranks - 1), got 2",
                           [&] { Bootstrap::from_unique_id(id, 2, 2); }),
            "");
  EXPECT_EQ(error_mismatch(HCOMM_ERR_INVALID_ARGUMENT, "rank must be in 0..1 (nranks - 1), got -1",
                           [&] { Bootstrap::from_unique_id(id, 2, -1); }),
            "");
  EXPECT_EQ(error_mismatch(HCOMM_ERR_INVALID_ARGUMENT, "not one made by hcomm_get_unique_id",
                           [&] { Bootstrap::from_unique_id(id, 2, 0); }),
            "");
  EXPECT_EQ(
      error_mismatch(HCOMM_ERR_INVALID_ARGUMENT, "the id pointer is null", [] { Bootstrap::make_unique_id(nullptr); }),
      "");
}

TEST(Bootstrap, AllgatherArgumentsAreChecked) {
  auto results = Job(1, {}).run([](int, const hcomm_unique_id_t& id) {
    auto bs = Bootstrap::from_unique_id(id, 1, 0);
    uint8_t byte = 0;
    expect_error_in_child(HCOMM_ERR_INVALID_ARGUMENT, "null input buffer", [&] { bs->allgather(nullptr, 1, &byte); });
    expect_error_in_child(HCOMM_ERR_INVALID_ARGUMENT, "exceeds the limits",
                          [&] { bs->allgather(&byte, size_t{1} << 40, &byte); });
    check_allgathers(*bs, 1, 1);
    bs->close();
    expect_error_in_child(HCOMM_ERR_INVALID_ARGUMENT, "after close()", [&] { bs->barrier(); });
  });
  expect_all_exited_cleanly(results);
}

TEST(Bootstrap, UniqueIdDescribesAFreshRendezvous) {
  UniqueId fields{Endpoint{htonl(INADDR_LOOPBACK), 4242}, {1, 2, 3}};
  hcomm_unique_id_t id;
  encode_unique_id(fields, &id);
  UniqueId decoded;
  ASSERT_TRUE(decode_unique_id(id, &decoded));
  EXPECT_EQ(decoded.root.to_string(), "127.0.0.1:4242");
  EXPECT_EQ(decoded.secret, fields.secret);
  id.internal[0] ^= 1;
  EXPECT_FALSE(decode_unique_id(id, &decoded));

  // The public maker listens where HCOMM_BOOTSTRAP_ADDR says; nothing connects to it here.
  auto results = Job(1, {.maker = -1}).run([](int, const hcomm_unique_id_t&) {
    setenv("HCOMM_BOOTSTRAP_ADDR", "127.0.0.1", 1);
    hcomm_unique_id_t first, second;
    Bootstrap::make_unique_id(&first);
    Bootstrap::make_unique_id(&second);
    UniqueId a, b;
    check(decode_unique_id(first, &a) && decode_unique_id(second, &b), "a made id does not decode");
    check(a.root.ip == htonl(INADDR_LOOPBACK), "the id does not name HCOMM_BOOTSTRAP_ADDR");
    check(a.root.port != 0 && a.root.port != b.root.port, "the ids do not name two listening ports");
    check(a.secret != Secret{} && a.secret != b.secret, "the secrets are not fresh random bytes");
  });
  expect_all_exited_cleanly(results);
}

}  // namespace
}  // namespace hcomm::bootstrap
