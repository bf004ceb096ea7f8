// The data the device suites contribute: list counts per rank and element values,
// deterministic on every rank so that each rank can compute the whole reference.
#pragma once

#include <cstdint>

namespace tributary::testing {

/// Lists on rank r: 0 on rank 2 (a rank with nothing to add), otherwise 1 + r % 3.
inline int ListsOn(int r) { return r == 2 ? 0 : 1 + r % 3; }

/// The data of element i of list l on rank r: small integers, deterministic everywhere.
inline std::int64_t IntAt(int r, int l, std::int64_t i) {
  const std::uint64_t h = (static_cast<std::uint64_t>(r) * 1000003u +
                           static_cast<std::uint64_t>(l) * 7919u + static_cast<std::uint64_t>(i)) *
                          0x9E3779B97F4A7C15ull;
  return static_cast<std::int64_t>((h >> 40) % 2001) - 1000;
}

}  // namespace tributary::testing
