#include "proc_self.hpp"

#include <dirent.h>
#include <unistd.h>

#include <fstream>

#include "failure.hpp"

namespace hcomm::tcheck {

namespace {

constexpr const char* kShmPrefix = "/dev/shm/";
constexpr const char* kDeletedSuffix = " (deleted)";

// Entries of a /proc folder, without the descriptor that reads it.
std::vector<std::string> list_dir(const std::string& path) {
  std::vector<std::string> names;
  DIR* dir = ::opendir(path.c_str());
  if (!dir) TCHECK_FAIL("cannot read %s", path.c_str());
  std::string own_fd = std::to_string(::dirfd(dir));
  while (dirent* entry = ::readdir(dir))
    if (entry->d_name[0] != '.' && entry->d_name != own_fd) names.push_back(entry->d_name);
  ::closedir(dir);
  return names;
}

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::vector<std::string> open_fds() { return list_dir("/proc/self/fd"); }

std::string fd_target(const std::string& fd) {
  char target[512] = {};
  ssize_t n = ::readlink(("/proc/self/fd/" + fd).c_str(), target, sizeof target - 1);
  return n > 0 ? std::string(target, static_cast<size_t>(n)) : "?";
}

size_t thread_count() { return list_dir("/proc/self/task").size(); }

std::vector<std::string> shm_mappings() {
  std::vector<std::string> found;
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    size_t at = line.find(kShmPrefix);
    if (at != std::string::npos) found.push_back(line.substr(at));
  }
  return found;
}

std::set<std::string> shm_files_in_use() {
  std::vector<std::string> paths = shm_mappings();
  for (const std::string& fd : open_fds()) paths.push_back(fd_target(fd));
  std::set<std::string> files;
  for (const std::string& path : paths)
    if (path.rfind(kShmPrefix, 0) == 0 && !ends_with(path, kDeletedSuffix)) files.insert(path);
  return files;
}

double runnable_seconds() {
  double total_ns = 0;
  for (const std::string& task : list_dir("/proc/self/task")) {
    std::ifstream stat("/proc/self/task/" + task + "/schedstat");
    double on_cpu_ns = 0;
    double waiting_ns = 0;
    if (stat >> on_cpu_ns >> waiting_ns) total_ns += on_cpu_ns + waiting_ns;
  }
  return total_ns * 1e-9;
}

}  // namespace hcomm::tcheck
