// The collectives hcomm-perf measures: one table row each, saying how to call
// it, what data it needs, where that data lies, and how to turn its time into
// bandwidth.
#pragma once

#include <string_view>
#include <vector>

#include "hcomm/hcomm.h"
#include "values.hpp"

namespace hcomm::perf {

struct CallArgs {
  const void* send;
  void* recv;
  size_t count;
  hcomm_dtype_t dtype;
  hcomm_op_t op;
  int root;
  hcomm_comm_t comm;
  void* stream = nullptr;  // the blocking form's stream: NULL, or a CUDA stream (--stream)
};

// Where one call's data lies on this rank, in elements of the dtype. The
// receive buffer holds `buffer` elements; recvbuf is the receive buffer +
// recv_offset, and the result (`result` elements, what fill writes as the
// expected data) lies there. When in_place, sendbuf is the receive buffer +
// send_offset and the input is copied there before every call; otherwise
// sendbuf is the input buffer.
struct Layout {
  size_t input;  // the elements fill writes as this rank's input
  size_t buffer;
  bool in_place;  // in place on this rank (a rooted collective is in place on its root only)
  size_t send_offset;
  size_t recv_offset;
  size_t result;  // 0 where this rank receives nothing
};

struct Collective {
  std::string_view name;
  const char* call_name;   // the blocking API function, for messages
  const char* start_name;  // the nonblocking one
  bool uses_op;
  bool uses_root;
  // Bytes that algorithm bandwidth divides by the time: the message as
  // nccl-tests counts it (the whole n*count for the collectives of per-rank
  // blocks).
  size_t (*bytes_moved)(size_t count, size_t elem_size, int nranks);
  // Bus bandwidth = algorithm bandwidth * this factor (as nccl-tests counts
  // it), comparable with the hardware's link bandwidth whatever the algorithm.
  double (*bus_factor)(int nranks);
  // Writes this rank's input and the expected result (layout's input and
  // result elements); null for a collective that moves no data (which then
  // runs at one size, 0).
  void (*fill)(const DataSpec& spec, void* input, void* expected, size_t count);
  // spec.dtype and spec.op do not matter here.
  Layout (*layout)(const DataSpec& spec, size_t count, bool in_place);
  hcomm_result_t (*call)(const CallArgs& args);
  hcomm_result_t (*start)(const CallArgs& args, hcomm_request_t* request);
  // Reduces in rank order (scan, exscan): every op but AVG.
  bool rank_order = false;

  bool uses_data() const { return fill != nullptr; }
};

std::vector<std::string_view> collective_names();
// The row of `name`, one of collective_names().
const Collective& find_collective(std::string_view name);

}  // namespace hcomm::perf
