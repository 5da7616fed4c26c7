// Derived datatypes: made from other types (contiguous, vector, indexed,
// struct, resized, dup), committed and freed; their extents and sizes;
// MPI_Pack / MPI_Unpack. A derived type is its layout (datatypes.hpp):
// every byte run of one element, so that packing is a list of copies.
// Handles follow MPICH: 0x8c000005..0x8c000007 (the direct ones after the
// pair types), then 0xcc000000 onwards; a freed handle is given out again.
#include <algorithm>
#include <climits>
#include <map>

#include "mpi_compat/src/datatypes.hpp"
#include "mpi_compat/src/state.hpp"

namespace hcomm::mpi {
namespace {

struct Derived {
  LayoutPtr layout;
  TypeInfo info;  // what communication sees
  bool committed = false;
};
std::map<MPI_Datatype, Derived> derived;
std::vector<MPI_Datatype> freed_handles;
unsigned next_direct = 5, next_indirect = 0;

MPI_Datatype new_handle() {
  if (!freed_handles.empty()) {
    const MPI_Datatype h = freed_handles.back();
    freed_handles.pop_back();
    return h;
  }
  if (next_direct < 8) return static_cast<MPI_Datatype>(0x8c000000u + next_direct++);
  return static_cast<MPI_Datatype>(0xcc000000u + next_indirect++);
}

MPI_Datatype add_type(Layout layout, bool committed = false) {
  const MPI_Datatype h = new_handle();
  Derived& d = derived[h];
  d.layout = std::make_shared<const Layout>(std::move(layout));
  d.info = {h, "a derived datatype", d.layout->size, static_cast<size_t>(d.layout->extent), 0, HCOMM_NUM_DTYPES};
  d.committed = committed;
  return h;
}

// n elements of a type, from disp bytes on: one block of a new type.
struct Block {
  MPI_Aint disp;
  size_t n;
  LayoutPtr type;
};

void add_run(std::vector<Layout::Run>& runs, MPI_Aint offset, size_t bytes) {
  if (!bytes) return;
  if (!runs.empty() && runs.back().offset + static_cast<MPI_Aint>(runs.back().bytes) == offset)
    runs.back().bytes += bytes;
  else
    runs.push_back({offset, bytes});
}

// The layout of blocks in order. A struct (pad) rounds its extent up to the
// largest alignment of its types, as C pads a struct and MPICH does.
Layout build(const std::vector<Block>& blocks, bool pad) {
  Layout l;
  bool any = false;
  MPI_Aint ub = 0, true_ub = 0;
  for (const Block& b : blocks) {
    if (!b.n) continue;
    const Layout& t = *b.type;
    for (size_t j = 0; j < b.n; ++j)
      for (const Layout::Run& run : t.runs)
        add_run(l.runs, b.disp + static_cast<MPI_Aint>(j) * t.extent + run.offset, run.bytes);
    if (t.basics.size() == 1)
      add_basics(l.basics, t.basics[0].bytes, b.n * t.basics[0].count);
    else
      for (size_t j = 0; j < b.n; ++j)
        for (const Layout::Basics& e : t.basics) add_basics(l.basics, e.bytes, e.count);
    const MPI_Aint last = static_cast<MPI_Aint>(b.n - 1) * t.extent;
    const MPI_Aint lo = b.disp + std::min<MPI_Aint>(0, last), hi = b.disp + std::max<MPI_Aint>(0, last);
    l.lb = any ? std::min(l.lb, lo + t.lb) : lo + t.lb;
    ub = any ? std::max(ub, hi + t.lb + t.extent) : hi + t.lb + t.extent;
    l.true_lb = any ? std::min(l.true_lb, lo + t.true_lb) : lo + t.true_lb;
    true_ub = any ? std::max(true_ub, hi + t.true_lb + t.true_extent) : hi + t.true_lb + t.true_extent;
    l.size += b.n * t.size;
    l.align = std::max(l.align, t.align);
    l.basic = !any || l.basic == t.basic ? t.basic : MPI_DATATYPE_NULL;
    any = true;
  }
  l.extent = ub - l.lb;
  l.true_extent = true_ub - l.true_lb;
  const MPI_Aint align = static_cast<MPI_Aint>(l.align);
  if (pad && l.extent % align) l.extent += align - l.extent % align;
  return l;
}

// A negative count or blocklength, as MPICH classes it.
void check_count(int count, const char* argument) {
  if (count < 0) fail(MPI_ERR_COUNT, "%s is %d, below 0", argument, count);
}

void check_array(int count, const void* array, const char* argument) {
  if (count > 0 && !array) fail(MPI_ERR_ARG, "%s is NULL", argument);
}

// Runs a type constructor: checks newtype, and names the result.
template <class Make>
int construct(const char* fn, MPI_Datatype* newtype, Make make) {
  return call(fn, MPI_COMM_WORLD, [&] {
    require_initialized(fn);
    check_out(newtype, "newtype");
    *newtype = add_type(make());
  });
}

// count blocks of blocklength elements of old, block i at displacement(i) bytes.
template <class Displacement, class Length>
Layout blocks_of(int count, MPI_Datatype oldtype, Displacement displacement, Length blocklength) {
  check_count(count, "count");
  LayoutPtr old = layout_of(oldtype, "oldtype");
  std::vector<Block> blocks;
  for (int i = 0; i < count; ++i) {
    check_count(blocklength(i), "a blocklength");
    blocks.push_back({displacement(i), static_cast<size_t>(blocklength(i)), old});
  }
  return build(blocks, false);
}

Layout hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype) {
  return blocks_of(
      count, oldtype, [&](int i) { return i * stride; }, [&](int) { return blocklength; });
}

Layout hindexed(int count, const int* blocklengths, const MPI_Aint* displacements, MPI_Datatype oldtype) {
  check_array(count, blocklengths, "array_of_blocklengths");
  check_array(count, displacements, "array_of_displacements");
  return blocks_of(
      count, oldtype, [&](int i) { return displacements[i]; }, [&](int i) { return blocklengths[i]; });
}

Layout indexed(int count, const int* blocklengths, const int* displacements, MPI_Datatype oldtype) {
  check_array(count, blocklengths, "array_of_blocklengths");
  check_array(count, displacements, "array_of_displacements");
  const MPI_Aint extent = layout_of(oldtype, "oldtype")->extent;
  return blocks_of(
      count, oldtype, [&](int i) { return displacements[i] * extent; }, [&](int i) { return blocklengths[i]; });
}

Layout structure(int count, const int* blocklengths, const MPI_Aint* displacements, const MPI_Datatype* types) {
  check_count(count, "count");
  check_array(count, blocklengths, "array_of_blocklengths");
  check_array(count, displacements, "array_of_displacements");
  check_array(count, types, "array_of_types");
  std::vector<Block> blocks;
  for (int i = 0; i < count; ++i) {
    check_count(blocklengths[i], "a blocklength");
    blocks.push_back({displacements[i], static_cast<size_t>(blocklengths[i]), layout_of(types[i], "a type")});
  }
  return build(blocks, true);
}

size_t packed_bytes(int count, MPI_Datatype type, const char* argument) {
  check_count(count, argument);
  return static_cast<size_t>(count) * type_of(type).size;
}

void check_position(const int* position, int size, const char* argument) {
  check_out(position, "position");
  if (*position < 0 || *position > size)
    fail(MPI_ERR_ARG, "position is %d, outside 0..%s (%d)", *position, argument, size);
}

}  // namespace

const TypeInfo* derived_type_info(MPI_Datatype type, const char* argument) {
  auto it = derived.find(type);
  if (it == derived.end()) return nullptr;
  if (!it->second.committed)
    fail(MPI_ERR_TYPE, "%s 0x%x is not committed (MPI_Type_commit)", argument, static_cast<unsigned>(type));
  return &it->second.info;
}

LayoutPtr derived_layout(MPI_Datatype type) {
  auto it = derived.find(type);
  return it == derived.end() ? nullptr : it->second.layout;
}

}  // namespace hcomm::mpi

using namespace hcomm::mpi;

HCOMM_MPI_API int PMPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return construct("MPI_Type_contiguous", newtype,
                   [&] { return hvector(count, 1, layout_of(oldtype, "oldtype")->extent, oldtype); });
}
HCOMM_MPI_ALIAS(Type_contiguous)

HCOMM_MPI_API int PMPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype,
                                   MPI_Datatype* newtype) {
  return construct("MPI_Type_vector", newtype, [&] {
    return hvector(count, blocklength, stride * layout_of(oldtype, "oldtype")->extent, oldtype);
  });
}
HCOMM_MPI_ALIAS(Type_vector)

HCOMM_MPI_API int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                                           MPI_Datatype* newtype) {
  return construct("MPI_Type_create_hvector", newtype, [&] { return hvector(count, blocklength, stride, oldtype); });
}
HCOMM_MPI_ALIAS(Type_create_hvector)

HCOMM_MPI_API int PMPI_Type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                                    MPI_Datatype* newtype) {
  return construct("MPI_Type_hvector", newtype, [&] { return hvector(count, blocklength, stride, oldtype); });
}
HCOMM_MPI_ALIAS(Type_hvector)

HCOMM_MPI_API int PMPI_Type_indexed(int count, const int* array_of_blocklengths, const int* array_of_displacements,
                                    MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return construct("MPI_Type_indexed", newtype,
                   [&] { return indexed(count, array_of_blocklengths, array_of_displacements, oldtype); });
}
HCOMM_MPI_ALIAS(Type_indexed)

HCOMM_MPI_API int PMPI_Type_create_hindexed(int count, const int* array_of_blocklengths,
                                            const MPI_Aint* array_of_displacements, MPI_Datatype oldtype,
                                            MPI_Datatype* newtype) {
  return construct("MPI_Type_create_hindexed", newtype,
                   [&] { return hindexed(count, array_of_blocklengths, array_of_displacements, oldtype); });
}
HCOMM_MPI_ALIAS(Type_create_hindexed)

HCOMM_MPI_API int PMPI_Type_hindexed(int count, int* array_of_blocklengths, MPI_Aint* array_of_displacements,
                                     MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return construct("MPI_Type_hindexed", newtype,
                   [&] { return hindexed(count, array_of_blocklengths, array_of_displacements, oldtype); });
}
HCOMM_MPI_ALIAS(Type_hindexed)

HCOMM_MPI_API int PMPI_Type_create_indexed_block(int count, int blocklength, const int* array_of_displacements,
                                                 MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return construct("MPI_Type_create_indexed_block", newtype, [&] {
    check_count(blocklength, "blocklength");
    return indexed(count, std::vector<int>(count > 0 ? count : 0, blocklength).data(), array_of_displacements, oldtype);
  });
}
HCOMM_MPI_ALIAS(Type_create_indexed_block)

HCOMM_MPI_API int PMPI_Type_create_struct(int count, const int* array_of_blocklengths,
                                          const MPI_Aint* array_of_displacements, const MPI_Datatype* array_of_types,
                                          MPI_Datatype* newtype) {
  return construct("MPI_Type_create_struct", newtype,
                   [&] { return structure(count, array_of_blocklengths, array_of_displacements, array_of_types); });
}
HCOMM_MPI_ALIAS(Type_create_struct)

HCOMM_MPI_API int PMPI_Type_struct(int count, int* array_of_blocklengths, MPI_Aint* array_of_displacements,
                                   MPI_Datatype* array_of_types, MPI_Datatype* newtype) {
  return construct("MPI_Type_struct", newtype,
                   [&] { return structure(count, array_of_blocklengths, array_of_displacements, array_of_types); });
}
HCOMM_MPI_ALIAS(Type_struct)

HCOMM_MPI_API int PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent, MPI_Datatype* newtype) {
  return construct("MPI_Type_create_resized", newtype, [&] {
    Layout l = *layout_of(oldtype, "oldtype");
    l.lb = lb;
    l.extent = extent;
    return l;
  });
}
HCOMM_MPI_ALIAS(Type_create_resized)

HCOMM_MPI_API int PMPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return call("MPI_Type_dup", MPI_COMM_WORLD, [&] {
    require_initialized("MPI_Type_dup");
    LayoutPtr old = layout_of(oldtype, "oldtype");
    check_out(newtype, "newtype");
    auto it = derived.find(oldtype);
    *newtype = add_type(*old, it == derived.end() || it->second.committed);
  });
}
HCOMM_MPI_ALIAS(Type_dup)

HCOMM_MPI_API int PMPI_Type_commit(MPI_Datatype* datatype) {
  return call("MPI_Type_commit", MPI_COMM_WORLD, [&] {
    require_initialized("MPI_Type_commit");
    check_out(datatype, "datatype");
    layout_of(*datatype);
    auto it = derived.find(*datatype);
    if (it != derived.end()) it->second.committed = true;
  });
}
HCOMM_MPI_ALIAS(Type_commit)

// Communication already started with the type keeps its layout.
HCOMM_MPI_API int PMPI_Type_free(MPI_Datatype* datatype) {
  return call("MPI_Type_free", MPI_COMM_WORLD, [&] {
    require_initialized("MPI_Type_free");
    check_out(datatype, "datatype");
    layout_of(*datatype);
    if (!derived.erase(*datatype))
      fail(MPI_ERR_TYPE, "datatype 0x%x is predefined and cannot be freed", static_cast<unsigned>(*datatype));
    freed_handles.push_back(*datatype);
    *datatype = MPI_DATATYPE_NULL;
  });
}
HCOMM_MPI_ALIAS(Type_free)

HCOMM_MPI_API int PMPI_Type_size(MPI_Datatype datatype, int* size) {
  return call("MPI_Type_size", MPI_COMM_WORLD, [&] {
    LayoutPtr l = layout_of(datatype);
    check_out(size, "size");
    *size = l->size > INT_MAX ? MPI_UNDEFINED : static_cast<int>(l->size);
  });
}
HCOMM_MPI_ALIAS(Type_size)

HCOMM_MPI_API int PMPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint* lb, MPI_Aint* extent) {
  return call("MPI_Type_get_extent", MPI_COMM_WORLD, [&] {
    LayoutPtr l = layout_of(datatype);
    check_out(lb, "lb");
    check_out(extent, "extent");
    *lb = l->lb;
    *extent = l->extent;
  });
}
HCOMM_MPI_ALIAS(Type_get_extent)

HCOMM_MPI_API int PMPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint* true_lb, MPI_Aint* true_extent) {
  return call("MPI_Type_get_true_extent", MPI_COMM_WORLD, [&] {
    LayoutPtr l = layout_of(datatype);
    check_out(true_lb, "true_lb");
    check_out(true_extent, "true_extent");
    *true_lb = l->true_lb;
    *true_extent = l->true_extent;
  });
}
HCOMM_MPI_ALIAS(Type_get_true_extent)

HCOMM_MPI_API int PMPI_Get_address(const void* location, MPI_Aint* address) {
  return call("MPI_Get_address", MPI_COMM_WORLD, [&] {
    check_out(address, "address");
    *address = reinterpret_cast<MPI_Aint>(location);
  });
}
HCOMM_MPI_ALIAS(Get_address)

HCOMM_MPI_API int PMPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int* size) {
  return call("MPI_Pack_size", comm, [&] {
    comm_of(comm);
    const size_t bytes = packed_bytes(incount, datatype, "incount");
    check_out(size, "size");
    *size = bytes > INT_MAX ? MPI_UNDEFINED : static_cast<int>(bytes);
  });
}
HCOMM_MPI_ALIAS(Pack_size)

HCOMM_MPI_API int PMPI_Pack(const void* inbuf, int incount, MPI_Datatype datatype, void* outbuf, int outsize,
                            int* position, MPI_Comm comm) {
  return call("MPI_Pack", comm, [&] {
    comm_of(comm);
    const size_t bytes = packed_bytes(incount, datatype, "incount");
    if (outsize < 0) fail(MPI_ERR_ARG, "outsize is %d, below 0", outsize);
    check_position(position, outsize, "outsize");
    if (bytes > static_cast<size_t>(outsize - *position))
      fail(MPI_ERR_TRUNCATE, "%zu packed bytes do not fit in outbuf: %d of its %d bytes are left", bytes,
           outsize - *position, outsize);
    check_buffer(outbuf, bytes, "outbuf");
    pack(inbuf, 0, static_cast<size_t>(incount), *layout_of(datatype), static_cast<unsigned char*>(outbuf) + *position);
    *position += static_cast<int>(bytes);
  });
}
HCOMM_MPI_ALIAS(Pack)

HCOMM_MPI_API int PMPI_Unpack(const void* inbuf, int insize, int* position, void* outbuf, int outcount,
                              MPI_Datatype datatype, MPI_Comm comm) {
  return call("MPI_Unpack", comm, [&] {
    comm_of(comm);
    const size_t bytes = packed_bytes(outcount, datatype, "outcount");
    if (insize < 0) fail(MPI_ERR_ARG, "insize is %d, below 0", insize);
    check_position(position, insize, "insize");
    if (bytes > static_cast<size_t>(insize - *position))
      fail(MPI_ERR_TRUNCATE, "%zu packed bytes wanted but inbuf has %d left of its %d", bytes, insize - *position,
           insize);
    check_buffer(inbuf, bytes, "inbuf");
    unpack(static_cast<const unsigned char*>(inbuf) + *position, 0, static_cast<size_t>(outcount), bytes,
           *layout_of(datatype), outbuf);
    *position += static_cast<int>(bytes);
  });
}
HCOMM_MPI_ALIAS(Unpack)
