// Buffers for messages that arrive before their receive is posted. Freed
// buffers are kept for reuse (up to a bound), because a fresh large buffer
// costs a page fault per 4 KiB page on first touch.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <vector>

namespace hcomm::tcp {

class BufferPool;

// One buffer of the pool; goes back to it when destroyed.
class PooledBuffer {
 public:
  PooledBuffer() = default;
  PooledBuffer(PooledBuffer&& other) noexcept;
  PooledBuffer& operator=(PooledBuffer&& other) noexcept;
  ~PooledBuffer() { reset(); }

  std::byte* data() const { return data_.get(); }
  void reset();

 private:
  friend class BufferPool;
  PooledBuffer(BufferPool* pool, std::unique_ptr<std::byte[]> data, int size_class)
      : pool_(pool), data_(std::move(data)), size_class_(size_class) {}

  BufferPool* pool_ = nullptr;
  std::unique_ptr<std::byte[]> data_;
  int size_class_ = 0;
};

class BufferPool {
 public:
  // At least `bytes` bytes (bytes > 0).
  PooledBuffer take(size_t bytes);

 private:
  friend class PooledBuffer;
  void give(std::unique_ptr<std::byte[]> data, int size_class);

  static constexpr int kSizeClasses = 64;  // size class c holds 2^c bytes
  std::array<std::vector<std::unique_ptr<std::byte[]>>, kSizeClasses> free_;
  size_t free_bytes_ = 0;
};

}  // namespace hcomm::tcp
