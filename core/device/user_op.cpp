#include "core/device/user_op.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "core/common/error.hpp"
#include "core/common/names.hpp"

namespace hcomm::device {
namespace {

// A non-commutative op whose result lands in its left operand takes the
// right one through a copy, this many bytes (at least one element) at a time.
constexpr size_t kCopyPieceBytes = 256 << 10;

struct Registry {
  std::mutex mutex;
  std::unordered_map<int32_t, std::shared_ptr<const UserOp>> ops;
  int32_t next = kFirstUserOp;
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: ops may be destroyed from exit handlers
  return *r;
}

}  // namespace

hcomm_op_t register_op(const UserOp& op) {
  Registry& r = registry();
  auto entry = std::make_shared<const UserOp>(op);
  std::lock_guard lock(r.mutex);
  // Values are not given out again until the range wraps, and then only
  // those no live op holds.
  constexpr int64_t kValues = int64_t{INT32_MAX} - kFirstUserOp + 1;
  if (static_cast<int64_t>(r.ops.size()) >= kValues)
    HCOMM_THROW(HCOMM_ERR_SYSTEM, "hcomm_op_create: %zu user ops are live, every value there is; destroy some",
                r.ops.size());
  while (r.ops.contains(r.next)) r.next = r.next == INT32_MAX ? kFirstUserOp : r.next + 1;
  const int32_t value = r.next;
  r.next = r.next == INT32_MAX ? kFirstUserOp : r.next + 1;
  r.ops.emplace(value, std::move(entry));
  return static_cast<hcomm_op_t>(value);
}

bool unregister_op(hcomm_op_t op) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  return r.ops.erase(int32_t{op}) > 0;
}

std::shared_ptr<const UserOp> find_op(hcomm_op_t op) {
  if (!is_user_op(op)) return nullptr;
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  auto it = r.ops.find(int32_t{op});
  return it == r.ops.end() ? nullptr : it->second;
}

void reduce_user(const UserOp& op, hcomm_dtype_t dtype, size_t elem_bytes, void* dst, const void* a, const void* b,
                 size_t count) {
  if (count == 0) return;
  if (!dst || !a || !b)
    HCOMM_THROW(HCOMM_ERR_INTERNAL, "user op reduction of %zu elements with a null buffer (dst %p, a %p, b %p)", count,
                dst, a, b);
  if (dst == b && b != a) return op.fn(a, dst, count, dtype, op.user_data);
  if (dst != a) {
    std::memcpy(dst, b, count * elem_bytes);
    return op.fn(a, dst, count, dtype, op.user_data);
  }
  if (op.commutative && a != b) return op.fn(b, dst, count, dtype, op.user_data);  // b op a is a op b
  // dst is a: b's elements into a copy that takes the result.
  thread_local std::vector<uint8_t> copy;
  const size_t per_piece = std::max<size_t>(1, kCopyPieceBytes / elem_bytes);
  auto* out = static_cast<uint8_t*>(dst);
  const auto* right = static_cast<const uint8_t*>(b);
  for (size_t done = 0; done < count; done += per_piece) {
    const size_t n = std::min(per_piece, count - done), bytes = n * elem_bytes;
    copy.assign(right + done * elem_bytes, right + done * elem_bytes + bytes);
    op.fn(out + done * elem_bytes, copy.data(), n, dtype, op.user_data);
    std::memcpy(out + done * elem_bytes, copy.data(), bytes);
  }
}

}  // namespace hcomm::device
