#include "output_tagger.hpp"

#include <unistd.h>

#include <cerrno>
#include <utility>

namespace hcomm::run {
namespace {

constexpr size_t kChunkBytes = 64 * 1024;
// A line longer than this is passed on in pieces, each a line of its own, so
// that a rank writing without newlines cannot grow hcomm-run without bound.
constexpr size_t kMaxLineBytes = 64 * 1024;

// hcomm-run's own output may be gone (a closed pipe): the rank's text is then
// dropped, as it would have been had the rank written there itself.
void write_all(int fd, const std::string& text) {
  for (size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

}  // namespace

OutputTagger::OutputTagger(int rank, UniqueFd source, int destination)
    : prefix_("[" + std::to_string(rank) + "] "), source_(std::move(source)), destination_(destination) {}

OutputTagger::ReadResult OutputTagger::read_chunk() {
  char buf[kChunkBytes];
  for (;;) {
    const ssize_t n = ::read(source_.get(), buf, sizeof buf);
    if (n > 0) {
      pending_.append(buf, static_cast<size_t>(n));
      return ReadResult::Data;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return ReadResult::WouldBlock;
    return ReadResult::Closed;
  }
}

void OutputTagger::write_lines(bool flush_partial) {
  std::string out;
  size_t begin = 0;
  for (;;) {
    const size_t newline = pending_.find('\n', begin);
    size_t length = newline - begin;
    if (newline == std::string::npos) {
      if (pending_.size() - begin < kMaxLineBytes) break;
      length = kMaxLineBytes;
    }
    out += prefix_;
    out.append(pending_, begin, length);
    out += '\n';
    begin += length + (newline == std::string::npos ? 0 : 1);
  }
  pending_.erase(0, begin);
  if (flush_partial && !pending_.empty()) {
    out += prefix_ + pending_ + '\n';
    pending_.clear();
  }
  write_all(destination_, out);
}

void OutputTagger::pump() {
  if (!open()) return;
  const ReadResult result = read_chunk();
  write_lines(result == ReadResult::Closed);
  if (result == ReadResult::Closed) source_.reset();
}

void OutputTagger::finish() {
  if (!open()) return;
  while (read_chunk() == ReadResult::Data) {
  }
  write_lines(true);
  source_.reset();
}

}  // namespace hcomm::run
