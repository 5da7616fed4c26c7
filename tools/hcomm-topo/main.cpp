// hcomm-topo: the topology a communicator sees, run under hcomm-run like any
// HComm program. Rank 0 prints, in the spirit of `nvidia-smi topo -m`, the
// link class and the transport of every pair of ranks and the hierarchy
// (hosts, NUMA nodes, leaders, rails); --json prints the topology document
// instead and --dump FILE writes it (HCOMM_TOPO_FILE reads that file).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "common/command_line.hpp"
#include "core/common/json.hpp"
#include "hcomm/hcomm.h"

namespace {

namespace json = hcomm::json;
using Json = nlohmann::ordered_json;

struct Options {
  bool json = false;
  std::string dump;
  std::string transports;  // empty: the library's default
};

void define_options(CLI::App& app, Options& o) {
  hcomm::tools::describe(app, "hcomm-topo",
                         "Prints the link class and transport of every pair of ranks and the hierarchy. Run it "
                         "under a launcher: hcomm-run -n N hcomm-topo [OPTIONS]");
  hcomm::tools::add_switch(app, "--json", o.json, "Print the topology document (JSON) instead");
  app.add_option("--dump", o.dump, "Also write the topology document to FILE (HCOMM_TOPO_FILE reads it)")
      ->type_name("FILE");
  app.add_option("--transports", o.transports,
                 "The communicator's hcomm_config_t.transports (HCOMM_TRANSPORTS, when set, wins)")
      ->type_name("LIST");
}

// The document as hcomm_comm_topology writes it; a missing member is a bug of the library.
const Json& at(const Json& v, const char* key) {
  static const Json none;
  const auto m = v.find(key);
  return m != v.end() ? *m : none;
}
const Json& items(const Json& v) {
  static const Json none = Json::array();
  return v.is_array() ? v : none;
}
int integer(const Json& v) { return v.is_number() ? v.get<int>() : -1; }
std::string text(const Json& v) { return v.is_string() ? v.get<std::string>() : "-"; }
std::string list(const Json& v) {
  std::string out;
  for (const Json& x : items(v)) out += (out.empty() ? "" : ",") + std::to_string(integer(x));
  return out;
}

// A table whose columns are as wide as their widest cell.
void print_table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width;
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size(); ++c) {
      if (width.size() <= c) width.push_back(0);
      width[c] = std::max(width[c], row[c].size());
    }
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) line += row[c] + std::string(width[c] - row[c].size() + 2, ' ');
    while (!line.empty() && line.back() == ' ') line.pop_back();
    std::printf("%s\n", line.c_str());
  }
}

void print_matrix(const Json& doc) {
  const Json& ranks = items(at(doc, "ranks"));
  const size_t n = ranks.size();
  std::vector<std::vector<std::string>> cls(n, std::vector<std::string>(n, "SELF")),
      tr(n, std::vector<std::string>(n, "self"));
  for (const Json& link : items(at(doc, "links"))) {
    const Json& pair = items(at(link, "ranks"));
    const int a = integer(pair.at(0)), b = integer(pair.at(1));
    std::string c = text(at(link, "class"));
    for (char& ch : c) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    cls[a][b] = cls[b][a] = c;
    tr[a][b] = tr[b][a] = text(at(link, "transport"));
  }
  std::vector<std::string> header{""};
  for (size_t r = 0; r < n; ++r) header.push_back("r" + std::to_string(r));
  std::vector<std::vector<std::string>> classes{header}, transports{header};
  classes[0].insert(classes[0].end(), {"host", "numa", "llc", "cpus", "gpu"});
  for (size_t r = 0; r < n; ++r) {
    std::vector<std::string> row{"r" + std::to_string(r)}, trow{"r" + std::to_string(r)};
    row.insert(row.end(), cls[r].begin(), cls[r].end());
    trow.insert(trow.end(), tr[r].begin(), tr[r].end());
    const int numa = integer(at(ranks[r], "numa")), llc = integer(at(ranks[r], "llc"));
    row.insert(row.end(), {std::to_string(integer(at(ranks[r], "host"))), numa < 0 ? "-" : std::to_string(numa),
                           llc < 0 ? "-" : std::to_string(llc), text(at(ranks[r], "cpus")),
                           text(at(ranks[r], "gpu"))});
    classes.push_back(row);
    transports.push_back(trow);
  }
  std::printf("Link classes\n");
  print_table(classes);
  std::printf(
      "\nSELF = the rank itself, NUMA = one host and NUMA node, HOST = one host across NUMA nodes (or unbound),\n"
      "NET = between hosts\n\nTransports\n");
  print_table(transports);
}

void print_hierarchy(const Json& doc) {
  const Json& levels = at(doc, "levels");
  const Json& hosts = items(at(doc, "hosts"));
  const Json& host_ranks = items(at(levels, "hosts"));
  const Json& ranks = items(at(doc, "ranks"));
  std::printf("\nHierarchy\n");
  for (size_t h = 0; h < hosts.size() && h < host_ranks.size(); ++h) {
    std::map<int, std::string> numa;  // NUMA node -> its ranks
    for (const Json& r : items(host_ranks[h])) {
      std::string& s = numa[integer(at(ranks.at(integer(r)), "numa"))];
      s += (s.empty() ? "" : ",") + std::to_string(integer(r));
    }
    std::printf("host %zu %s: ranks %s, leader %d\n", h, text(at(hosts[h], "name")).c_str(),
                list(host_ranks[h]).c_str(), integer(items(host_ranks[h]).at(0)));
    for (const auto& [node, members] : numa)
      std::printf("  NUMA %s: ranks %s\n", node < 0 ? "unknown" : std::to_string(node).c_str(), members.c_str());
    for (const Json& nic : items(at(hosts[h], "nics")))
      std::printf("  NIC %s (%s, PCI %s, NUMA %d)\n", text(at(nic, "name")).c_str(), text(at(nic, "kind")).c_str(),
                  text(at(nic, "pci")).c_str(), integer(at(nic, "numa")));
    for (const Json& gpu : items(at(hosts[h], "gpus")))
      std::printf("  GPU %s (%s, NUMA %d)\n", text(at(gpu, "pci")).c_str(), text(at(gpu, "name")).c_str(),
                  integer(at(gpu, "numa")));
  }
  std::printf("leaders: %s\n", list(at(levels, "leaders")).c_str());
  const Json& rails = items(at(levels, "rails"));
  if (rails.empty()) std::printf("rails: none (no host has several NICs)\n");
  for (size_t i = 0; i < rails.size(); ++i) std::printf("rail %zu: ranks %s\n", i, list(rails[i]).c_str());
}

int fail(const char* what, hcomm_result_t rc) {
  std::fprintf(stderr, "hcomm-topo: %s: %s: %s\n", what, hcomm_result_string(rc), hcomm_get_last_error());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  CLI::App app;
  define_options(app, opt);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return hcomm::tools::parse_error_exit(app, e);
  }
  hcomm_config_t config = HCOMM_CONFIG_INITIALIZER;
  config.transports = opt.transports.empty() ? nullptr : opt.transports.c_str();
  hcomm_comm_t comm = nullptr;
  if (hcomm_result_t rc = hcomm_comm_init_env_config(&comm, &config); rc != HCOMM_SUCCESS)
    return fail("hcomm_comm_init_env_config", rc);
  int rank = 0, status = 0;
  hcomm_comm_rank(comm, &rank);
  const char* text_json = nullptr;
  if (hcomm_result_t rc = hcomm_comm_topology(comm, &text_json); rc != HCOMM_SUCCESS) {
    status = fail("hcomm_comm_topology", rc);
  } else if (rank == 0) {
    if (!opt.dump.empty()) {
      std::ofstream out(opt.dump);
      if (!(out << text_json) || !out.flush()) {
        std::fprintf(stderr, "hcomm-topo: --dump: cannot write %s\n", opt.dump.c_str());
        status = 1;
      }
    }
    if (opt.json) {
      std::printf("%s", text_json);
    } else {
      const Json doc = json::parse(text_json);
      int nranks = 0;
      hcomm_comm_size(comm, &nranks);
      const size_t nhosts = items(at(doc, "hosts")).size();
      std::printf("hcomm-topo: %d ranks on %zu host%s\n\n", nranks, nhosts, nhosts == 1 ? "" : "s");
      print_matrix(doc);
      print_hierarchy(doc);
    }
  }
  hcomm_comm_destroy(comm);
  return status;
}
