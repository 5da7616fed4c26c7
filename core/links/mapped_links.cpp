#include "core/links/mapped_links.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

#include "core/common/error.hpp"
#include "core/common/log.hpp"
#include "core/common/settings.hpp"
#include "core/links/auto_registry.hpp"
#include "core/links/memory_registry.hpp"

namespace hcomm::links {

namespace {

// Peers' exposed buffers kept mapped per peer; the least recently used goes.
// A mapping keeps the peer's memory alive, so the bound is low.
constexpr size_t kMappedBuffersPerPeer = 8;

// What each rank offers, all-gathered: its window, if it has one.
struct Offer {
  uint32_t has_window;
  uint32_t reserved;
  uint64_t window_bytes;
  hcomm_mem_desc_t desc;
};

// What each rank managed with the others' windows, all-gathered.
struct Outcome {
  uint32_t mapped_all;  // mapped every peer's window
  uint32_t reads_all;   // can copy from every peer by address
};

// This rank's window until MappedLinks takes it.
struct Window {
  transport::Transport* transport = nullptr;
  void* handle = nullptr;
  uint8_t* base = nullptr;
  hcomm_mem_desc_t desc{};
  Window() = default;
  Window(const Window&) = delete;
  Window& operator=(const Window&) = delete;
  ~Window() {
    if (handle) transport->iface().mem_release(handle);
  }
};

bool same_desc(const hcomm_mem_desc_t& a, const hcomm_mem_desc_t& b) {
  return a.address == b.address && a.bytes == b.bytes && a.blob_len == b.blob_len &&
         std::memcmp(a.blob, b.blob, std::min<size_t>(a.blob_len, HCOMM_MEM_BLOB_BYTES)) == 0;
}

}  // namespace

MappedLinks::MappedLinks(transport::Transport& transport, const std::vector<void*>& endpoints, int rank, int nranks,
                         uint64_t window_bytes)
    : MappedIO(rank, nranks, window_bytes),
      transport_(transport),
      endpoints_(endpoints),
      window_mappings_(nranks, nullptr),
      cache_(nranks),
      auto_register_from_(settings::get_size("HCOMM_AUTO_REGISTER")) {}

MappedLinks::~MappedLinks() {
  const hcomm_transport_v1_t& t = transport_.iface();
  for (auto& mappings : cache_)
    for (Mapping& m : mappings) t.mem_unmap(m.handle);
  for (void* m : window_mappings_)
    if (m) t.mem_unmap(m);
  if (window_handle_) t.mem_release(window_handle_);
}

std::unique_ptr<MappedLinks> MappedLinks::connect(transport::Transport* transport, const std::vector<void*>& endpoints,
                                                  bootstrap::Bootstrap& bootstrap, uint64_t window_bytes) {
  const int rank = bootstrap.rank(), n = bootstrap.size();
  Window own;
  Offer mine{};
  if (transport && window_bytes) {
    const exec::window::Layout layout{n, window_bytes};
    try {
      void* base = nullptr;
      transport->check(
          transport->iface().mem_alloc(transport->ctx(), layout.total_bytes(), &base, &own.handle, &own.desc),
          "mem_alloc");
      own.transport = transport;
      own.base = static_cast<uint8_t*>(base);
      exec::window::initialise(own.base, layout, rank);
      mine = Offer{.has_window = 1, .reserved = 0, .window_bytes = window_bytes, .desc = own.desc};
    } catch (const Error& e) {
      HCOMM_WARN(INIT, "rank %d cannot allocate its mapped window of %llu bytes (%s): direct algorithms are off", rank,
                 static_cast<unsigned long long>(layout.total_bytes()), e.what());
    }
  }
  std::vector<Offer> offers(n);
  bootstrap.allgather(&mine, sizeof mine, offers.data());
  uint64_t smallest = UINT64_MAX;
  for (int r = 0; r < n; ++r) {
    if (!offers[r].has_window) {
      HCOMM_INFO(INIT,
                 "rank %d has no mapped window (another host or transport, or HCOMM_WINDOW_BYTES=0): direct "
                 "algorithms are off",
                 r);
      return nullptr;
    }
    smallest = std::min(smallest, offers[r].window_bytes);
  }

  std::unique_ptr<MappedLinks> links(new MappedLinks(*transport, endpoints, rank, n, smallest));
  links->window_handle_ = std::exchange(own.handle, nullptr);
  links->attach(rank, own.base, window_bytes);
  Outcome outcome{.mapped_all = 1, .reads_all = transport->copies_by_address() ? 1u : 0u};
  for (int r = 0; r < n && outcome.mapped_all; ++r) {
    if (r == rank) continue;
    try {
      void* base = nullptr;
      transport->check(
          transport->iface().mem_map(transport->ctx(), &offers[r].desc, &base, &links->window_mappings_[r]), "mem_map");
      exec::window::check(base, exec::window::Layout{n, offers[r].window_bytes}, r, offers[r].desc.bytes);
      links->attach(r, static_cast<uint8_t*>(base), offers[r].window_bytes);
      if (outcome.reads_all && !links->can_read(r, offers[r].desc.address)) outcome.reads_all = 0;
    } catch (const Error& e) {
      HCOMM_WARN(INIT, "rank %d cannot map the window of rank %d (%s): direct algorithms are off", rank, r, e.what());
      outcome.mapped_all = 0;
    }
  }
  std::vector<Outcome> outcomes(n);
  bootstrap.allgather(&outcome, sizeof outcome, outcomes.data());
  links->peer_buffers_ = true;
  for (int r = 0; r < n; ++r) {
    if (!outcomes[r].mapped_all) return nullptr;
    links->peer_buffers_ = links->peer_buffers_ && outcomes[r].reads_all;
  }
  if (!links->peer_buffers_)
    HCOMM_INFO(INIT,
               "some ranks cannot copy from each other by address (cross-memory attach): direct algorithms use "
               "the windows only");
  return links;
}

// Reads the magic word of the peer's window header where the peer has it.
bool MappedLinks::can_read(int peer, uint64_t address) {
  uint64_t word = 0;
  return transport_.iface().ep_read(endpoints_[peer], &word, address, sizeof word) == HCOMM_SUCCESS &&
         word == exec::window::kMagic;
}

MappedLinks::Mapping MappedLinks::map_desc(const hcomm_mem_desc_t& desc) {
  Mapping m{.desc = desc, .handle = nullptr, .data = nullptr, .last_use = ++uses_};
  void* data = nullptr;
  transport_.check(transport_.iface().mem_map(transport_.ctx(), &desc, &data, &m.handle), "mem_map");
  m.data = static_cast<const uint8_t*>(data);
  return m;
}

const uint8_t* MappedLinks::map(int peer, const hcomm_mem_desc_t& desc) {
  std::vector<Mapping>& mappings = cache_[peer];
  for (Mapping& m : mappings)
    if (same_desc(m.desc, desc)) {
      m.last_use = ++uses_;
      return m.data;
    }
  if (mappings.size() == kMappedBuffersPerPeer) {
    auto oldest = std::min_element(mappings.begin(), mappings.end(),
                                   [](const Mapping& a, const Mapping& b) { return a.last_use < b.last_use; });
    transport_.iface().mem_unmap(oldest->handle);
    mappings.erase(oldest);
  }
  mappings.push_back(map_desc(desc));
  return mappings.back().data;
}

void MappedLinks::read(int peer, uint64_t address, void* local, size_t bytes) {
  transport_.check(transport_.iface().ep_read(endpoints_[peer], local, address, bytes), "read from a peer's memory");
}

void MappedLinks::write(int peer, uint64_t address, const void* local, size_t bytes) {
  transport_.check(transport_.iface().ep_write(endpoints_[peer], local, address, bytes), "write into a peer's memory");
}

void MappedLinks::describe(const void* ptr, size_t bytes, hcomm_mem_desc_t* out) {
  MemoryRegistry::instance().describe(ptr, &transport_, out);
  // Algorithms read peers' buffers only where ranks can also copy them by
  // address (HCOMM_VIEW_PEER_BUFFERS); elsewhere a registration is no use.
  if (out->bytes == 0 && peer_buffers_ && auto_register_from_ && bytes >= auto_register_from_)
    AutoRegistry::instance().describe(transport_, ptr, bytes, out);
}

}  // namespace hcomm::links
