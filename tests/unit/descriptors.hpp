// What the tests that flood a listener with connections share.
#pragma once

#include <fcntl.h>
#include <sys/resource.h>

namespace hcomm::test {

// Descriptors this process has open (counted without opening one).
inline long open_descriptors() {
  rlimit limit{};
  ::getrlimit(RLIMIT_NOFILE, &limit);
  long open = 0;
  for (rlim_t fd = 0; fd < limit.rlim_cur; ++fd) open += ::fcntl(static_cast<int>(fd), F_GETFD) != -1;
  return open;
}

}  // namespace hcomm::test
