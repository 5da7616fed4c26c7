// --tag-output: one rank's stdout or stderr arrives through a pipe, and each
// whole line goes on to hcomm-run's own stream prefixed with "[rank] ".
#pragma once

#include <string>

#include "unique_fd.hpp"

namespace hcomm::run {

class OutputTagger {
 public:
  // `source` is the non-blocking read end of the rank's pipe.
  OutputTagger(int rank, UniqueFd source, int destination);

  int source_fd() const { return source_.get(); }  // -1 once closed
  bool open() const { return source_.valid(); }

  // Reads one chunk of what the pipe holds and passes on the whole lines.
  void pump();
  // After the rank has ended: passes on what is left, the last partial line
  // with a newline added, and closes. Does not wait for the pipe's end of
  // file, which a child the rank left behind could hold off forever.
  void finish();

 private:
  enum class ReadResult { Data, WouldBlock, Closed };
  ReadResult read_chunk();
  void write_lines(bool flush_partial);

  std::string prefix_;
  UniqueFd source_;
  int destination_;
  std::string pending_;  // bytes read but not yet written: at most one partial line
};

}  // namespace hcomm::run
