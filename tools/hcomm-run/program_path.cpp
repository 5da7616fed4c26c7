#include "program_path.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string_view>

#include "launch_options.hpp"

namespace hcomm::run {
namespace {

enum class FileKind { Missing, Directory, NotExecutable, Executable };

FileKind classify(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return FileKind::Missing;
  if (S_ISDIR(st.st_mode)) return FileKind::Directory;
  if (!S_ISREG(st.st_mode) || ::access(path.c_str(), X_OK) != 0) return FileKind::NotExecutable;
  return FileKind::Executable;
}

std::string search_path() {
  if (const char* path = std::getenv("PATH")) return path;
  const size_t len = ::confstr(_CS_PATH, nullptr, 0);
  std::string fallback(len, '\0');
  ::confstr(_CS_PATH, fallback.data(), len);
  fallback.resize(len > 0 ? len - 1 : 0);
  return fallback;
}

}  // namespace

std::string resolve_program(const std::string& name) {
  if (name.find('/') != std::string::npos) {
    switch (classify(name)) {
      case FileKind::Executable:
        return name;
      case FileKind::Missing:
        throw UsageError("program '" + name + "' does not exist");
      case FileKind::Directory:
        throw UsageError("program '" + name + "' is a directory");
      case FileKind::NotExecutable:
        throw UsageError("program '" + name + "' is not an executable file (check its permissions)");
    }
  }
  bool found_unusable = false;
  const std::string path = search_path();
  for (size_t begin = 0; begin <= path.size();) {
    size_t end = path.find(':', begin);
    if (end == std::string::npos) end = path.size();
    const std::string dir = end == begin ? "." : path.substr(begin, end - begin);  // empty entry: current folder
    const std::string candidate = dir + "/" + name;
    const FileKind kind = classify(candidate);
    if (kind == FileKind::Executable) return candidate;
    found_unusable |= kind == FileKind::NotExecutable;
    begin = end + 1;
  }
  if (found_unusable) throw UsageError("program '" + name + "' was found in PATH but is not executable");
  throw UsageError("program '" + name + "' was not found in PATH");
}

}  // namespace hcomm::run
