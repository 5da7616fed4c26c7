#include "buffer_pool.hpp"

#include <algorithm>
#include <bit>
#include <new>

namespace hcomm::tcp {

namespace {

constexpr int kSmallestClass = 12;           // 4 KiB
constexpr size_t kMaxFreeBytes = 128 << 20;  // kept for reuse per net

int size_class(size_t bytes) { return std::max(kSmallestClass, static_cast<int>(std::bit_width(bytes - 1))); }

}  // namespace

PooledBuffer::PooledBuffer(PooledBuffer&& other) noexcept
    : pool_(other.pool_), data_(std::move(other.data_)), size_class_(other.size_class_) {}

PooledBuffer& PooledBuffer::operator=(PooledBuffer&& other) noexcept {
  if (this != &other) {
    reset();
    pool_ = other.pool_;
    data_ = std::move(other.data_);
    size_class_ = other.size_class_;
  }
  return *this;
}

void PooledBuffer::reset() {
  if (data_) pool_->give(std::move(data_), size_class_);
}

PooledBuffer BufferPool::take(size_t bytes) {
  int c = size_class(bytes);
  if (c >= kSizeClasses) throw std::bad_alloc();
  std::vector<std::unique_ptr<std::byte[]>>& free = free_[c];
  if (free.empty()) return PooledBuffer(this, std::make_unique_for_overwrite<std::byte[]>(size_t{1} << c), c);
  std::unique_ptr<std::byte[]> data = std::move(free.back());
  free.pop_back();
  free_bytes_ -= size_t{1} << c;
  return PooledBuffer(this, std::move(data), c);
}

void BufferPool::give(std::unique_ptr<std::byte[]> data, int size_class) {
  size_t bytes = size_t{1} << size_class;
  if (free_bytes_ + bytes > kMaxFreeBytes) return;  // freed here
  free_[size_class].push_back(std::move(data));
  free_bytes_ += bytes;
}

}  // namespace hcomm::tcp
