// Measures one collective over the size sweep: per size, a barrier, the
// warm-up and timed iterations, each result checked element by element, then
// the slowest rank's average (and median) time and the wrong elements of all
// ranks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "collectives.hpp"
#include "communicator.hpp"
#include "options.hpp"

namespace hcomm::perf {

// One row of the result table, the same on every rank.
struct Row {
  size_t bytes;
  size_t count;
  double time_us;    // the slowest rank's average over the timed iterations
  double median_us;  // the slowest rank's median call: a call the machine held up moves it not at all
  double algbw_gbps;
  double busbw_gbps;
  uint64_t wrong;         // wrong elements, summed over ranks and iterations
  int iterations;         // timed ones: -n, or more with --min-time
  std::string algorithm;  // the one the library used (hcomm_comm_query_algorithm)
};

// A buffer of the kind --buffers names (malloc'd, 64-byte aligned, by
// default) in the memory --memory names: freed, and deregistered, while the
// communicator lives.
class Buffer {
 public:
  explicit Buffer(size_t bytes, Buffers kind = Buffers::Malloc, hcomm_comm_t comm = nullptr,
                  Memory memory = Memory::Host);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  void* data() const { return data_; }

 private:
  Buffers kind_;
  hcomm_comm_t comm_;
  Memory memory_;
  void* data_ = nullptr;
  void* handle_ = nullptr;  // of the registration
};

// --min-time's most timed iterations per size.
inline constexpr int kMaxTimedIterations = 100000;

class Benchmark {
 public:
  Benchmark(const Options& options, const Collective& collective, const Communicator& comm);

  const std::vector<SweepPoint>& points() const { return points_; }
  // Collective across all ranks: every rank measures the same point.
  // `algorithm` is forced for the timed calls (empty: the library's choice);
  // where it does not serve the point, the library's choice runs.
  Row measure(const SweepPoint& point, const std::string& algorithm = "");

 private:
  Row measure_point(const SweepPoint& point, const std::string& algorithm);
  int timed_iterations();
  // Runs one call of the collective, returns what was wrong in its result on
  // this rank and sets elapsed_s to the call's time.
  Mismatch iterate(const SweepPoint& point, double& elapsed_s);
  void run_call(const CallArgs& args) const;
  void report_wrong(const SweepPoint& point, int iteration, const Mismatch& mismatch) const;
  bool on_device() const { return options_.memory == Memory::Cuda; }
  // Where the receive buffer's contents are read on the host.
  void* host_view_of_recv() const { return on_device() ? host_recv_.data() : recv_.data(); }

  const Options& options_;
  const Collective& collective_;
  const Communicator& comm_;
  hcomm_coll_t coll_;
  size_t elem_size_;
  DataSpec spec_;  // this rank's part in every call
  std::vector<SweepPoint> points_;
  Layout largest_;   // of the largest call: sizes the buffers
  Layout layout_;    // of the size being measured
  Buffer input_;     // this rank's data, as filled
  Buffer recv_;      // the receive buffer (which holds the input too, in place)
  Buffer expected_;  // the exact result
  // With --memory cuda, input_ and recv_ are on the device and these are
  // their host copies, where the input is filled and the result checked.
  Buffer host_input_;
  Buffer host_recv_;
  std::vector<double> call_s_;  // the timed calls' times, kept for the median
};

}  // namespace hcomm::perf
