// Messages from this rank to itself. A send is copied into the oldest
// receive posted with its tag, or held until one is posted, so that it
// completes at once (a blocking send to itself returns). As on a transport,
// one tag's messages match in order; lengths must be equal.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <string>
#include <vector>

namespace hcomm::links {

class SelfLink {
 public:
  explicit SelfLink(int rank) : rank_(rank) {}

  void* isend(const void* buf, size_t len, uint64_t tag);
  void* irecv(void* buf, size_t len, uint64_t tag);
  // True once done (the request is then gone); throws a receive's error.
  bool test(void* request, size_t* bytes);

 private:
  struct Receive {
    void* buf;
    size_t len;
    bool done = false;
    std::string error;
  };

  // The oldest entry of `tag` (equal keys keep their insertion order).
  template <class Map>
  static typename Map::iterator first(Map& map, uint64_t tag) {
    auto it = map.lower_bound(tag);
    return it != map.end() && it->first == tag ? it : map.end();
  }

  void deliver(Receive& r, const void* data, size_t len);

  int rank_;
  char sent_ = 0;  // the request of every send: sends complete at once
  std::list<Receive> receives_;
  std::multimap<uint64_t, Receive*> posted_;
  std::multimap<uint64_t, std::vector<uint8_t>> held_;
};

}  // namespace hcomm::links
