// The rank in a log line's prefix is the rank of the communicator the thread
// works for, not of whichever communicator the process created last.
#include <gtest/gtest.h>

#include <string>
#include <thread>

#include "core/common/log.hpp"

namespace hcomm::log {
namespace {

// The rank field of the line one WARN writes: "host:pid:RANK HCOMM WARN ...".
std::string logged_rank() {
  testing::internal::CaptureStderr();
  write(HCOMM_LOG_WARN, INIT, "rank probe");
  const std::string line = testing::internal::GetCapturedStderr();
  const size_t end = line.find(" HCOMM ");
  const size_t start = line.rfind(':', end);
  return start == std::string::npos || end == std::string::npos ? line : line.substr(start + 1, end - start - 1);
}

TEST(LogRank, EachScopeShowsItsOwnRankAndTheProcessFallsBackToItsFirst) {
  {
    const RankScope world(3);
    EXPECT_EQ(logged_rank(), "3");
    {
      const RankScope other(0);  // a second communicator, where this process is rank 0
      EXPECT_EQ(logged_rank(), "0");
    }
    EXPECT_EQ(logged_rank(), "3");  // back in the first communicator's call
  }
  // Outside any call (a service thread, say): the first communicator's rank.
  std::string from_thread;
  std::thread([&] { from_thread = logged_rank(); }).join();
  EXPECT_EQ(from_thread, "3");
  EXPECT_EQ(logged_rank(), "3");
}

}  // namespace
}  // namespace hcomm::log
