// Datatypes and operations: what a type's elements occupy in memory and
// how many bytes they move as (packed: the data without its gaps), and the
// HComm dtype and op a reduction maps onto (ops.cpp).
#pragma once

#include <hcomm/hcomm.h>
#include <mpi.h>

#include <array>
#include <cstddef>
#include <memory>
#include <vector>

#include "mpi_compat/src/state.hpp"

namespace hcomm::mpi {

// MPI 3.1's groups of basic types for reductions (section 5.9.2).
enum Category {
  kNone = 0,
  kInteger = 1,
  kFortranInteger = 2,
  kFloating = 4,
  kLogical = 8,
  kComplex = 16,
  kByte = 32,
  kPair = 64
};

struct TypeInfo {
  MPI_Datatype handle;
  const char* name;
  size_t size;           // bytes of data (MPI_Type_size): what an element moves as
  size_t extent;         // bytes from one element to the next (MPI_Type_get_extent)
  int category;          // which reductions MPI defines on it (Category bits)
  hcomm_dtype_t reduce;  // HComm's type for reductions; HCOMM_NUM_DTYPES: none
};

// Where one element's data lies: runs of bytes in typemap order, their
// offsets from the element's start (an element k of a buffer starts at
// k * extent). Packed, an element is its runs one after another (size bytes).
struct Layout {
  struct Run {
    MPI_Aint offset;
    size_t bytes;
  };
  std::vector<Run> runs;
  // Its basic elements in typemap order, in runs of one size: the bytes of
  // each and how many (MPI_Get_elements counts them). A pair type holds two.
  struct Basics {
    size_t bytes;
    size_t count;
  };
  std::vector<Basics> basics;
  size_t size = 0;
  MPI_Aint lb = 0, extent = 0;            // MPI_Type_get_extent
  MPI_Aint true_lb = 0, true_extent = 0;  // MPI_Type_get_true_extent
  size_t align = 1;                       // the largest alignment of its basic types
  // The one basic (predefined) type its data is made of, which predefined
  // ops reduce it as; MPI_DATATYPE_NULL where it has several, or none.
  MPI_Datatype basic = MPI_DATATYPE_NULL;
  // One run that fills the extent: the elements lie packed already.
  bool dense() const { return runs.size() == 1 && runs[0].offset == 0 && runs[0].bytes == static_cast<size_t>(extent); }
};
using LayoutPtr = std::shared_ptr<const Layout>;

// The predefined types by handle (datatypes.cpp), looked up inline, as every
// call looks up its types: MPICH's basic types are 0x4c00SSII (SS their
// size, II an index of their own), its pair types 0x8c000000..0x8c000004.
constexpr size_t kPredefinedSlots = 256 + 5;
constexpr size_t predefined_slot(MPI_Datatype type) {
  const auto h = static_cast<unsigned>(type);
  if ((h & 0xffff0000u) == 0x4c000000u) return h & 0xffu;
  if (h - 0x8c000000u < 5) return 256 + (h - 0x8c000000u);
  return kPredefinedSlots;
}
extern const std::array<const TypeInfo*, kPredefinedSlots + 1> predefined_types;  // the last: none
// A predefined type (a basic or a pair type), or null.
inline const TypeInfo* find_predefined(MPI_Datatype type) {
  const TypeInfo* t = predefined_types[predefined_slot(type)];
  return t && t->handle == type ? t : nullptr;
}

// A committed derived type's TypeInfo, or MPI_ERR_TYPE naming the argument.
const TypeInfo& derived_type_of(MPI_Datatype type, const char* argument);
// The type behind a handle for communication (predefined, or derived and
// committed), or MPI_ERR_TYPE naming the argument. A derived type's size is
// its packed bytes.
inline const TypeInfo& type_of(MPI_Datatype type, const char* argument = "datatype") {
  const TypeInfo* t = find_predefined(type);
  return t ? *t : derived_type_of(type, argument);
}
// count elements of type in bytes as they move (packed); MPI_ERR_COUNT for a
// negative count.
inline size_t bytes_of(int count, MPI_Datatype type, const char* argument = "count") {
  if (count < 0) fail(MPI_ERR_COUNT, "%s is %d, below 0", argument, count);
  return static_cast<size_t>(count) * type_of(type).size;
}
// The layout of any valid type, committed or not; MPI_ERR_TYPE otherwise.
LayoutPtr layout_of(MPI_Datatype type, const char* argument = "datatype");
// A committed derived type's TypeInfo, or null for any other handle (derived.cpp).
const TypeInfo* derived_type_info(MPI_Datatype type, const char* argument);
// A derived type's layout, committed or not, or null (derived.cpp).
LayoutPtr derived_layout(MPI_Datatype type);
// Whether count elements of type lie packed in memory, so HComm can move them in place.
inline bool is_dense(MPI_Datatype type) {
  const TypeInfo* t = find_predefined(type);
  return t ? t->size == t->extent : layout_of(type)->dense();
}
// MPI_ERR_BUFFER for a NULL buffer of a dense type that should hold bytes;
// another type's buffer may be MPI_BOTTOM (NULL), its displacements absolute.
inline void check_data(const void* buf, size_t bytes, MPI_Datatype type, const char* argument) {
  if (is_dense(type)) check_buffer(buf, bytes, argument);
}
// Elements [first, first + count) of a buffer of layout l: packed into out
// (at first * size), or unpacked from in, of which only `bytes` are there
// (a message may end inside an element).
void pack(const void* buf, size_t first, size_t count, const Layout& l, unsigned char* out);
// Appends n basic elements of `bytes` each to basics (merged with a run of
// that size before them).
void add_basics(std::vector<Layout::Basics>& basics, size_t bytes, size_t n);
// The basic elements in `bytes` of a message of elements of layout l: those
// of its whole elements and the whole basic elements of a partial one;
// MPI_UNDEFINED where the bytes end inside a basic element.
MPI_Count basic_elements(const Layout& l, MPI_Count bytes);
// The bytes of the first `count` basic elements of a message of layout l
// (what MPI_Status_set_elements records).
MPI_Count basic_elements_bytes(const Layout& l, MPI_Count count);
void unpack(const unsigned char* in, size_t first, size_t count, size_t bytes, const Layout& l, void* buf);
const char* op_name(MPI_Op op);
// How HComm reduces elements of type with op (ops.cpp): the HComm dtype and
// op, and `scale` HComm elements per MPI element (a derived type that
// predefined ops reduce as its basic type's elements). HComm's built-in ops
// where it has them natively; otherwise a user op: a kernel of this layer
// for a predefined op, the caller's function for an MPI_Op_create op. A type
// whose elements do not lie packed (`packed`) reduces packed copies
// (element k at k * size). `keep` is what the HComm op uses, to hold until
// the call completes. MPI_ERR_OP where MPI does not define op on type (or op
// is no reduction op).
struct Reduction {
  hcomm_dtype_t dtype;
  hcomm_op_t op;
  size_t scale = 1;
  bool packed = false;
  std::shared_ptr<void> keep;
};
Reduction reduction_of(MPI_Datatype type, MPI_Op op);

}  // namespace hcomm::mpi
