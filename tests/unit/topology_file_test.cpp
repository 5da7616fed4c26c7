#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>

#include "core/common/error.hpp"
#include "core/topology/json.hpp"
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

TEST(TopologyFile, JsonWriterAndReaderAgreeOnEveryKindOfValue) {
  const json::Value v = json::Object{{"s", "quote \" backslash \\ tab \t newline \n \x01"},
                                     {"n", json::Array{0, -3, 0.1, 1e-300, 12345678901234.5}},
                                     {"b", json::Array{true, false, nullptr}},
                                     {"empty", json::Object{}},
                                     {"nested", json::Array{json::Array{}, json::Object{{"k", json::Array{1}}}}}};
  const std::string text = json::write(v);
  EXPECT_EQ(json::write(json::parse(text)), text);
  const json::Value back = json::parse(text);
  EXPECT_EQ(*back.find("s")->as<std::string>(), "quote \" backslash \\ tab \t newline \n \x01");
  EXPECT_EQ(*back.find("n")->as<json::Array>()->at(2).as<double>(), 0.1);
  EXPECT_EQ(*back.find("n")->as<json::Array>()->at(3).as<double>(), 1e-300);
  EXPECT_EQ(json::parse(R"("\u00e9\u0041")").as<std::string>()->size(), 3u);
  EXPECT_EQ(back.find("missing"), nullptr);
}

TEST(TopologyFile, BadJsonSaysWhere) {
  EXPECT_EQ(error_of([] { json::parse("{\n  \"hosts\": [1, 2,\n  ]\n}"); }),
            "line 3, column 3: expected a value (object, array, string, number, true, false or null)");
  EXPECT_EQ(error_of([] { json::parse("{\"a\": 1 \"b\": 2}"); }),
            "line 1, column 9: expected ',' or '}' after an object member");
  EXPECT_EQ(error_of([] { json::parse("[1, 2"); }), "line 1, column 6: expected ',' or ']' after an array element");
  EXPECT_EQ(error_of([] { json::parse("{\"a\" 1}"); }), "line 1, column 6: expected ':' after the member name");
  EXPECT_EQ(error_of([] { json::parse("\"abc"); }), "line 1, column 5: unterminated string");
  EXPECT_EQ(error_of([] { json::parse("[1x]"); }), "line 1, column 3: expected ',' or ']' after an array element");
  EXPECT_EQ(error_of([] { json::parse("-"); }), "line 1, column 2: expected digits in a number");
  EXPECT_EQ(error_of([] { json::parse("{} x"); }), "line 1, column 4: unexpected text after the end of the document");
  EXPECT_EQ(error_of([] { json::parse(""); }), "line 1, column 1: expected a value, found the end of the text");
  EXPECT_EQ(error_of([] { json::parse(std::string(100, '[')); }), "line 1, column 66: nesting deeper than 64 levels");
}

// A valid document with members replaced (the first occurrence of each
// `from`): the error names the member that is wrong.
std::string error_with(const std::vector<std::pair<std::string, std::string>>& edits) {
  std::string text = json::write(to_json(two_hosts(), links_of(two_hosts())));
  for (const auto& [from, to] : edits) {
    const size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) text.replace(at, from.size(), to);
  }
  return error_of([&] { from_json(json::parse(text)); });
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
                ": line 3, column 11: expected a value (object, array, string, number, true, false or null)");
  std::remove(path);
  EXPECT_EQ(error_of([&] { read_topology_file(path); }),
            std::string("topology file ") + path + ": cannot be read (No such file or directory)");
}

}  // namespace
}  // namespace hcomm::topology
