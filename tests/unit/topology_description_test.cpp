#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "core/common/error.hpp"
#include "core/topology/description.hpp"
#include "tests/unit/topology_fixtures.hpp"

namespace hcomm::topology {
namespace {

using testing::made_up_rank;

void expect_same(const Description& a, const Description& b) {
  EXPECT_EQ(std::memcmp(&a, &b, sizeof a), 0);
  EXPECT_TRUE(a.host == b.host);
  EXPECT_EQ(a.numa, b.numa);
  EXPECT_EQ(a.last_cpu, b.last_cpu);
  EXPECT_STREQ(a.cpus, b.cpus);
  EXPECT_STREQ(a.gpu, b.gpu);
  ASSERT_EQ(a.nnics, b.nnics);
  for (uint32_t i = 0; i < a.nnics; ++i) {
    EXPECT_STREQ(a.nics[i].name, b.nics[i].name);
    EXPECT_STREQ(a.nics[i].pci, b.nics[i].pci);
    EXPECT_EQ(a.nics[i].kind, b.nics[i].kind);
    EXPECT_EQ(a.nics[i].numa, b.nics[i].numa);
  }
}

TEST(TopologyDescription, EncodesToAFixedSizeAndBack) {
  const Description d = made_up_rank("node-7", 4026531993u, 1, {{"eth0", 0}, {"ib0", 1}, {"ib1", -1}});
  const std::vector<uint8_t> bytes = encode(d);
  ASSERT_EQ(bytes.size(), kEncodedBytes);
  const Description back = decode(bytes, 3);
  expect_same(back, d);
  EXPECT_STREQ(back.host.hostname, "node-7");
  EXPECT_EQ(back.host.net_ns, 4026531993u);
  EXPECT_EQ(back.nnics, 3u);
  EXPECT_STREQ(back.nics[2].name, "ib1");
  // The same description always encodes to the same bytes (no stray padding).
  EXPECT_EQ(encode(made_up_rank("node-7", 4026531993u, 1, {{"eth0", 0}, {"ib0", 1}, {"ib1", -1}})), bytes);
}

TEST(TopologyDescription, DecodeNamesTheRankOfADamagedRecord) {
  std::vector<uint8_t> bytes = encode(made_up_rank("a", 1, 0));
  try {
    decode(std::span(bytes).first(bytes.size() - 1), 5);
    FAIL() << "a short record decoded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rank 5's topology record is " + std::to_string(bytes.size() - 1) + " bytes"),
              std::string::npos)
        << e.what();
  }
  std::vector<uint8_t> wrong_magic = bytes;
  wrong_magic[0] ^= 0xFF;
  try {
    decode(wrong_magic, 2);
    FAIL() << "a record with a wrong magic decoded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), HCOMM_ERR_CONFIG);
    EXPECT_NE(std::string(e.what()).find("rank 2's topology record has magic"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("same HComm build"), std::string::npos) << e.what();
  }
  Description unterminated = made_up_rank("a", 1, 0);
  std::memset(unterminated.cpus, 'x', sizeof unterminated.cpus);
  EXPECT_THROW(decode(encode(unterminated), 0), Error);
  Description too_many = made_up_rank("a", 1, 0);
  too_many.nnics = kMaxNics + 1;
  EXPECT_THROW(decode(encode(too_many), 0), Error);
}

TEST(TopologyDescription, FieldsAreCutToFitAndTerminated) {
  char field[8];
  std::memset(field, 'z', sizeof field);
  set_field(field, "0123456789");
  EXPECT_STREQ(field, "0123456");
  set_field(field, "ab");
  EXPECT_STREQ(field, "ab");
}

// Host identity: boot id, hostname and network namespace, each read from the system.
TEST(TopologyDescription, DiscoversThisProcess) {
  const Description d = discover();
  std::ifstream boot("/proc/sys/kernel/random/boot_id");
  std::string boot_id;
  std::getline(boot, boot_id);
  EXPECT_EQ(std::string(d.host.boot_id), boot_id);
  char name[128] = {};
  ASSERT_EQ(gethostname(name, sizeof name - 1), 0);
  EXPECT_EQ(std::string(d.host.hostname), std::string(name));
  struct stat st {};
  ASSERT_EQ(stat("/proc/self/ns/net", &st), 0);
  EXPECT_EQ(d.host.net_ns, static_cast<uint64_t>(st.st_ino));
  // hwloc reads the binding: the CPUs this process may run on, which hold its last CPU.
  cpu_set_t cpus;
  ASSERT_EQ(sched_getaffinity(0, sizeof cpus, &cpus), 0);
  ASSERT_STRNE(d.cpus, "");
  ASSERT_GE(d.last_cpu, 0);
  EXPECT_TRUE(CPU_ISSET(d.last_cpu, &cpus)) << "last cpu " << d.last_cpu << " outside the affinity mask";
  EXPECT_GE(d.numa, -1);
  EXPECT_LE(d.nnics, static_cast<uint32_t>(kMaxNics));
  for (uint32_t i = 1; i < d.nnics; ++i) EXPECT_LT(std::strcmp(d.nics[i - 1].name, d.nics[i].name), 0);
  EXPECT_STREQ(d.gpu, "");  // no device plugin installs a GPU locator here
  expect_same(decode(encode(d), 0), d);
}

// The CPUs sharing CPU c's last-level cache, as the kernel lists them, or ""
// when it lists no cache.
std::string llc_siblings(int c) {
  int level = 0;
  std::string siblings;
  const std::filesystem::path dir = "/sys/devices/system/cpu/cpu" + std::to_string(c) + "/cache";
  std::error_code ec;
  for (const auto& index : std::filesystem::directory_iterator(dir, ec)) {
    std::ifstream level_file(index.path() / "level"), type_file(index.path() / "type"),
        shared_file(index.path() / "shared_cpu_list");
    int l = 0;
    std::string type, shared;
    if (!(level_file >> l) || !(type_file >> type) || !(shared_file >> shared) || type == "Instruction") continue;
    if (l > level) level = l, siblings = shared;
  }
  return siblings;
}

// Bound to one CPU at a time, the process is under that CPU's last-level
// cache: CPUs the kernel lists as sharing it get the same one, others not.
TEST(TopologyDescription, TheLastLevelCacheIsTheBoundCpusOne) {
  cpu_set_t allowed;
  ASSERT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
  std::map<std::string, int32_t> llc_of_siblings;
  for (int c = 0; c < CPU_SETSIZE && llc_of_siblings.size() < 8; ++c) {
    if (!CPU_ISSET(c, &allowed)) continue;
    const std::string siblings = llc_siblings(c);
    if (siblings.empty()) continue;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(c, &one);
    ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
    const int32_t llc = discover().llc;
    ASSERT_EQ(sched_setaffinity(0, sizeof allowed, &allowed), 0);
    EXPECT_GE(llc, 0) << "cpu " << c;
    const auto [known, fresh] = llc_of_siblings.emplace(siblings, llc);
    if (!fresh) {
      EXPECT_EQ(llc, known->second) << "cpu " << c << " shares its last-level cache with " << siblings;
    }
    for (const auto& [other, other_llc] : llc_of_siblings) {
      if (other != siblings) {
        EXPECT_NE(llc, other_llc) << "cpu " << c << " (" << siblings << ") and " << other;
      }
    }
  }
  if (llc_of_siblings.empty()) GTEST_SKIP() << "the kernel lists no caches here";
  // Unbound, the process has a last-level cache only if one holds every CPU.
  const int32_t unbound = discover().llc;
  if (llc_of_siblings.size() == 1)
    EXPECT_GE(unbound, 0);
  else
    EXPECT_EQ(unbound, -1);
}

std::string fake_gpu() { return "0000:3b:00.0"; }

TEST(TopologyDescription, TheGpuComesFromTheInstalledLocator) {
  set_gpu_locator(fake_gpu);
  const Description d = discover();
  set_gpu_locator(nullptr);
  EXPECT_STREQ(d.gpu, "0000:3b:00.0");
  EXPECT_STREQ(discover().gpu, "");
}

}  // namespace
}  // namespace hcomm::topology
