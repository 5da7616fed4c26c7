#include "fabric.hpp"

#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <memory>

namespace hcomm::ofi {

namespace {

constexpr uint32_t kApiVersion = FI_VERSION(1, 9);
constexpr size_t kTailMaxBytes = size_t{1} << 40;
constexpr size_t kTailMinBytes = size_t{1} << 30;

struct InfoDeleter {
  void operator()(fi_info* info) const { fi_freeinfo(info); }
};
using InfoPtr = std::unique_ptr<fi_info, InfoDeleter>;

// What the plugin needs and what it copes with: it gives every operation an
// fi_context2, registers buffers when FI_MR_LOCAL asks for it (binding them
// when FI_MR_ENDPOINT does), and uses no RMA, so the RMA registration modes
// cost it nothing.
InfoPtr hints(const Config& config) {
  InfoPtr h(fi_allocinfo());
  if (!h) HCOMM_PLUGIN_THROW(HCOMM_ERR_SYSTEM, "ofi: fi_allocinfo failed (out of memory)");
  h->ep_attr->type = FI_EP_RDM;
  h->caps = FI_TAGGED | FI_MSG | FI_DIRECTED_RECV;
  h->mode = FI_CONTEXT | FI_CONTEXT2;
  h->tx_attr->msg_order = FI_ORDER_SAS;  // messages of one tag match in the order they were sent
  h->rx_attr->msg_order = FI_ORDER_SAS;
  h->domain_attr->threading = FI_THREAD_SAFE;  // nets of one domain may be used from different threads
  h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_ENDPOINT | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
  if (!config.provider.empty()) h->fabric_attr->prov_name = strdup(config.provider.c_str());
  return h;
}

void log_hmem(const fi_info& chosen, const fi_info& base_hints, const plugin::Services& services) {
  if (!services.enabled(HCOMM_LOG_INFO, "NET")) return;
  InfoPtr h(fi_dupinfo(&base_hints));
  if (!h) return;
  h->caps |= FI_HMEM;
  h->domain_attr->mr_mode |= FI_MR_HMEM;
  free(h->fabric_attr->prov_name);
  h->fabric_attr->prov_name = strdup(chosen.fabric_attr->prov_name);
  fi_info* found = nullptr;
  bool hmem = fi_getinfo(kApiVersion, nullptr, nullptr, 0, h.get(), &found) == 0;
  fi_freeinfo(found);
  services.log(HCOMM_LOG_INFO, "NET",
               plugin::format("ofi: provider %s %s device memory (FI_HMEM); this transport moves host memory only",
                              chosen.fabric_attr->prov_name, hmem ? "offers" : "does not offer"));
}

// libfabric's shm provider names its region in /dev/shm after the process
// ("<pid>:<uid>:<n>"). A killed process leaves its region behind, and a later
// process given the same pid then fails fi_enable with EBUSY: the region's
// owner looks alive, being itself. A random part makes every name new;
// "hcomm-ofi-<pid>-" lets hcomm-run remove its dead ranks' regions.
void name_shm_endpoints(fi_info& info) {
  if (info.addr_format != FI_ADDR_STR) return;
  uint32_t salt = 0;
  if (::getrandom(&salt, sizeof salt, 0) != sizeof salt) salt = static_cast<uint32_t>(std::rand());
  const std::string name = plugin::format("fi_shm://hcomm-ofi-%d-%08x", static_cast<int>(::getpid()), salt);
  char* copy = ::strdup(name.c_str());
  if (!copy) return;
  std::free(info.src_addr);
  info.src_addr = copy;
  info.src_addrlen = name.size() + 1;
}

// "tcp;ofi_rxm": "tcp".
std::string core_provider(const std::string& provider) { return provider.substr(0, provider.find(';')); }

}  // namespace

// "tcp;ofi_rxm": the core provider, before the ';', decides the reach.
bool host_local_provider(const std::string& provider) {
  const std::string core = core_provider(provider);
  return core == "shm" || core == "sm2";
}

Fabric::Fabric(const Config& config, const plugin::Services& services) {
  InfoPtr h = hints(config);
  fi_info* found = nullptr;
  int rc = fi_getinfo(kApiVersion, nullptr, nullptr, 0, h.get(), &found);
  if (rc != 0 || !found)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_UNSUPPORTED,
                       "ofi: no libfabric provider%s%s offers reliable datagram endpoints with tagged messages and "
                       "directed receives: %s; set HCOMM_OFI_PROVIDER to one that does (fi_info -t FI_EP_RDM lists "
                       "them)",
                       config.provider.empty() ? "" : " named ", config.provider.c_str(), fi_strerror(-rc));
  InfoPtr all(found);
  // The first that carries the communicator key's check value in remote CQ data.
  fi_info* pick = found;
  while (pick && pick->domain_attr->cq_data_size < sizeof(uint64_t)) pick = pick->next;
  if (!pick)
    HCOMM_PLUGIN_THROW(HCOMM_ERR_UNSUPPORTED, "ofi: provider %s carries %zu bytes of remote CQ data; 8 are needed",
                       found->fabric_attr->prov_name, found->domain_attr->cq_data_size);
  info_ = fi_dupinfo(pick);
  if (!info_) HCOMM_PLUGIN_THROW(HCOMM_ERR_SYSTEM, "ofi: fi_dupinfo failed (out of memory)");
  provider_ = info_->fabric_attr->prov_name;
  if (core_provider(provider_) == "shm") name_shm_endpoints(*info_);
  check_fi(fi_fabric(info_->fabric_attr, fabric_.out(), nullptr), HCOMM_ERR_SYSTEM, "fi_fabric");
  check_fi(fi_domain(fabric_.get(), info_, domain_.out(), nullptr), HCOMM_ERR_SYSTEM, "fi_domain");
  services.log(HCOMM_LOG_INFO, "NET",
               plugin::format("ofi: provider %s, domain %s, mr_mode 0x%x, inject %zu bytes, max message %zu bytes",
                              provider_.c_str(), info_->domain_attr->name, info_->domain_attr->mr_mode,
                              info_->tx_attr->inject_size, info_->ep_attr->max_msg_size));
  log_hmem(*info_, *h, services);
  if (host_local() && info_->rx_attr->iov_limit >= 2) reserve_tail();
}

void Fabric::reserve_tail() {
  // As much as the kernel lends without backing: a message longer than the
  // receive plus this would still meet the provider's loop.
  for (size_t bytes = kTailMaxBytes; bytes >= kTailMinBytes; bytes /= 2) {
    void* base = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base != MAP_FAILED) {
      tail_ = {.base = base, .bytes = bytes};
      return;
    }
  }
}

Fabric::~Fabric() {
  if (tail_.base) ::munmap(tail_.base, tail_.bytes);
  domain_.reset();
  fabric_.reset();
  fi_freeinfo(info_);
}

uint64_t Fabric::link_bps() const {
  const fid_nic* nic = info_->nic;
  return nic && nic->link_attr ? nic->link_attr->speed : 0;
}

}  // namespace hcomm::ofi
