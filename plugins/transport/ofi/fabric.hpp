// The provider, fabric and domain of one process (the plugin context), shared
// by its nets. Opened on the first `open`, not at init: fi_getinfo starts
// every libfabric provider, which costs a few hundred ms on some machines
// (the verbs provider scans /proc/kallsyms), and the core initialises every
// transport plugin it finds, used or not.
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

#include <cstdint>
#include <string>

#include "config.hpp"
#include "fid.hpp"

namespace hcomm::ofi {

// Whether a provider name is one that reaches only this host.
bool host_local_provider(const std::string& provider);

class Fabric {
 public:
  // fi_getinfo for FI_EP_RDM endpoints with tagged and untagged messages,
  // directed receives and 8 bytes of remote CQ data; HCOMM_ERR_UNSUPPORTED
  // names the provider when none fits.
  Fabric(const Config& config, const plugin::Services& services);
  Fabric(const Fabric&) = delete;
  Fabric& operator=(const Fabric&) = delete;
  ~Fabric();

  const fi_info& info() const { return *info_; }
  fid_fabric* fabric() const { return fabric_.get(); }
  fid_domain* domain() const { return domain_.get(); }
  const std::string& provider() const { return provider_; }
  bool host_local() const { return host_local_provider(provider_); }
  // Buffers must be registered before they are sent or received into.
  bool needs_local_mr() const { return info_->domain_attr->mr_mode & FI_MR_LOCAL; }
  // Registrations must be bound to the endpoint that uses them.
  bool mr_per_endpoint() const { return info_->domain_attr->mr_mode & FI_MR_ENDPOINT; }
  uint64_t link_bps() const;
  // Where receives end in a second iovec that takes what does not fit the
  // user's buffer, so that the provider never truncates: libfabric 1.17's shm
  // provider loops forever when a message it moves by cross-memory attach
  // (above 4 KiB) meets a shorter receive. Reserved address space, never
  // backed unless a message overflows (and then given back). Empty (size 0)
  // where the provider truncates well.
  struct Tail {
    void* base = nullptr;
    size_t bytes = 0;
  };
  const Tail& overflow_tail() const { return tail_; }

 private:
  void reserve_tail();

  fi_info* info_ = nullptr;
  std::string provider_;
  Fid<fid_fabric> fabric_;
  Fid<fid_domain> domain_;
  Tail tail_;
};

}  // namespace hcomm::ofi
