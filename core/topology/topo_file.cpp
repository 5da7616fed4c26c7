#include "core/topology/topo_file.hpp"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/common/error.hpp"
#include "core/common/json.hpp"

namespace hcomm::topology {

namespace {

using Json = nlohmann::ordered_json;

constexpr const char* kFormat = "hcomm-topology";
constexpr int kVersion = 1;
constexpr const char* kNicKinds[] = {"network", "openfabrics"};

Json text_or_null(const char* s) { return *s ? Json(s) : Json(); }

// A member of the document, read with its path for errors.
class Field {
 public:
  Field(const Json& v, std::string path) : v_(v), path_(std::move(path)) {}

  [[noreturn]] void fail(const std::string& what) const {
    HCOMM_THROW(HCOMM_ERR_CONFIG, "%s: %s", path_.empty() ? "the document" : path_.c_str(), what.c_str());
  }
  Field operator[](const char* key) const {
    if (!v_.is_object()) fail("expected an object");
    const auto m = v_.find(key);
    if (m == v_.end()) fail(format("member \"%s\" is missing", key));
    return Field(*m, path_.empty() ? key : path_ + "." + key);
  }
  bool has(const char* key) const { return v_.contains(key); }
  std::vector<Field> items() const {
    if (!v_.is_array()) fail("expected an array");
    std::vector<Field> out;
    for (size_t i = 0; i < v_.size(); ++i) out.emplace_back(v_[i], path_ + "[" + std::to_string(i) + "]");
    return out;
  }
  double number() const {
    if (!v_.is_number()) fail("expected a number");
    return v_.get<double>();
  }
  // An integer in [lo, hi] (written as one, or as a number with no fraction).
  int64_t integer(int64_t lo, int64_t hi) const {
    const double d = number();
    const bool whole = v_.is_number_integer() ? !(v_.is_number_unsigned() && v_.get<uint64_t>() > INT64_MAX)
                                              : d == std::floor(d) && std::fabs(d) < 0x1p63;
    const int64_t i = !whole ? 0 : v_.is_number_integer() ? v_.get<int64_t>() : static_cast<int64_t>(d);
    if (!whole || i < lo || i > hi)
      fail(format("%s is not an integer in %lld..%lld", v_.dump().c_str(), static_cast<long long>(lo),
                  static_cast<long long>(hi)));
    return i;
  }
  // A string (null reads as ""), at most max_len bytes.
  std::string text(size_t max_len) const {
    if (v_.is_null()) return "";
    if (!v_.is_string()) fail("expected a string or null");
    const std::string& s = v_.get_ref<const std::string&>();
    if (s.size() > max_len) fail(format("\"%s\" is longer than %zu bytes", s.c_str(), max_len));
    return s;
  }

 private:
  const Json& v_;
  std::string path_;
};

Nic read_nic(const Field& f) {
  Nic nic{};
  set_field(nic.name, f["name"].text(sizeof nic.name - 1));
  set_field(nic.pci, f["pci"].text(sizeof nic.pci - 1));
  const std::string kind = f["kind"].text(16);
  if (kind == kNicKinds[kNicNetwork])
    nic.kind = kNicNetwork;
  else if (kind == kNicKinds[kNicOpenFabrics])
    nic.kind = kNicOpenFabrics;
  else
    f["kind"].fail("expected \"network\" or \"openfabrics\"");
  nic.numa = static_cast<int32_t>(f["numa"].integer(-1, INT32_MAX));
  return nic;
}

Gpu read_gpu(const Field& f) {
  Gpu gpu{};
  set_field(gpu.pci, f["pci"].text(sizeof gpu.pci - 1));
  set_field(gpu.name, f["name"].text(sizeof gpu.name - 1));
  gpu.numa = static_cast<int32_t>(f["numa"].integer(-1, INT32_MAX));
  return gpu;
}

// A host's identity, NICs and GPUs (optional), as a blank description of one
// of its ranks.
Description read_host(const Field& f) {
  Description d = blank_description();
  set_field(d.host.hostname, f["name"].text(sizeof d.host.hostname - 1));
  set_field(d.host.boot_id, f["boot_id"].text(sizeof d.host.boot_id - 1));
  d.host.net_ns = static_cast<uint64_t>(f["net_ns"].integer(0, int64_t{1} << 53));
  std::vector<Field> nics = f["nics"].items();
  if (nics.size() > kMaxNics) f["nics"].fail("more NICs than a host may have (8)");
  for (const Field& n : nics) d.nics[d.nnics++] = read_nic(n);
  if (f.has("gpus")) {
    std::vector<Field> gpus = f["gpus"].items();
    if (gpus.size() > kMaxGpus) f["gpus"].fail("more GPUs than a host may have (16)");
    for (const Field& g : gpus) d.gpus[d.ngpus++] = read_gpu(g);
  }
  return d;
}

}  // namespace

Json to_json(const Topology& t, std::span<const LinkEntry> links) {
  Json hosts = Json::array(), ranks = Json::array(), link_list = Json::array(), host_ranks = Json::array(),
       rails = Json::array();
  for (int h = 0; h < t.nhosts(); ++h) {
    const Description& d = t.rank(t.host_ranks(h).front());
    Json nics = Json::array();
    for (uint32_t i = 0; i < d.nnics; ++i)
      nics.push_back({{"name", d.nics[i].name},
                      {"kind", kNicKinds[d.nics[i].kind == kNicOpenFabrics]},
                      {"pci", text_or_null(d.nics[i].pci)},
                      {"numa", d.nics[i].numa}});
    Json gpus = Json::array();
    for (uint32_t i = 0; i < d.ngpus; ++i)
      gpus.push_back({{"pci", d.gpus[i].pci}, {"name", text_or_null(d.gpus[i].name)}, {"numa", d.gpus[i].numa}});
    hosts.push_back({{"name", d.host.hostname},
                     {"boot_id", d.host.boot_id},
                     {"net_ns", d.host.net_ns},
                     {"nics", std::move(nics)},
                     {"gpus", std::move(gpus)}});
    host_ranks.push_back(t.host_ranks(h));
  }
  for (int r = 0; r < t.size(); ++r) {
    const Description& d = t.rank(r);
    ranks.push_back({{"rank", r},
                     {"host", t.host_of()[r]},
                     {"numa", d.numa},
                     {"cpus", text_or_null(d.cpus)},
                     {"last_cpu", d.last_cpu},
                     {"llc", d.llc},
                     {"gpu", text_or_null(d.gpu)}});
  }
  for (const LinkEntry& l : links)
    link_list.push_back({{"ranks", {l.a, l.b}},
                         {"class", link_class_name(t.link_class(l.a, l.b))},
                         {"transport", l.transport},
                         {"bandwidth_gbps", l.score.bandwidth_gbps},
                         {"latency_us", l.score.latency_us}});
  for (const auto& rail : t.rails()) rails.push_back(rail);
  return {{"format", kFormat},
          {"version", kVersion},
          {"hosts", std::move(hosts)},
          {"ranks", std::move(ranks)},
          {"links", std::move(link_list)},
          {"levels",
           {{"node_of", t.host_of()},
            {"hosts", std::move(host_ranks)},
            {"leaders", t.leaders()},
            {"rails", std::move(rails)}}}};
}

Topology from_json(const Json& document) {
  const Field doc(document, "");
  if (doc["format"].text(64) != kFormat) doc["format"].fail("expected \"hcomm-topology\"");
  if (doc["version"].integer(0, INT32_MAX) != kVersion) doc["version"].fail("only version 1 is known");
  std::vector<Description> hosts;
  for (const Field& h : doc["hosts"].items()) hosts.push_back(read_host(h));
  std::vector<Field> rank_fields = doc["ranks"].items();
  if (rank_fields.empty()) doc["ranks"].fail("a topology needs at least one rank");
  std::vector<Description> ranks;
  for (size_t r = 0; r < rank_fields.size(); ++r) {
    const Field& f = rank_fields[r];
    if (f["rank"].integer(0, INT32_MAX) != static_cast<int64_t>(r))
      f["rank"].fail(format("expected %zu: ranks are listed in order", r).c_str());
    if (hosts.empty()) doc["hosts"].fail("a topology needs at least one host");
    Description d = hosts[f["host"].integer(0, static_cast<int64_t>(hosts.size()) - 1)];
    d.numa = static_cast<int32_t>(f["numa"].integer(-1, INT32_MAX));
    d.last_cpu = static_cast<int32_t>(f["last_cpu"].integer(-1, INT32_MAX));
    d.llc = f.has("llc") ? static_cast<int32_t>(f["llc"].integer(-1, INT32_MAX)) : -1;
    set_field(d.cpus, f["cpus"].text(sizeof d.cpus - 1));
    set_field(d.gpu, f["gpu"].text(sizeof d.gpu - 1));
    ranks.push_back(d);
  }
  Topology t(std::move(ranks));
  if (t.nhosts() != static_cast<int>(hosts.size()))
    doc["hosts"].fail(format("lists %zu hosts but the ranks use %d distinct ones (two entries are identical, or one "
                             "is unused)",
                             hosts.size(), t.nhosts())
                          .c_str());
  for (const Field& l : doc["links"].items()) {
    std::vector<Field> pair = l["ranks"].items();
    if (pair.size() != 2) l["ranks"].fail("expected two ranks");
    const int a = static_cast<int>(pair[0].integer(0, t.size() - 1));
    const int b = static_cast<int>(pair[1].integer(0, t.size() - 1));
    if (a == b) l["ranks"].fail("a link joins two different ranks");
    if (l.has("class") && l["class"].text(16) != link_class_name(t.link_class(a, b)))
      l["class"].fail(format("ranks %d and %d are linked by class \"%s\" (their hosts and NUMA nodes say so)", a, b,
                             link_class_name(t.link_class(a, b)))
                          .c_str());
    const double bw = l["bandwidth_gbps"].number(), lat = l["latency_us"].number();
    if (bw <= 0 || lat < 0) l.fail("bandwidth_gbps must be above 0 and latency_us at least 0");
    t.describe_link(a, b, {.reachable = 1, .bandwidth_gbps = bw, .latency_us = lat});
  }
  return t;
}

Topology read_topology_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) HCOMM_THROW(HCOMM_ERR_CONFIG, "topology file %s: cannot be read (%s)", path.c_str(), strerror(errno));
  std::stringstream text;
  text << in.rdbuf();
  try {
    return from_json(json::parse(text.str()));
  } catch (const Error& e) {
    HCOMM_THROW(e.code(), "topology file %s: %s", path.c_str(), e.what());
  }
}

}  // namespace hcomm::topology
