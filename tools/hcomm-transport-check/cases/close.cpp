#include <algorithm>
#include <thread>

#include "../proc_self.hpp"
#include "cases.hpp"
#include "exchange.hpp"

namespace hcomm::tcheck {

namespace {

// Threads a plugin stops at finalize may take a moment to be gone from /proc.
constexpr double kSettleSeconds = 1.0;
constexpr uint64_t kTag = 0xC105E;

struct ProcessResources {
  std::vector<std::string> fds;
  size_t threads = 0;

  static ProcessResources now() { return {open_fds(), thread_count()}; }
};

std::string join(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : ", ") + item;
  return text;
}

// What finalize left behind compared with `before` (taken before init), once
// threads had time to end.
void check_released(const ProcessResources& before) {
  ProcessResources after = ProcessResources::now();
  for (Deadline settle = Deadline::after(kSettleSeconds);
       (after.threads > before.threads || after.fds.size() > before.fds.size()) && !settle.expired();
       after = ProcessResources::now())
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  std::vector<std::string> leaked;
  for (const std::string& fd : after.fds)
    if (std::find(before.fds.begin(), before.fds.end(), fd) == before.fds.end())
      leaked.push_back(fd + " -> " + fd_target(fd));
  if (!leaked.empty()) TCHECK_FAIL("file descriptors open after finalize: %s", join(leaked).c_str());
  if (after.threads > before.threads)
    TCHECK_FAIL("%zu threads still running after finalize (%zu before init)", after.threads, before.threads);
  std::vector<std::string> mapped = shm_mappings();
  if (!mapped.empty()) TCHECK_FAIL("shared memory still mapped after finalize: %s", join(mapped).c_str());
}

}  // namespace

// Two nets on one context: the first closed endpoint by endpoint, the second
// closed whole (close frees its endpoints); then finalize must release all.
void run_close(RankContext& ctx) {
  RankTransport& s = ctx.transport;
  ProcessResources before = ProcessResources::now();

  s.start(0);
  s.phase("close: exchanging on the first net");
  exchange_with_all(s, 4096, kTag, 0);
  s.quiesce();
  s.close_endpoints();
  s.close();

  s.start(1);
  s.phase("close: exchanging on the second net");
  exchange_with_all(s, 65537, kTag, 1);
  s.quiesce();
  s.close();
  s.finalize();

  check_released(before);
  if (ctx.rank == 0)
    ctx.note(format("%zu fds and %zu threads before init and after finalize", before.fds.size(), before.threads));
}

}  // namespace hcomm::tcheck
