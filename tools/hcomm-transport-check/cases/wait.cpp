#include <thread>

#include "../payload.hpp"
#include "../proc_self.hpp"
#include "../transfers.hpp"
#include "cases.hpp"

namespace hcomm::tcheck {

namespace {

constexpr int64_t kIdleTimeoutUs = 200000;
constexpr double kIdleReturnLimit = 0.3;  // seconds, for a 0.2 s timeout
constexpr double kCpuWindow = 1.0;        // seconds of idle waiting measured
constexpr double kCpuLimit = 0.2;         // seconds on or waiting for a CPU allowed in that window
constexpr int64_t kWakeTimeoutUs = 1000000;
constexpr double kWakeLimit = 0.5;  // seconds from send to receive completion
constexpr auto kSendDelay = std::chrono::milliseconds(100);
constexpr size_t kWakeMessage = 64;
constexpr uint64_t kTag = 0x3;

// A timed-out wait may say so with any of these; anything else is an error.
void call_wait(RankTransport& s, int64_t timeout_us) {
  std::string text;
  hcomm_result_t rc = s.call([&] { return s.api().wait(s.net(), timeout_us); }, &text);
  if (rc != HCOMM_SUCCESS && rc != HCOMM_IN_PROGRESS && rc != HCOMM_ERR_TIMEOUT)
    TCHECK_FAIL("wait(net, %lld) returned %s", static_cast<long long>(timeout_us), describe_error(rc, text).c_str());
}

double idle_wait_seconds(RankTransport& s) {
  s.phase("wait: one idle wait");
  Clock::time_point begin = Clock::now();
  call_wait(s, kIdleTimeoutUs);
  double took = seconds_since(begin);
  if (took > kIdleReturnLimit)
    TCHECK_FAIL("an idle wait(net, %lld us) returned after %.3f s (limit %.1f s)",
                static_cast<long long>(kIdleTimeoutUs), took, kIdleReturnLimit);
  return took;
}

double idle_busy_seconds(RankTransport& s) {
  s.phase("wait: measuring the CPU of idle waiting");
  double busy_begin = runnable_seconds();
  Clock::time_point begin = Clock::now();
  long calls = 0;
  for (; seconds_since(begin) < kCpuWindow; ++calls) call_wait(s, kIdleTimeoutUs);
  double busy = runnable_seconds() - busy_begin;
  if (busy > kCpuLimit)
    TCHECK_FAIL(
        "the process was on or waiting for a CPU %.2f s of %.1f s of idle wait calls (%ld calls, limit %.1f s): "
        "wait must block, not spin",
        busy, kCpuWindow, calls, kCpuLimit);
  return busy;
}

// Rank 0 sends rank 1 a message a moment after both are ready; rank 1 waits
// for it with wait() and must wake when it arrives, not at the timeout.
double wake_on_arrival(RankContext& ctx) {
  RankTransport& s = ctx.transport;
  std::atomic<int64_t>& sent_at = s.shared().event_ns;
  TransferSet set(s);
  SendBuffer message(Payload(0, 1, 0, kWakeMessage));
  ReceiveBuffer arrival(kWakeMessage);
  if (ctx.rank == 1) set.recv(0, arrival.data(), kWakeMessage, kTag, kWakeMessage);
  s.phase("wait: waiting for every rank before the wake-up check");
  s.shared().barrier.wait(s.deadline());
  double latency = 0;
  if (ctx.rank == 0) {
    std::this_thread::sleep_for(kSendDelay);
    sent_at.store(to_ns(Clock::now()));
    set.send(1, message.data(), kWakeMessage, kTag);
    s.phase("wait: sending to rank 1");
    set.complete();
  } else if (ctx.rank == 1) {
    s.phase("wait: rank 1 waiting for rank 0's message with wait()");
    for (set.poll(); !set.all_done() && !s.deadline().expired(); set.poll()) call_wait(s, kWakeTimeoutUs);
    set.complete();
    latency = seconds_between(from_ns(sent_at.load()), set.transfers().front().ended);
    std::string wrong = arrival.check(Payload(0, 1, 0, kWakeMessage));
    if (!wrong.empty()) TCHECK_FAIL("message from rank 0: %s", wrong.c_str());
    if (latency > kWakeLimit)
      TCHECK_FAIL(
          "a message sent %.3f s before arrived only after wait(net, %lld us) timed out (limit %.1f s): "
          "wait must return when progress is possible",
          latency, static_cast<long long>(kWakeTimeoutUs), kWakeLimit);
  }
  return latency;
}

}  // namespace

void run_wait(RankContext& ctx) {
  if (!ctx.plugin.has_wait()) throw Skipped("the plugin has no wait function");
  RankTransport& s = ctx.transport;
  s.start();
  s.shared().barrier.wait(s.deadline());  // every rank idle from here on
  double idle = idle_wait_seconds(s);
  double busy = idle_busy_seconds(s);
  s.shared().barrier.wait(s.deadline());
  double wake = wake_on_arrival(ctx);
  if (ctx.rank == 0) ctx.note(format("idle wait(200 ms) took %.0f ms; busy %.3f s per s of waiting", idle * 1e3, busy));
  if (ctx.rank == 1) ctx.note(format("woke %.1f ms after the send", wake * 1e3));
  s.finish();
}

}  // namespace hcomm::tcheck
