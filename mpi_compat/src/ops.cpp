// Reduction operations: which ops MPI defines on which types, how each
// reduces on HComm, user ops (MPI_Op_create, MPI_Op_free,
// MPI_Op_commutative) and MPI_Reduce_local.
//
// A predefined op on a type HComm reduces natively (SUM, PROD, MIN, MAX on
// 8, 32 and 64 bit integers, float and double) is HComm's built-in op. Every
// other one is an HComm user op over opaque elements of the basic type's
// packed size, whose function is one of this file's kernels: the logical and
// bitwise ops, 16-bit integers, long double and quad precision, complex
// types, C and Fortran logicals, MINLOC and MAXLOC on the pair types. A
// derived type made of one basic type reduces as that many basic elements.
// An MPI_Op_create op is an HComm user op made for the call, bound to the
// call's datatype, which the MPI function receives; on a type whose elements
// do not lie packed it gets them unpacked into a buffer of the type's own
// layout, and its results are packed back.
#include <climits>
#include <complex>
#include <cstdint>
#include <cstring>
#include <map>
#include <type_traits>
#include <vector>

#include "mpi_compat/src/datatypes.hpp"
#include "mpi_compat/src/state.hpp"

namespace hcomm::mpi {
namespace {

struct OpInfo {
  MPI_Op handle;
  const char* name;
  int categories;    // the types MPI defines it on
  hcomm_op_t hcomm;  // HCOMM_NUM_OPS: HComm has none
};
constexpr int kNumeric = kInteger | kFortranInteger | kFloating;
// In handle order: MPICH's predefined ops are 0x58000001 onwards.
constexpr OpInfo ops[] = {
    {MPI_MAX, "MPI_MAX", kNumeric, HCOMM_MAX},
    {MPI_MIN, "MPI_MIN", kNumeric, HCOMM_MIN},
    {MPI_SUM, "MPI_SUM", kNumeric | kComplex, HCOMM_SUM},
    {MPI_PROD, "MPI_PROD", kNumeric | kComplex, HCOMM_PROD},
    {MPI_LAND, "MPI_LAND", kInteger | kLogical, HCOMM_NUM_OPS},
    {MPI_BAND, "MPI_BAND", kInteger | kFortranInteger | kByte, HCOMM_NUM_OPS},
    {MPI_LOR, "MPI_LOR", kInteger | kLogical, HCOMM_NUM_OPS},
    {MPI_BOR, "MPI_BOR", kInteger | kFortranInteger | kByte, HCOMM_NUM_OPS},
    {MPI_LXOR, "MPI_LXOR", kInteger | kLogical, HCOMM_NUM_OPS},
    {MPI_BXOR, "MPI_BXOR", kInteger | kFortranInteger | kByte, HCOMM_NUM_OPS},
    {MPI_MINLOC, "MPI_MINLOC", kPair, HCOMM_NUM_OPS},
    {MPI_MAXLOC, "MPI_MAXLOC", kPair, HCOMM_NUM_OPS},
    {MPI_REPLACE, "MPI_REPLACE", kNone, HCOMM_NUM_OPS},  // one-sided accumulates only
    {MPI_NO_OP, "MPI_NO_OP", kNone, HCOMM_NUM_OPS},
};

static_assert([] {
  for (size_t i = 0; i < std::size(ops); ++i)
    if (static_cast<unsigned>(ops[i].handle) != 0x58000001u + i) return false;
  return true;
}());

const OpInfo* find_op(MPI_Op op) {
  const size_t i = static_cast<unsigned>(op) - 0x58000001u;
  return i < std::size(ops) ? &ops[i] : nullptr;
}

// ---- Kernels: inout[i] = in[i] op inout[i] over packed elements, read and
// written with memcpy (packed copies and derived types leave them unaligned).

using Kernel = void (*)(const void* in, void* inout, size_t count);

template <class T>
T load(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <class T>
void store(unsigned char* p, const T& v) {
  std::memcpy(p, &v, sizeof v);
}

template <class T, class F>
void elementwise(const void* in, void* inout, size_t count) {
  const auto* x = static_cast<const unsigned char*>(in);
  auto* y = static_cast<unsigned char*>(inout);
  for (size_t i = 0; i < count; ++i, x += sizeof(T), y += sizeof(T)) store(y, F{}(load<T>(x), load<T>(y)));
}

struct Max {
  template <class T>
  T operator()(T a, T b) const {
    return b < a ? a : b;
  }
};
struct Min {
  template <class T>
  T operator()(T a, T b) const {
    return a < b ? a : b;
  }
};
// Integers wrap: computed in 64-bit unsigned arithmetic, which is defined
// for every width and sign, then cut to T.
struct Sum {
  template <class T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>)
      return static_cast<T>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
    else
      return a + b;
  }
};
struct Prod {
  template <class T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>)
      return static_cast<T>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
    else
      return a * b;
  }
};
struct Land {
  template <class T>
  T operator()(T a, T b) const {
    return static_cast<T>(a != 0 && b != 0);
  }
};
struct Lor {
  template <class T>
  T operator()(T a, T b) const {
    return static_cast<T>(a != 0 || b != 0);
  }
};
struct Lxor {
  template <class T>
  T operator()(T a, T b) const {
    return static_cast<T>((a != 0) != (b != 0));
  }
};
struct Band {
  template <class T>
  T operator()(T a, T b) const {
    return static_cast<T>(a & b);
  }
};
struct Bor {
  template <class T>
  T operator()(T a, T b) const {
    return static_cast<T>(a | b);
  }
};
struct Bxor {
  template <class T>
  T operator()(T a, T b) const {
    return static_cast<T>(a ^ b);
  }
};

#ifdef __SIZEOF_FLOAT128__
// Fortran's REAL*16 and COMPLEX*32: quad precision, which std::complex does not take.
struct Quad {
  __float128 v;
  friend Quad operator+(Quad a, Quad b) { return {a.v + b.v}; }
  friend Quad operator*(Quad a, Quad b) { return {a.v * b.v}; }
  friend bool operator<(Quad a, Quad b) { return a.v < b.v; }
};
struct QuadComplex {
  __float128 re, im;
  friend QuadComplex operator+(QuadComplex a, QuadComplex b) { return {a.re + b.re, a.im + b.im}; }
  friend QuadComplex operator*(QuadComplex a, QuadComplex b) {
    return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
  }
};
#endif

// MINLOC and MAXLOC on a pair {value, index} lying packed: the index right
// after the value. Ties take the lower index.
template <class V, class I, bool kMin>
void locate(const void* in, void* inout, size_t count) {
  constexpr size_t kBytes = sizeof(V) + sizeof(I);
  const auto* x = static_cast<const unsigned char*>(in);
  auto* y = static_cast<unsigned char*>(inout);
  for (size_t i = 0; i < count; ++i, x += kBytes, y += kBytes) {
    const V a = load<V>(x), b = load<V>(y);
    const I ai = load<I>(x + sizeof(V)), bi = load<I>(y + sizeof(V));
    if (kMin ? a < b : b < a) {
      store(y, a);
      store(y + sizeof(V), ai);
    } else if (a == b && ai < bi) {
      store(y + sizeof(V), ai);
    }
  }
}

// Which C type a basic type's elements are, for the kernels.
enum class Scalar {
  kNone,
  kI8,
  kU8,
  kI16,
  kU16,
  kI32,
  kU32,
  kI64,
  kU64,
  kFloat,
  kDouble,
  kLongDouble,
  kQuad,
  kFloatComplex,
  kDoubleComplex,
  kLongDoubleComplex,
  kQuadComplex,
  kBool,
  kLogical,  // C's bool (one byte), Fortran's LOGICAL (an int)
  kFloatInt,
  kDoubleInt,
  kLongInt,
  kShortInt,
  kIntInt,
  kLongDoubleInt,
  kFloatFloat,
  kDoubleDouble,
};

Scalar scalar_of(MPI_Datatype t) {
  static const std::map<MPI_Datatype, Scalar> table = {
      {MPI_SIGNED_CHAR, Scalar::kI8},
      {MPI_UNSIGNED_CHAR, Scalar::kU8},
      {MPI_BYTE, Scalar::kU8},
      {MPI_SHORT, Scalar::kI16},
      {MPI_UNSIGNED_SHORT, Scalar::kU16},
      {MPI_INT, Scalar::kI32},
      {MPI_UNSIGNED, Scalar::kU32},
      {MPI_LONG, Scalar::kI64},
      {MPI_UNSIGNED_LONG, Scalar::kU64},
      {MPI_LONG_LONG_INT, Scalar::kI64},
      {MPI_UNSIGNED_LONG_LONG, Scalar::kU64},
      {MPI_FLOAT, Scalar::kFloat},
      {MPI_DOUBLE, Scalar::kDouble},
      {MPI_LONG_DOUBLE, Scalar::kLongDouble},
      {MPI_INT8_T, Scalar::kI8},
      {MPI_INT16_T, Scalar::kI16},
      {MPI_INT32_T, Scalar::kI32},
      {MPI_INT64_T, Scalar::kI64},
      {MPI_UINT8_T, Scalar::kU8},
      {MPI_UINT16_T, Scalar::kU16},
      {MPI_UINT32_T, Scalar::kU32},
      {MPI_UINT64_T, Scalar::kU64},
      {MPI_C_BOOL, Scalar::kBool},
      {MPI_C_FLOAT_COMPLEX, Scalar::kFloatComplex},
      {MPI_C_DOUBLE_COMPLEX, Scalar::kDoubleComplex},
      {MPI_C_LONG_DOUBLE_COMPLEX, Scalar::kLongDoubleComplex},
      {MPI_AINT, Scalar::kI64},
      {MPI_OFFSET, Scalar::kI64},
      {MPI_COUNT, Scalar::kI64},
      {MPI_CXX_BOOL, Scalar::kBool},
      {MPI_CXX_FLOAT_COMPLEX, Scalar::kFloatComplex},
      {MPI_CXX_DOUBLE_COMPLEX, Scalar::kDoubleComplex},
      {MPI_CXX_LONG_DOUBLE_COMPLEX, Scalar::kLongDoubleComplex},
      {MPI_FLOAT_INT, Scalar::kFloatInt},
      {MPI_DOUBLE_INT, Scalar::kDoubleInt},
      {MPI_LONG_INT, Scalar::kLongInt},
      {MPI_SHORT_INT, Scalar::kShortInt},
      {MPI_2INT, Scalar::kIntInt},
      {MPI_LONG_DOUBLE_INT, Scalar::kLongDoubleInt},
      {MPI_COMPLEX, Scalar::kFloatComplex},
      {MPI_DOUBLE_COMPLEX, Scalar::kDoubleComplex},
      {MPI_LOGICAL, Scalar::kLogical},
      {MPI_REAL, Scalar::kFloat},
      {MPI_DOUBLE_PRECISION, Scalar::kDouble},
      {MPI_INTEGER, Scalar::kI32},
      {MPI_2INTEGER, Scalar::kIntInt},
      {MPI_2REAL, Scalar::kFloatFloat},
      {MPI_2DOUBLE_PRECISION, Scalar::kDoubleDouble},
      {MPI_REAL4, Scalar::kFloat},
      {MPI_REAL8, Scalar::kDouble},
      {MPI_REAL16, Scalar::kQuad},
      {MPI_COMPLEX8, Scalar::kFloatComplex},
      {MPI_COMPLEX16, Scalar::kDoubleComplex},
      {MPI_COMPLEX32, Scalar::kQuadComplex},
      {MPI_INTEGER1, Scalar::kI8},
      {MPI_INTEGER2, Scalar::kI16},
      {MPI_INTEGER4, Scalar::kI32},
      {MPI_INTEGER8, Scalar::kI64},
  };
  auto it = table.find(t);
  return it == table.end() ? Scalar::kNone : it->second;
}

// MAX, MIN, SUM and PROD, on integers and floating point.
template <class T>
Kernel numeric_kernel(MPI_Op op) {
  switch (op) {
    case MPI_MAX:
      return elementwise<T, Max>;
    case MPI_MIN:
      return elementwise<T, Min>;
    case MPI_SUM:
      return elementwise<T, Sum>;
    case MPI_PROD:
      return elementwise<T, Prod>;
    default:
      return nullptr;
  }
}

// Integers take the logical and bitwise ops too.
template <class T>
Kernel integer_kernel(MPI_Op op) {
  switch (op) {
    case MPI_LAND:
      return elementwise<T, Land>;
    case MPI_LOR:
      return elementwise<T, Lor>;
    case MPI_LXOR:
      return elementwise<T, Lxor>;
    case MPI_BAND:
      return elementwise<T, Band>;
    case MPI_BOR:
      return elementwise<T, Bor>;
    case MPI_BXOR:
      return elementwise<T, Bxor>;
    default:
      return numeric_kernel<T>(op);
  }
}

template <class T>
Kernel complex_kernel(MPI_Op op) {
  return op == MPI_SUM ? elementwise<T, Sum> : op == MPI_PROD ? elementwise<T, Prod> : nullptr;
}

// Logical ops on a logical type's bytes as an unsigned integer: nonzero is true, the result 0 or 1.
template <class T>
Kernel logical_kernel(MPI_Op op) {
  return op == MPI_LAND   ? elementwise<T, Land>
         : op == MPI_LOR  ? elementwise<T, Lor>
         : op == MPI_LXOR ? elementwise<T, Lxor>
                          : nullptr;
}

template <class V, class I>
Kernel pair_kernel(MPI_Op op) {
  return op == MPI_MINLOC ? locate<V, I, true> : op == MPI_MAXLOC ? locate<V, I, false> : nullptr;
}

// The kernel of op on a basic type's packed elements; null where this layer
// has none (MPI defines none there, or this build lacks quad precision).
Kernel kernel_of(Scalar s, MPI_Op op) {
  switch (s) {
    case Scalar::kI8:
      return integer_kernel<int8_t>(op);
    case Scalar::kU8:
      return integer_kernel<uint8_t>(op);
    case Scalar::kI16:
      return integer_kernel<int16_t>(op);
    case Scalar::kU16:
      return integer_kernel<uint16_t>(op);
    case Scalar::kI32:
      return integer_kernel<int32_t>(op);
    case Scalar::kU32:
      return integer_kernel<uint32_t>(op);
    case Scalar::kI64:
      return integer_kernel<int64_t>(op);
    case Scalar::kU64:
      return integer_kernel<uint64_t>(op);
    case Scalar::kFloat:
      return numeric_kernel<float>(op);
    case Scalar::kDouble:
      return numeric_kernel<double>(op);
    case Scalar::kLongDouble:
      return numeric_kernel<long double>(op);
    case Scalar::kFloatComplex:
      return complex_kernel<std::complex<float>>(op);
    case Scalar::kDoubleComplex:
      return complex_kernel<std::complex<double>>(op);
    case Scalar::kLongDoubleComplex:
      return complex_kernel<std::complex<long double>>(op);
#ifdef __SIZEOF_FLOAT128__
    case Scalar::kQuad:
      return numeric_kernel<Quad>(op);
    case Scalar::kQuadComplex:
      return complex_kernel<QuadComplex>(op);
#endif
    case Scalar::kBool:
      return logical_kernel<uint8_t>(op);
    case Scalar::kLogical:
      return logical_kernel<uint32_t>(op);
    case Scalar::kFloatInt:
      return pair_kernel<float, int>(op);
    case Scalar::kDoubleInt:
      return pair_kernel<double, int>(op);
    case Scalar::kLongInt:
      return pair_kernel<long, int>(op);
    case Scalar::kShortInt:
      return pair_kernel<short, int>(op);
    case Scalar::kIntInt:
      return pair_kernel<int, int>(op);
    case Scalar::kLongDoubleInt:
      return pair_kernel<long double, int>(op);
    case Scalar::kFloatFloat:
      return pair_kernel<float, float>(op);
    case Scalar::kDoubleDouble:
      return pair_kernel<double, double>(op);
    default:
      return nullptr;
  }
}

// A kernel as an HComm user op, made on first use and kept: predefined ops commute.
struct KernelOp {
  Kernel kernel;
  hcomm_op_t op;
};

void run_kernel(const void* in, void* inout, size_t count, hcomm_dtype_t, void* user_data) {
  static_cast<const KernelOp*>(user_data)->kernel(in, inout, count);
}

hcomm_op_t kernel_op(Kernel kernel) {
  static std::map<Kernel, KernelOp> made;
  auto [it, fresh] = made.try_emplace(kernel, KernelOp{kernel, HCOMM_SUM});
  if (fresh) {
    const hcomm_result_t rc = hcomm_op_create(run_kernel, &it->second, 1, &it->second.op);
    if (rc != HCOMM_SUCCESS) {
      made.erase(it);
      check(rc, "hcomm_op_create");
    }
  }
  return it->second.op;
}

// ---- MPI_Op_create's ops: MPICH's handles, 0x98000000 onwards; a freed
// handle is given out again.

struct UserOp {
  MPI_User_function* fn;
  bool commute;
};
std::map<MPI_Op, UserOp> user_ops;
std::vector<MPI_Op> freed_ops;
unsigned next_op = 0;

const UserOp* find_user_op(MPI_Op op) {
  auto it = user_ops.find(op);
  return it == user_ops.end() ? nullptr : &it->second;
}

// A user op bound to one call's datatype: the HComm op made for it, gone
// with the binding (the calls that use it hold it until they complete).
struct Binding {
  MPI_User_function* fn;
  MPI_Datatype type;
  LayoutPtr layout;
  bool packed;
  hcomm_op_t op = HCOMM_SUM;
  Binding(MPI_User_function* f, MPI_Datatype t, LayoutPtr l, bool p)
      : fn(f), type(t), layout(std::move(l)), packed(p) {}
  Binding(const Binding&) = delete;
  Binding& operator=(const Binding&) = delete;
  ~Binding() {
    if (op != HCOMM_SUM) hcomm_op_destroy(op);
  }
};

// The MPI function over count elements, in calls of at most INT_MAX.
void call_user(const Binding& b, void* in, void* inout, size_t count, size_t stride) {
  MPI_Datatype type = b.type;
  for (size_t done = 0; done < count;) {
    int n = static_cast<int>(std::min<size_t>(count - done, INT_MAX));
    b.fn(static_cast<unsigned char*>(in) + done * stride, static_cast<unsigned char*>(inout) + done * stride, &n,
         &type);
    done += static_cast<size_t>(n > 0 ? n : 1);
  }
}

// Packed elements go to the MPI function in the type's own layout: unpacked
// into buffers where element k starts at k * extent, then packed back.
void run_user(const void* in, void* inout, size_t count, hcomm_dtype_t, void* user_data) {
  const Binding& b = *static_cast<const Binding*>(user_data);
  const Layout& l = *b.layout;
  if (!b.packed) return call_user(b, const_cast<void*>(in), inout, count, static_cast<size_t>(l.extent));
  const MPI_Aint span = static_cast<MPI_Aint>(count - 1) * l.extent + l.true_extent;
  std::vector<unsigned char> x(static_cast<size_t>(span)), y(static_cast<size_t>(span));
  unsigned char* x0 = x.data() - l.true_lb;  // element 0's origin: its data starts at true_lb
  unsigned char* y0 = y.data() - l.true_lb;
  unpack(static_cast<const unsigned char*>(in), 0, count, count * l.size, l, x0);
  unpack(static_cast<const unsigned char*>(inout), 0, count, count * l.size, l, y0);
  call_user(b, x0, y0, count, static_cast<size_t>(l.extent));
  pack(y0, 0, count, l, static_cast<unsigned char*>(inout));
}

Reduction user_reduction(const UserOp& u, MPI_Datatype type, const TypeInfo& t) {
  LayoutPtr l = layout_of(type);
  const bool packed = !is_dense(type);
  if (packed && l->extent <= 0)
    fail(MPI_ERR_TYPE, "a user op reduces a datatype of extent %ld, which lays no element after another",
         static_cast<long>(l->extent));
  auto binding = std::make_shared<Binding>(u.fn, type, std::move(l), packed);
  check(hcomm_op_create(run_user, binding.get(), u.commute ? 1 : 0, &binding->op), "hcomm_op_create");
  // Elements of no bytes reduce nothing: HComm moves none.
  return {.dtype = HCOMM_DTYPE_OPAQUE(t.size ? t.size : 1),
          .op = binding->op,
          .scale = t.size ? size_t{1} : size_t{0},
          .packed = packed,
          .keep = std::move(binding)};
}

}  // namespace

const char* op_name(MPI_Op op) {
  if (const OpInfo* o = find_op(op)) return o->name;
  return find_user_op(op) ? "a user op (MPI_Op_create)" : "an unknown op";
}

Reduction reduction_of(MPI_Datatype type, MPI_Op op) {
  const TypeInfo* predefined = find_predefined(type);
  const TypeInfo& t = predefined ? *predefined : derived_type_of(type, "datatype");
  const OpInfo* o = find_op(op);
  if (!o) {
    if (const UserOp* u = find_user_op(op)) return user_reduction(*u, type, t);
    if (op == MPI_OP_NULL) fail(MPI_ERR_OP, "op is MPI_OP_NULL");
    fail(MPI_ERR_OP, "op 0x%x is no operation (never made by MPI_Op_create, or freed)", static_cast<unsigned>(op));
  }
  if (t.size == 0) return {.dtype = HCOMM_UINT8, .op = o->hcomm == HCOMM_NUM_OPS ? HCOMM_SUM : o->hcomm, .scale = 0};
  // A predefined type is its own basic type; a derived one's is its layout's.
  const MPI_Datatype basic = predefined ? type : layout_of(type)->basic;
  const bool packed = predefined ? t.size != t.extent : !is_dense(type);
  if (basic == MPI_DATATYPE_NULL)
    fail(MPI_ERR_OP,
         "%s on a derived datatype of several basic types: MPI defines predefined ops on derived types "
         "of one basic type only",
         o->name);
  const TypeInfo& b = predefined ? t : type_of(basic);
  const char* of = predefined ? "" : " (the basic type of the derived datatype)";
  if (!(o->categories & b.category))
    fail(MPI_ERR_OP, "%s is not defined on %s%s (MPI 3.1 section 5.9.2)", o->name, b.name, of);
  const size_t scale = predefined ? 1 : t.size / b.size;
  if (o->hcomm != HCOMM_NUM_OPS && b.reduce != HCOMM_NUM_DTYPES)
    return {.dtype = b.reduce, .op = o->hcomm, .scale = scale, .packed = packed};
  const Kernel kernel = kernel_of(scalar_of(basic), op);
  if (!kernel) fail(MPI_ERR_UNSUPPORTED_OPERATION, "%s on %s%s is not implemented in this build", o->name, b.name, of);
  return {.dtype = HCOMM_DTYPE_OPAQUE(b.size), .op = kernel_op(kernel), .scale = scale, .packed = packed};
}

}  // namespace hcomm::mpi

using namespace hcomm::mpi;

HCOMM_MPI_API int PMPI_Op_create(MPI_User_function* user_fn, int commute, MPI_Op* op) {
  return call("MPI_Op_create", MPI_COMM_WORLD, [&] {
    require_initialized("MPI_Op_create");
    if (!user_fn) fail(MPI_ERR_ARG, "user_fn is NULL");
    check_out(op, "op");
    MPI_Op h;
    if (!freed_ops.empty()) {
      h = freed_ops.back();
      freed_ops.pop_back();
    } else {
      h = static_cast<MPI_Op>(0x98000000u + next_op++);
    }
    user_ops[h] = {user_fn, commute != 0};
    *op = h;
  });
}
HCOMM_MPI_ALIAS(Op_create)

// Calls already started with the op go on with it.
HCOMM_MPI_API int PMPI_Op_free(MPI_Op* op) {
  return call("MPI_Op_free", MPI_COMM_WORLD, [&] {
    require_initialized("MPI_Op_free");
    check_out(op, "op");
    if (find_op(*op)) fail(MPI_ERR_OP, "%s is predefined and cannot be freed", op_name(*op));
    if (!user_ops.erase(*op)) {
      if (*op == MPI_OP_NULL) fail(MPI_ERR_OP, "op is MPI_OP_NULL");
      fail(MPI_ERR_OP, "op 0x%x is no operation (never made by MPI_Op_create, or freed)", static_cast<unsigned>(*op));
    }
    freed_ops.push_back(*op);
    *op = MPI_OP_NULL;
  });
}
HCOMM_MPI_ALIAS(Op_free)

HCOMM_MPI_API int PMPI_Op_commutative(MPI_Op op, int* commute) {
  return call("MPI_Op_commutative", MPI_COMM_WORLD, [&] {
    check_out(commute, "commute");
    if (find_op(op)) {
      *commute = 1;
    } else if (const UserOp* u = find_user_op(op)) {
      *commute = u->commute ? 1 : 0;
    } else {
      fail(MPI_ERR_OP, "op 0x%x is no operation (never made by MPI_Op_create, or freed)", static_cast<unsigned>(op));
    }
  });
}
HCOMM_MPI_ALIAS(Op_commutative)

// inoutbuf = inbuf op inoutbuf on this process (hcomm_reduce_local), through
// packed copies for a type whose elements do not lie packed.
HCOMM_MPI_API int PMPI_Reduce_local(const void* inbuf, void* inoutbuf, int count, MPI_Datatype datatype, MPI_Op op) {
  return call("MPI_Reduce_local", MPI_COMM_WORLD, [&] {
    require_initialized("MPI_Reduce_local");
    const size_t bytes = bytes_of(count, datatype);
    const Reduction red = reduction_of(datatype, op);
    if (inbuf == MPI_IN_PLACE || inoutbuf == MPI_IN_PLACE)
      fail(MPI_ERR_BUFFER, "MPI_IN_PLACE is no buffer of MPI_Reduce_local");
    check_data(inbuf, bytes, datatype, "inbuf");
    check_data(inoutbuf, bytes, datatype, "inoutbuf");
    const size_t n = static_cast<size_t>(count) * red.scale;
    if (!red.packed) return check(hcomm_reduce_local(inbuf, inoutbuf, n, red.dtype, red.op), "hcomm_reduce_local");
    const Layout& l = *layout_of(datatype);
    std::vector<unsigned char> in(bytes), inout(bytes);
    pack(inbuf, 0, static_cast<size_t>(count), l, in.data());
    pack(inoutbuf, 0, static_cast<size_t>(count), l, inout.data());
    check(hcomm_reduce_local(in.data(), inout.data(), n, red.dtype, red.op), "hcomm_reduce_local");
    unpack(inout.data(), 0, static_cast<size_t>(count), bytes, l, inoutbuf);
  });
}
HCOMM_MPI_ALIAS(Reduce_local)
