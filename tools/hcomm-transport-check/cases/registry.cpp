#include "cases.hpp"

namespace hcomm::tcheck {

const std::vector<TestCase>& test_cases() {
  static const std::vector<TestCase> cases = {
      {.name = "abi",
       .checks = "hcomm_plugin_v1, header size, ABI major, kind, name vs file name, settings, iface size, functions",
       .run = run_abi,
       .library_only = true},
      {.name = "connect",
       .checks = "addresses, symmetric scores, connect returns within 100 ms, every endpoint ready, properties",
       .run = run_connect},
      {.name = "comm-key",
       .checks = "a net with another key that claims a rank cannot connect, inject data or disturb the real net",
       .run = run_comm_key},
      {.name = "sizes",
       .checks = "0 B to 16 MiB (64 MiB on 2 ranks) both ways between every pair, byte by byte",
       .run = run_sizes},
      {.name = "tags",
       .checks = "200 messages per pair, shuffled tags, unexpected arrivals, same-tag order",
       .run = run_tags},
      {.name = "truncation",
       .checks = "a receive shorter than its message fails with error text, no crash or hang",
       .run = run_truncation},
      {.name = "retry",
       .checks = "a burst of 500 messages per pair; null requests are retried and counted",
       .run = run_retry,
       .reports_retries = true},
      {.name = "wait",
       .checks = "wait returns within its timeout, idles without CPU, wakes when a message arrives",
       .run = run_wait},
      {.name = "peer-death",
       .checks = "a peer killed mid-transfer is HCOMM_ERR_REMOTE within 2 s, naming its rank",
       .run = run_peer_death,
       .last_rank_dies = true},
      {.name = "quiet-death",
       .checks = "a peer killed before its first message is HCOMM_ERR_REMOTE within 2 s on the first messages to it",
       .run = run_quiet_death,
       .last_rank_dies = true},
      {.name = "drain",
       .checks = "messages sent before the sender closed its endpoints are received after; a further receive fails",
       .run = run_drain},
      {.name = "sent-then-died",
       .checks = "messages whose sends completed before the sender died are received after; a further receive fails",
       .run = run_sent_then_died,
       .last_rank_dies = true},
      {.name = "close",
       .checks = "ep_close, close, reopen, finalize succeed; no fd, thread, mapping or /dev/shm left",
       .run = run_close},
      {.name = "memory",
       .checks = "mem_alloc / mem_register memory mapped, read and written by every peer, ep_read / ep_write",
       .run = run_memory},
      {.name = "memory-death",
       .checks = "a dead peer's mapped memory stays readable; ep_read from it is HCOMM_ERR_REMOTE within 2 s",
       .run = run_memory_death,
       .last_rank_dies = true},
  };

  return cases;
}

}  // namespace hcomm::tcheck
