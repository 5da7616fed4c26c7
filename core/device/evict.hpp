// Lines dropped from every cache of the machine (written back where dirty),
// for a peer's input read in place: its owner writes its next input there,
// and each line the reader's cache still holds would have to be taken back
// first, one cross-core round trip a line, outside the call that caused it.
// A line in no cache is fetched from memory instead, where the prefetchers
// stream it. Worth it only where that round trip crosses last-level caches;
// under one shared cache the eviction costs more than it saves. x86 with
// CLFLUSHOPT; elsewhere nothing.
#pragma once

#include <cstddef>

namespace hcomm::device {

void evict(const void* data, size_t bytes);

}  // namespace hcomm::device
