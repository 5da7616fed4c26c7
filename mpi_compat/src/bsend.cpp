// Buffered sends: MPI_Buffer_attach lends the layer memory; MPI_Bsend,
// MPI_Ibsend and each start of MPI_Bsend_init's request copy the message
// into it and send from the copy in the background, so they return at
// once. Each message takes its bytes plus MPI_BSEND_OVERHEAD of the buffer,
// as MPICH counts, until it has left.
#include <cstring>
#include <map>

#include "mpi_compat/src/datatypes.hpp"
#include "mpi_compat/src/requests.hpp"

namespace hcomm::mpi {
namespace {

struct Attached {
  unsigned char* base = nullptr;
  size_t size = 0;
  std::map<size_t, size_t> used;  // offset -> bytes taken, of messages not yet gone
} attached;

size_t bytes_in_use() {
  size_t n = 0;
  for (const auto& [offset, taken] : attached.used) n += taken;
  return n;
}

// The offset of the first gap of `bytes` in the buffer, or MPI_ERR_BUFFER.
size_t reserve(size_t bytes) {
  size_t at = 0;
  for (const auto& [offset, taken] : attached.used) {
    if (offset - at >= bytes) break;
    at = offset + taken;
  }
  if (attached.size < at || attached.size - at < bytes)
    fail(MPI_ERR_BUFFER,
         "no room for a message of %zu bytes (with MPI_BSEND_OVERHEAD) in the buffer of MPI_Buffer_attach: %zu "
         "bytes, %zu of them held by messages still on their way",
         bytes, attached.size, bytes_in_use());
  attached.used[at] = bytes;
  return at;
}

// Copies the message into the attached buffer and sends it from there.
void buffered_send(MPI_Comm comm, const void* buf, int count, MPI_Datatype type, int dest, int tag) {
  const Comm& c = comm_of(comm);
  const size_t bytes = check_send(c, buf, count, type, dest, tag);
  if (dest == MPI_PROC_NULL) return;
  progress();  // messages that have left give their room back
  const size_t offset = reserve(bytes + MPI_BSEND_OVERHEAD);
  unsigned char* copy = attached.base + offset;
  if (is_dense(type) && bytes)
    std::memcpy(copy, buf, bytes);
  else
    pack(buf, 0, static_cast<size_t>(count), *layout_of(type), copy);
  auto r = std::make_unique<Request>();
  r->comm = comm;
  r->then = [offset] { attached.used.erase(offset); };
  try {
    start_send(*r, c, copy, static_cast<int>(bytes), MPI_BYTE, dest, tag, false);
  } catch (...) {
    attached.used.erase(offset);
    throw;
  }
  add_freed(std::move(r));
}

}  // namespace
}  // namespace hcomm::mpi

using namespace hcomm::mpi;

HCOMM_MPI_API int PMPI_Buffer_attach(void* buffer, int size) {
  return call("MPI_Buffer_attach", MPI_COMM_WORLD, [&] {
    require_initialized("MPI_Buffer_attach");
    if (size < 0) fail(MPI_ERR_ARG, "size is %d, below 0", size);
    check_buffer(buffer, static_cast<size_t>(size), "buffer");
    if (size < MPI_BSEND_OVERHEAD)
      fail(MPI_ERR_BUFFER, "size is %d, below MPI_BSEND_OVERHEAD (%d): no message would fit", size, MPI_BSEND_OVERHEAD);
    if (attached.base)
      fail(MPI_ERR_BUFFER, "a buffer is attached already (%zu bytes): MPI_Buffer_detach it first", attached.size);
    attached.base = static_cast<unsigned char*>(buffer);
    attached.size = static_cast<size_t>(size);
  });
}
HCOMM_MPI_ALIAS(Buffer_attach)

HCOMM_MPI_API int PMPI_Buffer_detach(void* buffer_addr, int* size) {
  return call("MPI_Buffer_detach", MPI_COMM_WORLD, [&] {
    require_initialized("MPI_Buffer_detach");
    check_out(buffer_addr, "buffer_addr");
    check_out(size, "size");
    poll_until("MPI_Buffer_detach", [] { return attached.used.empty(); });
    *static_cast<void**>(buffer_addr) = attached.base;
    *size = static_cast<int>(attached.size);
    attached = Attached{};
  });
}
HCOMM_MPI_ALIAS(Buffer_detach)

HCOMM_MPI_API int PMPI_Bsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  return call("MPI_Bsend", comm, [&] { buffered_send(comm, buf, count, datatype, dest, tag); });
}
HCOMM_MPI_ALIAS(Bsend)

// The request is done at once: the message is in the attached buffer.
HCOMM_MPI_API int PMPI_Ibsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                              MPI_Request* request) {
  return call("MPI_Ibsend", comm, [&] {
    if (!request) fail(MPI_ERR_ARG, "request is NULL");
    buffered_send(comm, buf, count, datatype, dest, tag);
    auto r = std::make_unique<Request>();
    r->comm = comm;
    *request = add_request(std::move(r));
  });
}
HCOMM_MPI_ALIAS(Ibsend)

HCOMM_MPI_API int PMPI_Bsend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                                  MPI_Request* request) {
  return persistent(
      "MPI_Bsend_init", comm, request, [=](const Comm& c) { check_send(c, buf, count, datatype, dest, tag); },
      [=](Request&, const Comm&) { buffered_send(comm, buf, count, datatype, dest, tag); });
}
HCOMM_MPI_ALIAS(Bsend_init)
