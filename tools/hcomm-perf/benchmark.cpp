#include "benchmark.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

#include "algorithms.hpp"
#include "device_memory.hpp"

namespace hcomm::perf {
namespace {

constexpr size_t kAlignment = 64;
constexpr size_t kPage = 4096;  // registration shares whole pages

size_t round_up(size_t bytes, size_t to) { return std::max(to, (bytes + to - 1) / to * to); }

// The middle element (the upper one of an even count); reorders `times`.
double median(std::vector<double>& times) {
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return times[times.size() / 2];
}

std::vector<SweepPoint> sweep_for(const Options& options, const Collective& collective) {
  if (!collective.uses_data()) return {{0, 0}};
  return size_sweep(options.min_bytes, options.max_bytes, options.step_factor, dtype_info(options.dtype).size);
}

// The layout of the largest call, which sizes the buffers.
Layout largest_layout(const Options& options, const Collective& collective, const DataSpec& spec,
                      const std::vector<SweepPoint>& points) {
  size_t count = 0;
  for (const SweepPoint& p : points) count = std::max(count, p.count);
  return collective.layout(spec, count, options.inplace);
}

// A store to every cache line of the buffer, each byte keeping its value:
// the lines are this rank's, modified, as after the computation that made
// the data. The last byte too: a buffer that starts inside a line ends in one
// that the 64-byte steps may miss.
void touch_lines(void* data, size_t bytes) {
  auto* bytes_of = static_cast<volatile unsigned char*>(data);
  for (size_t i = 0; i < bytes; i += 64) bytes_of[i] = bytes_of[i];
  if (bytes) bytes_of[bytes - 1] = bytes_of[bytes - 1];
}

}  // namespace

Buffer::Buffer(size_t bytes, Buffers kind, hcomm_comm_t comm, Memory memory)
    : kind_(kind), comm_(comm), memory_(memory) {
  if (memory_ == Memory::Cuda && kind_ == Buffers::Alloc) {
    check(hcomm_mem_alloc_device(&data_, std::max<size_t>(bytes, 1)), "hcomm_mem_alloc_device");
    return;
  }
  if (memory_ == Memory::Cuda) {
    data_ = device::allocate(std::max<size_t>(bytes, 1));
    return;
  }
  if (kind_ == Buffers::Alloc) {
    check(hcomm_mem_alloc(&data_, round_up(bytes, kAlignment)), "hcomm_mem_alloc");
    return;
  }
  const size_t rounded = round_up(bytes, kind_ == Buffers::Register ? kPage : kAlignment);
  data_ = std::aligned_alloc(kind_ == Buffers::Register ? kPage : kAlignment, rounded);
  if (!data_)
    throw std::runtime_error("cannot allocate a buffer of " + std::to_string(bytes) +
                             " bytes (hcomm-perf needs three of --maxbytes per rank)");
  if (kind_ != Buffers::Register) return;
  if (const hcomm_result_t result = hcomm_mem_register(comm_, data_, rounded, &handle_); result != HCOMM_SUCCESS) {
    std::free(data_);
    check(result, "hcomm_mem_register");
  }
}

// A failure here is not thrown: the benchmark's own result or error matters more.
Buffer::~Buffer() {
  if (memory_ == Memory::Cuda && kind_ == Buffers::Malloc) {
    device::release(data_);
    return;
  }
  switch (kind_) {
    case Buffers::Alloc:
      hcomm_mem_free(data_);
      return;
    case Buffers::Register:
      hcomm_mem_deregister(comm_, handle_);
      [[fallthrough]];
    case Buffers::Malloc:
      std::free(data_);
      return;
  }
}

Benchmark::Benchmark(const Options& options, const Collective& collective, const Communicator& comm)
    : options_(options),
      collective_(collective),
      comm_(comm),
      coll_(coll_of(collective.name)),
      elem_size_(dtype_info(options.dtype).size),
      spec_{.dtype = options.dtype, .op = options.op, .nranks = comm.size(), .rank = comm.rank(), .root = options.root},
      points_(sweep_for(options, collective)),
      largest_(largest_layout(options, collective, spec_, points_)),
      input_(largest_.input * elem_size_, options.buffers, comm.get(), options.memory),
      recv_(largest_.buffer * elem_size_, options.buffers, comm.get(), options.memory),
      expected_(largest_.result * elem_size_),
      host_input_(options.memory == Memory::Cuda ? largest_.input * elem_size_ : 0),
      host_recv_(options.memory == Memory::Cuda ? largest_.buffer * elem_size_ : 0) {
  call_s_.reserve(static_cast<size_t>(options.min_time_ms ? std::max(options.iters, kMaxTimedIterations) : options.iters));
}

Row Benchmark::measure(const SweepPoint& point, const std::string& algorithm) {
  try {
    return measure_point(point, algorithm);
  } catch (const CallError& e) {
    throw CallError(std::string(e.what()) + " (" + std::string(collective_.name) + " of " +
                    std::to_string(point.bytes) + " B)");
  }
}

Row Benchmark::measure_point(const SweepPoint& point, const std::string& algorithm) {
  layout_ = collective_.layout(spec_, point.count, options_.inplace);
  if (collective_.uses_data()) {
    collective_.fill(spec_, on_device() ? host_input_.data() : input_.data(), expected_.data(), point.count);
    if (on_device()) device::to_device(input_.data(), host_input_.data(), layout_.input * elem_size_);
  }
  // Forced for the timed calls only, not for the allreduces of the results below.
  if (!algorithm.empty()) force(comm_, coll_, algorithm);
  const std::string used = query(comm_, coll_, point.count, options_.dtype);
  check(hcomm_barrier(comm_.get(), nullptr), "hcomm_barrier");

  uint64_t wrong = 0;
  const auto call = [&](int iteration) {
    double call_s = 0;
    const Mismatch mismatch = iterate(point, call_s);
    if (mismatch.wrong > 0 && wrong == 0) report_wrong(point, iteration, mismatch);
    wrong += mismatch.wrong;
    return call_s;
  };
  call_s_.clear();
  for (int i = 0; i < options_.warmup; ++i) call_s_.push_back(call(i));  // checked, and timed only to size the run
  const int iters = timed_iterations();
  call_s_.clear();
  for (int i = 0; i < iters; ++i) call_s_.push_back(call(options_.warmup + i));

  if (!algorithm.empty()) force(comm_, coll_, "");

  double times_us[2] = {0, 0};  // average, median
  for (double t : call_s_) times_us[0] += t;
  times_us[0] *= 1e6 / static_cast<double>(call_s_.size());
  times_us[1] = median(call_s_) * 1e6;
  double slowest_us[2];
  check(hcomm_allreduce(times_us, slowest_us, 2, HCOMM_FLOAT64, HCOMM_MAX, comm_.get(), nullptr),
        "hcomm_allreduce (of the times)");
  Row row{.bytes = point.bytes, .count = point.count, .time_us = slowest_us[0], .median_us = slowest_us[1],
          .iterations = iters, .algorithm = used};
  check(hcomm_allreduce(&wrong, &row.wrong, 1, HCOMM_UINT64, HCOMM_SUM, comm_.get(), nullptr),
        "hcomm_allreduce (of the wrong-element counts)");
  const size_t moved = collective_.bytes_moved(point.count, elem_size_, comm_.size());
  row.algbw_gbps = row.time_us > 0 ? static_cast<double>(moved) / (row.time_us * 1e3) : 0;
  row.busbw_gbps = row.algbw_gbps * collective_.bus_factor(comm_.size());
  return row;
}

// -n, or with --min-time as many as fill that time at the warm-up's median
// call (the slowest rank's, so that every rank makes as many calls).
int Benchmark::timed_iterations() {
  if (options_.min_time_ms == 0) return options_.iters;
  const double local_s = median(call_s_);
  double slowest_s = 0;
  check(hcomm_allreduce(&local_s, &slowest_s, 1, HCOMM_FLOAT64, HCOMM_MAX, comm_.get(), nullptr),
        "hcomm_allreduce (of the warm-up's median call)");
  const double fill = slowest_s > 0 ? std::ceil(options_.min_time_ms * 1e-3 / slowest_s) : kMaxTimedIterations;
  return static_cast<int>(std::clamp<double>(fill, options_.iters, std::max(options_.iters, kMaxTimedIterations)));
}

// With checking, the result starts as the complement of the expected
// result, so that an element the call did not write is wrong. In place, the
// input is then restored where the layout puts it (the last call overwrote
// it); with --fresh-inputs every line of the input is written. Only the call
// itself is timed. A checked call starts after a barrier, as OSU's do: the
// ranks' checks take different times (a gather's root checks everything,
// the others nothing), and a rank that started early would count its
// peers' checks in its call. Unchecked calls run back to back.
// Device buffers are prepared and checked through their host copies: the
// complement goes there and then to the device, the result comes back there.
Mismatch Benchmark::iterate(const SweepPoint& point, double& elapsed_s) {
  auto* buffer = static_cast<unsigned char*>(recv_.data());
  void* recv = buffer + layout_.recv_offset * elem_size_;
  void* send = layout_.in_place ? buffer + layout_.send_offset * elem_size_ : input_.data();
  void* checked = static_cast<unsigned char*>(host_view_of_recv()) + layout_.recv_offset * elem_size_;
  const size_t result_bytes = layout_.result * elem_size_;
  const size_t input_bytes = layout_.input * elem_size_;
  if (options_.check) {
    write_complement(checked, expected_.data(), result_bytes);
    if (on_device()) device::to_device(recv, checked, result_bytes);
  }
  if (layout_.in_place && on_device())
    device::within_device(send, input_.data(), input_bytes);
  else if (layout_.in_place)
    std::memcpy(send, input_.data(), input_bytes);
  else if (options_.fresh_inputs && on_device())
    device::to_device(send, host_input_.data(), input_bytes);
  else if (options_.fresh_inputs)
    touch_lines(send, input_bytes);
  if (options_.check) check(hcomm_barrier(comm_.get(), nullptr), "hcomm_barrier");
  const CallArgs args{.send = send,
                      .recv = recv,
                      .count = point.count,
                      .dtype = options_.dtype,
                      .op = options_.op,
                      .root = options_.root,
                      .comm = comm_.get(),
                      .stream = options_.stream ? device::stream() : nullptr};
  const auto start = std::chrono::steady_clock::now();
  run_call(args);
  elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!options_.check || !collective_.uses_data()) return {};
  if (on_device()) device::to_host(checked, recv, result_bytes);
  return compare_elements(checked, expected_.data(), layout_.result, elem_size_);
}

void Benchmark::run_call(const CallArgs& args) const {
  if (options_.blocking) {
    check(collective_.call(args), collective_.call_name);
    if (args.stream) device::synchronize(args.stream);  // the call's work is done when its stream is
    return;
  }
  hcomm_request_t request = nullptr;
  check(collective_.start(args, &request), collective_.start_name);
  check(hcomm_wait(request), "hcomm_wait");
}

// Told for the first wrong iteration of each size, by the rank that saw it.
void Benchmark::report_wrong(const SweepPoint& point, int iteration, const Mismatch& mismatch) const {
  const bool warmup = iteration < options_.warmup;
  std::fprintf(stderr,
               "hcomm-perf: rank %d: %s of %zu B, %s %d: %zu of %zu elements wrong; element %zu is %.17g, "
               "expected %.17g\n",
               comm_.rank(), std::string(collective_.name).c_str(), point.bytes,
               warmup ? "warm-up iteration" : "iteration", warmup ? iteration : iteration - options_.warmup,
               mismatch.wrong, layout_.result, mismatch.first_index,
               element_value(options_.dtype,
                             static_cast<unsigned char*>(host_view_of_recv()) + layout_.recv_offset * elem_size_,
                             mismatch.first_index),
               element_value(options_.dtype, expected_.data(), mismatch.first_index));
}

}  // namespace hcomm::perf
