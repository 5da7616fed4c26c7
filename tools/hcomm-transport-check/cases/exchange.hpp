// What several test bodies do alike.
#pragma once

#include <cstdint>
#include <vector>

#include "../rank_transport.hpp"

namespace hcomm::tcheck {

// The peers of this rank, starting after it, so that ranks post in different orders.
std::vector<int> peers_of(const RankTransport& transport);

// Sends one `size`-byte message to every peer and receives one from each, all
// at once, then checks every received byte. Even ranks post receives first,
// odd ranks sends first.
void exchange_with_all(RankTransport& transport, size_t size, uint64_t tag, uint64_t message_id);

}  // namespace hcomm::tcheck
