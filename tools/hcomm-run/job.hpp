// One launch: starts the ranks, passes on their output, and watches for the
// first failure, the time limit and signals; stops every rank when one of
// those calls for it, and cleans up after the ranks when all have ended.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "launch_options.hpp"
#include "output_tagger.hpp"
#include "rank_environment.hpp"
#include "rank_process.hpp"
#include "signal_channel.hpp"

namespace hcomm::run {

class Job {
 public:
  Job(LaunchOptions options, std::string program);
  // Runs the job to its end; returns hcomm-run's exit status.
  int run();

 private:
  using Clock = std::chrono::steady_clock;

  struct Rank {
    pid_t pid = 0;
    bool running = true;
    std::unique_ptr<OutputTagger> out;  // with --tag-output only
    std::unique_ptr<OutputTagger> err;
  };

  void start_ranks();
  void start_rank(int rank, const JobIdentity& identity);
  void wait_for_events();
  void on_signals(const std::vector<int>& signals);
  void collect_ended_ranks();
  void on_rank_end(const RankEnd& end);
  void check_deadlines();
  std::optional<Clock::time_point> next_deadline() const;
  void stop_all();
  void signal_all(int sig);
  void finish();
  int report() const;

  LaunchOptions options_;
  std::string program_;
  SignalChannel signals_;
  std::vector<Rank> ranks_;
  int running_ = 0;

  // Set once the ranks are being stopped: a rank that ends after that is not
  // a failure of its own.
  bool stopping_ = false;
  std::optional<Clock::time_point> timeout_at_;
  std::optional<Clock::time_point> kill_at_;  // SIGKILL for ranks that outlive SIGTERM

  std::optional<RankEnd> first_failure_;
  bool timed_out_ = false;
  int interrupt_signal_ = 0;  // the first signal passed on to the ranks
  int launch_error_code_ = 0;
  std::string launch_error_;
};

}  // namespace hcomm::run
