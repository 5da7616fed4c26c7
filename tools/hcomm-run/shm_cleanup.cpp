#include "shm_cleanup.hpp"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace hcomm::run {
namespace {

constexpr const char* kShmDir = "/dev/shm";
// The regions of libfabric's shm provider as the ofi transport names them.
constexpr std::string_view kSegmentPrefixes[] = {"hcomm-ofi-"};

// The pid in "<prefix><pid>-<anything>", if the name has that shape.
std::optional<pid_t> segment_owner(std::string_view name) {
  const auto prefix = std::find_if(std::begin(kSegmentPrefixes), std::end(kSegmentPrefixes),
                                   [&](std::string_view p) { return name.starts_with(p); });
  if (prefix == std::end(kSegmentPrefixes)) return std::nullopt;
  name.remove_prefix(prefix->size());
  pid_t pid = 0;
  const auto [end, error] = std::from_chars(name.data(), name.data() + name.size(), pid);
  if (error != std::errc() || end == name.data() || end == name.data() + name.size() || *end != '-')
    return std::nullopt;
  return pid;
}

}  // namespace

size_t remove_shm_segments(const std::vector<pid_t>& pids) {
  const std::unique_ptr<DIR, int (*)(DIR*)> dir(::opendir(kShmDir), &::closedir);
  if (!dir) return 0;
  size_t removed = 0;
  while (const dirent* entry = ::readdir(dir.get())) {
    const std::optional<pid_t> owner = segment_owner(entry->d_name);
    if (!owner || std::find(pids.begin(), pids.end(), *owner) == pids.end()) continue;
    if (::unlinkat(::dirfd(dir.get()), entry->d_name, 0) == 0) ++removed;
  }
  return removed;
}

}  // namespace hcomm::run
