#include "job.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <system_error>
#include <utility>

#include "shm_cleanup.hpp"

extern char** environ;

namespace hcomm::run {
namespace {

// How long a rank may take to end after SIGTERM before it gets SIGKILL.
constexpr std::chrono::seconds kTermGrace{2};

// Each tagged rank holds two pipes open in hcomm-run; ask for enough
// descriptors (up to the hard limit) before starting.
void raise_descriptor_limit(int nranks) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return;
  const rlim_t wanted = static_cast<rlim_t>(2 * nranks + 64);
  if (limit.rlim_cur >= wanted) return;
  limit.rlim_cur = limit.rlim_max == RLIM_INFINITY || limit.rlim_max > wanted ? wanted : limit.rlim_max;
  ::setrlimit(RLIMIT_NOFILE, &limit);
}

struct Pipe {
  UniqueFd read_end;  // non-blocking, stays in hcomm-run
  UniqueFd write_end;
};

Pipe make_output_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::system_error(errno, std::generic_category(), "pipe2");
  Pipe pipe{UniqueFd(fds[0]), UniqueFd(fds[1])};
  ::fcntl(pipe.read_end.get(), F_SETFL, ::fcntl(pipe.read_end.get(), F_GETFL) | O_NONBLOCK);
  return pipe;
}

int poll_timeout_ms(std::optional<std::chrono::steady_clock::time_point> deadline) {
  if (!deadline) return -1;
  const auto left = *deadline - std::chrono::steady_clock::now();
  if (left <= left.zero()) return 0;
  return static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(left).count());
}

}  // namespace

Job::Job(LaunchOptions options, std::string program) : options_(std::move(options)), program_(std::move(program)) {}

int Job::run() {
  start_ranks();
  while (running_ > 0) wait_for_events();
  finish();
  return report();
}

void Job::start_ranks() {
  if (options_.tag_output) raise_descriptor_limit(options_.nranks);
  if (options_.timeout_s > 0)
    timeout_at_ =
        Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options_.timeout_s));
  try {
    const JobIdentity identity = JobIdentity::create();
    for (int rank = 0; rank < options_.nranks; ++rank) start_rank(rank, identity);
  } catch (const ExecError& e) {
    launch_error_code_ = 2;
    launch_error_ = e.what();
  } catch (const std::system_error& e) {
    launch_error_code_ = 1;
    launch_error_ = "cannot start rank " + std::to_string(ranks_.size()) + ": " + e.what();
  }
  if (launch_error_code_ != 0) stop_all();
}

void Job::start_rank(int rank, const JobIdentity& identity) {
  RankLaunch launch{.rank = rank,
                    .program = program_,
                    .argv = options_.command,
                    .env = rank_environment(environ, identity, rank, options_.nranks),
                    .inherited_fd = rank == 0 ? identity.listener.get() : -1,
                    .signal_mask = signals_.original_mask()};
  Pipe out, err;
  if (options_.tag_output) {
    out = make_output_pipe();
    err = make_output_pipe();
    launch.stdout_fd = out.write_end.get();
    launch.stderr_fd = err.write_end.get();
  }
  Rank& started = ranks_.emplace_back(Rank{.pid = spawn_rank(launch)});
  ++running_;
  if (options_.tag_output) {
    started.out = std::make_unique<OutputTagger>(rank, std::move(out.read_end), STDOUT_FILENO);
    started.err = std::make_unique<OutputTagger>(rank, std::move(err.read_end), STDERR_FILENO);
  }
}

void Job::wait_for_events() {
  std::vector<pollfd> fds{{.fd = signals_.fd(), .events = POLLIN, .revents = 0}};
  std::vector<OutputTagger*> taggers;
  for (Rank& rank : ranks_) {
    for (OutputTagger* tagger : {rank.out.get(), rank.err.get()}) {
      if (!tagger || !tagger->open()) continue;
      fds.push_back({.fd = tagger->source_fd(), .events = POLLIN, .revents = 0});
      taggers.push_back(tagger);
    }
  }
  if (::poll(fds.data(), fds.size(), poll_timeout_ms(next_deadline())) < 0 && errno != EINTR)
    throw std::system_error(errno, std::generic_category(), "poll");
  for (size_t i = 0; i < taggers.size(); ++i)
    if (fds[i + 1].revents != 0) taggers[i]->pump();
  if (fds[0].revents != 0) on_signals(signals_.take());
  check_deadlines();
}

void Job::on_signals(const std::vector<int>& signals) {
  bool child_ended = false;
  for (const int sig : signals) {
    if (sig == SIGCHLD) {
      child_ended = true;
    } else if (interrupt_signal_ == 0) {
      interrupt_signal_ = sig;
      signal_all(sig);
    } else {  // a second interrupt: the user insists
      stopping_ = true;
      signal_all(SIGKILL);
    }
  }
  if (child_ended) collect_ended_ranks();
}

// An ended rank is left unreaped (a zombie) until the job is over: while it
// exists its pid, which is also its group's id, cannot be given to another
// process, so signalling the group can only reach this job's processes.
//
// The kernel does not say in which order ranks found ended together did
// end. A rank killed by a signal did not choose to stop, while ranks that
// exit with an error at the same moment usually do so because a peer
// vanished: the signalled ones are taken first.
void Job::collect_ended_ranks() {
  std::vector<RankEnd> ended;
  for (size_t i = 0; i < ranks_.size(); ++i) {
    Rank& rank = ranks_[i];
    if (!rank.running) continue;
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(rank.pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == 0)
      continue;
    rank.running = false;
    --running_;
    ended.push_back(RankEnd{.rank = static_cast<int>(i),
                            .pid = rank.pid,
                            .signalled = info.si_code != CLD_EXITED,
                            .value = info.si_status});
  }
  std::stable_partition(ended.begin(), ended.end(), [](const RankEnd& end) { return end.signalled; });
  for (const RankEnd& end : ended) on_rank_end(end);
}

void Job::on_rank_end(const RankEnd& end) {
  if (!end.failed() || stopping_) return;
  first_failure_ = end;
  stop_all();
}

void Job::check_deadlines() {
  const auto now = Clock::now();
  if (timeout_at_ && now >= *timeout_at_) {
    timeout_at_.reset();
    timed_out_ = true;
    stop_all();
  }
  if (kill_at_ && now >= *kill_at_) {
    kill_at_.reset();
    signal_all(SIGKILL);
  }
}

std::optional<Job::Clock::time_point> Job::next_deadline() const {
  if (timeout_at_ && kill_at_) return std::min(*timeout_at_, *kill_at_);
  return timeout_at_ ? timeout_at_ : kill_at_;
}

void Job::stop_all() {
  if (stopping_) return;
  stopping_ = true;
  timeout_at_.reset();
  signal_all(SIGTERM);
  kill_at_ = Clock::now() + kTermGrace;
}

void Job::signal_all(int sig) {
  for (const Rank& rank : ranks_) ::killpg(rank.pid, sig);
}

// Processes the ranks left behind in their groups are killed; then the ranks
// are reaped, which frees their pids, and their shared memory is removed.
void Job::finish() {
  signal_all(SIGKILL);
  std::vector<pid_t> pids;
  for (Rank& rank : ranks_) {
    for (OutputTagger* tagger : {rank.out.get(), rank.err.get()})
      if (tagger) tagger->finish();
    ::waitpid(rank.pid, nullptr, 0);
    pids.push_back(rank.pid);
  }
  remove_shm_segments(pids);
}

int Job::report() const {
  if (launch_error_code_ != 0) {
    std::fprintf(stderr, "hcomm-run: %s\n", launch_error_.c_str());
    return launch_error_code_;
  }
  if (timed_out_) {
    std::fprintf(stderr,
                 "hcomm-run: timeout: the job was still running after %g s (--timeout); its ranks were stopped\n",
                 options_.timeout_s);
    return 124;
  }
  if (first_failure_) {
    std::fprintf(stderr, "hcomm-run: %s\n", first_failure_->describe().c_str());
    return first_failure_->exit_code();
  }
  if (interrupt_signal_ != 0) {
    std::fprintf(stderr, "hcomm-run: stopped by signal %d (%s)\n", interrupt_signal_, ::strsignal(interrupt_signal_));
    return 128 + interrupt_signal_;
  }
  return 0;
}

}  // namespace hcomm::run
