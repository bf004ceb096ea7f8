// The Context's network services (network.hpp): the tag space, the MPI thread rules and
// freeing the communicators. The communicators are made by the Context's constructor
// (context.cpp).
#include "platform/network.hpp"

#include <algorithm>
#include <limits>

#include "platform/node_layout.hpp"
#include "tributary/errors.hpp"

namespace tributary::detail {

int Network::MaxSlots() const noexcept {
#if TRIBUTARY_HAVE_MPI
  return std::max(1, (tag_ub / kTagsPerSchedule - 1) / kGenerationsInTag);
#else
  return std::numeric_limits<int>::max();
#endif
}

#if TRIBUTARY_HAVE_MPI
void Network::Free() noexcept {
  for (std::size_t i = 1; i < lanes.size(); ++i) MPI_Comm_free(&lanes[i]);
  lanes.clear();
  if (nodes) FreeNodeLayout(nodes.get());
  if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
}

#endif

}  // namespace tributary::detail
