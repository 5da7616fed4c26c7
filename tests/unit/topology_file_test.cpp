#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>

#include "core/common/error.hpp"
#include "core/common/json.hpp"
#include "core/topology/topo_file.hpp"
#include "tests/unit/topology_fixtures.hpp"

namespace hcomm::topology {
namespace {

using testing::made_up_rank;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), HCOMM_ERR_CONFIG) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

// Two hosts with two NICs each, ranks interleaved, one rank unbound.
Topology two_hosts() {
  const std::vector<testing::NicSpec> nics = {{"ib0", 0}, {"ib1", 1}};
  return Topology({made_up_rank("a", 11, 0, nics), made_up_rank("b", 12, 1, nics), made_up_rank("a", 11, 1, nics),
                   made_up_rank("b", 12, -1, nics), made_up_rank("a", 11, 0, nics)});
}

std::vector<LinkEntry> links_of(const Topology& t) {
  std::vector<LinkEntry> out;
  for (int a = 0; a < t.size(); ++a)
    for (int b = a + 1; b < t.size(); ++b)
      out.push_back({.a = a,
                     .b = b,
                     .transport = t.same_host(a, b) ? "shm" : "tcp",
                     .score = {.reachable = 1,
                               .bandwidth_gbps = t.same_host(a, b) ? 10.0 : 1.25 + a,
                               .latency_us = t.same_host(a, b) ? 0.5 : 6.0 + 0.1 * b}});
  return out;
}

TEST(TopologyFile, RoundTripsThroughJson) {
  const Topology t = two_hosts();
  const std::vector<LinkEntry> links = links_of(t);
  const std::string text = json::write(to_json(t, links));
  const Topology back = from_json(json::parse(text));
  ASSERT_EQ(back.size(), t.size());
  EXPECT_EQ(back.host_of(), t.host_of());
  EXPECT_EQ(back.host_of(), (std::vector<int>{0, 1, 0, 1, 0}));
  for (int r = 0; r < t.size(); ++r)
    EXPECT_EQ(std::memcmp(&back.rank(r), &t.rank(r), sizeof(Description)), 0) << "rank " << r;
  for (const LinkEntry& l : links) {
    ASSERT_TRUE(back.described_link(l.a, l.b).has_value()) << l.a << "-" << l.b;
    EXPECT_EQ(back.described_link(l.a, l.b)->bandwidth_gbps, l.score.bandwidth_gbps);
    EXPECT_EQ(back.described_link(l.a, l.b)->latency_us, l.score.latency_us);
  }
  // Writing what was read gives the same text: the format is stable.
  EXPECT_EQ(json::write(to_json(back, links)), text);
  // Files written before ranks had "llc" read as unknown caches.
  std::string older = text;
  for (size_t at; (at = older.find(R"(, "llc": )")) != std::string::npos;)
    older.erase(at, older.find(',', at + 1) - at);
  ASSERT_EQ(older.find("llc"), std::string::npos) << older;
  const Topology old = from_json(json::parse(older));
  for (int r = 0; r < t.size(); ++r) {
    EXPECT_EQ(back.rank(r).llc, t.rank(r).numa) << "rank " << r;
    EXPECT_EQ(old.rank(r).llc, -1) << "rank " << r;
  }
  // One line per link, classes and transports named; levels derived.
  EXPECT_NE(
      text.find(R"({"ranks": [0, 1], "class": "net", "transport": "tcp", "bandwidth_gbps": 1.25, "latency_us": 6.1})"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find(R"({"ranks": [0, 2], "class": "host", "transport": "shm")"), std::string::npos) << text;
  EXPECT_NE(text.find(R"({"ranks": [0, 4], "class": "numa")"), std::string::npos) << text;
  EXPECT_NE(text.find(R"("node_of": [0, 1, 0, 1, 0])"), std::string::npos) << text;
  EXPECT_NE(text.find(R"("leaders": [0, 1])"), std::string::npos) << text;
  EXPECT_NE(text.find(R"("rails": [[0, 3, 4], [1, 2]])"), std::string::npos) << text;
}

// A valid document with members replaced (the first occurrence of each
// `from`).
std::string edited(const std::vector<std::pair<std::string, std::string>>& edits) {
  std::string text = json::write(to_json(two_hosts(), links_of(two_hosts())));
  for (const auto& [from, to] : edits) {
    const size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) text.replace(at, from.size(), to);
  }
  return text;
}
// The error of an edited document: it names the member that is wrong.
std::string error_with(const std::vector<std::pair<std::string, std::string>>& edits) {
  return error_of([&] { from_json(json::parse(edited(edits))); });
}
std::string error_with(const std::string& from, const std::string& to) { return error_with({{from, to}}); }

TEST(TopologyFile, WrongMembersAreNamed) {
  EXPECT_EQ(error_with(R"("format": "hcomm-topology")", R"("format": "other")"), "format: expected \"hcomm-topology\"");
  EXPECT_EQ(error_with(R"("version": 1)", R"("version": 2)"), "version: only version 1 is known");
  EXPECT_EQ(error_with(R"({"rank": 2, "host": 0)", R"({"rank": 2, "host": 2)"),
            "ranks[2].host: 2 is not an integer in 0..1");
  EXPECT_EQ(error_with(R"({"rank": 3, "host": 1, "numa": -1)", R"({"rank": 3, "host": 1, "numa": 0.5)"),
            "ranks[3].numa: 0.5 is not an integer in -1..2147483647");
  EXPECT_EQ(error_with(R"({"rank": 1,)", R"({"rank": 4,)"), "ranks[1].rank: expected 1: ranks are listed in order");
  EXPECT_EQ(error_with(R"("cpus": "0-1", )", ""), "ranks[0]: member \"cpus\" is missing");
  EXPECT_EQ(error_with(R"("kind": "network")", R"("kind": "wifi")"),
            "hosts[0].nics[0].kind: expected \"network\" or \"openfabrics\"");
  EXPECT_EQ(error_with(R"("ranks": [0, 1], "class": "net")", R"("ranks": [0, 1], "class": "numa")"),
            "links[0].class: ranks 0 and 1 are linked by class \"net\" (their hosts and NUMA nodes say so)");
  EXPECT_EQ(error_with(R"("ranks": [0, 1], "class": "net")", R"("ranks": [0, 9], "class": "net")"),
            "links[0].ranks[1]: 9 is not an integer in 0..4");
  EXPECT_EQ(error_with(R"("ranks": [0, 1], "class": "net")", R"("ranks": [1, 1], "class": "net")"),
            "links[0].ranks: a link joins two different ranks");
  EXPECT_EQ(error_with(R"("bandwidth_gbps": 1.25)", R"("bandwidth_gbps": 0)"),
            "links[0]: bandwidth_gbps must be above 0 and latency_us at least 0");
  EXPECT_EQ(error_with(R"("bandwidth_gbps": 1.25)", R"("bandwidth_gbps": "fast")"),
            "links[0].bandwidth_gbps: expected a number");
  EXPECT_EQ(error_with({{R"("name": "b")", R"("name": "a")"},
                        {R"("boot-b")", R"("boot-a")"},
                        {R"("net_ns": 12)", R"("net_ns": 11)"}}),
            "hosts: lists 2 hosts but the ranks use 1 distinct ones (two entries are identical, or one is unused)");
}

// A value of the wrong type, or beyond what its member holds, is named with
// its path; so is a document that is no object.
TEST(TopologyFile, WrongTypesAreNamed) {
  EXPECT_EQ(error_with(R"("version": 1)", R"("version": "1")"), "version: expected a number");
  EXPECT_EQ(error_with(R"("nics": [)", R"("nics": {"x": 1}, "was": [)"), "hosts[0].nics: expected an array");
  EXPECT_EQ(error_with(R"({"rank": 1,)", R"({"rank": true,)"), "ranks[1].rank: expected a number");
  EXPECT_EQ(error_with(R"("cpus": "0-1")", R"("cpus": 1)"), "ranks[0].cpus: expected a string or null");
  EXPECT_EQ(error_with(R"("net_ns": 11)", R"("net_ns": 18446744073709551615)"),
            "hosts[0].net_ns: 18446744073709551615 is not an integer in 0..9007199254740992");
  EXPECT_EQ(error_with(R"({"rank": 2, "host": 0)", R"({"rank": 2, "host": 1e300)"),
            "ranks[2].host: 1e+300 is not an integer in 0..1");
  // A whole number written with a fraction reads as the integer.
  EXPECT_EQ(from_json(json::parse(edited({{R"({"rank": 2, "host": 0)", R"({"rank": 2, "host": 0.0)"}}))).host_of(),
            (std::vector<int>{0, 1, 0, 1, 0}));
  EXPECT_EQ(error_of([] { from_json(json::parse("[]")); }), "the document: expected an object");
  EXPECT_EQ(error_of([] { from_json(json::parse("{}")); }), "the document: member \"format\" is missing");
}

TEST(TopologyFile, ReadingAFileNamesIt) {
  char path[] = "/tmp/hcomm-topo-test-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  {
    std::ofstream out(path);
    out << json::write(to_json(two_hosts(), links_of(two_hosts())));
  }
  const Topology t = read_topology_file(path);
  EXPECT_EQ(t.size(), 5);
  EXPECT_EQ(t.nhosts(), 2);
  {
    std::ofstream out(path);
    out << "{\"format\": \"hcomm-topology\",\n\"version\": 1,\n\"hosts\": [}\n";
  }
  EXPECT_EQ(error_of([&] { read_topology_file(path); }),
            std::string("topology file ") + path +
                ": line 3, column 11: syntax error while parsing value - unexpected '}'; expected '[', '{', or a "
                "literal");
  std::remove(path);
  EXPECT_EQ(error_of([&] { read_topology_file(path); }),
            std::string("topology file ") + path + ": cannot be read (No such file or directory)");
}

}  // namespace
}  // namespace hcomm::topology
