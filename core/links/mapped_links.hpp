// The mapped memory of a communicator whose ranks all reach each other
// through one transport that maps memory (one host, shm): this rank's window,
// allocated here and mapped by every peer; the peers' windows mapped here;
// peers' exposed buffers mapped on first use; copies by address through the
// transport's endpoints for buffers that are not mapped.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/bootstrap/bootstrap.hpp"
#include "core/exec/mapped_io.hpp"
#include "core/transport/transport.hpp"

namespace hcomm::links {

class MappedLinks final : public exec::MappedIO {
 public:
  // Collective over the bootstrap: every rank calls it, with its transport
  // when that serves every peer and maps memory (else nullptr), and the
  // endpoint to each peer (nullptr for this rank). Returns nullptr on every
  // rank unless every rank could allocate its window and map all others.
  // peer_buffers says whether every rank can also copy from every other by
  // address (HCOMM_VIEW_PEER_BUFFERS).
  static std::unique_ptr<MappedLinks> connect(transport::Transport* transport, const std::vector<void*>& endpoints,
                                              bootstrap::Bootstrap& bootstrap, uint64_t window_bytes);
  ~MappedLinks() override;

  bool peer_buffers() const { return peer_buffers_; }
  const transport::Transport& transport() const { return transport_; }

  const uint8_t* map(int peer, const hcomm_mem_desc_t& desc) override;
  void read(int peer, uint64_t address, void* local, size_t bytes) override;
  void write(int peer, uint64_t address, const void* local, size_t bytes) override;
  void describe(const void* ptr, size_t bytes, hcomm_mem_desc_t* out) override;

 private:
  // A peer's memory mapped here.
  struct Mapping {
    hcomm_mem_desc_t desc;
    void* handle;
    const uint8_t* data;
    uint64_t last_use;
  };

  MappedLinks(transport::Transport& transport, const std::vector<void*>& endpoints, int rank, int nranks,
              uint64_t window_bytes);
  void allocate_window(uint64_t own_bytes);
  Mapping map_desc(const hcomm_mem_desc_t& desc);
  bool can_read(int peer, uint64_t address);

  transport::Transport& transport_;
  std::vector<void*> endpoints_;
  void* window_handle_ = nullptr;
  std::vector<void*> window_mappings_;       // by rank; nullptr for this one
  std::vector<std::vector<Mapping>> cache_;  // by rank: exposed buffers mapped here, most recent kept
  uint64_t uses_ = 0;
  bool peer_buffers_ = false;
  uint64_t auto_register_from_;  // HCOMM_AUTO_REGISTER; 0: off
};

}  // namespace hcomm::links
