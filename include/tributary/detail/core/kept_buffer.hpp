// Memory an object gives up for good to a collective of the MPI library left pending after
// a failure: the typed layer hands it over (ReductionClient::LeaveResult), the core keeps it
// with the schedule (ScheduleRun::Abandon).
#pragma once

#if !defined(TRIBUTARY_PUBLIC_INCLUDE) && !defined(TRIBUTARY_INTERNAL_INCLUDE)
#error \
    "<tributary/detail/core/kept_buffer.hpp> is internal to Tributary: include <tributary/tributary.hpp> instead"
#endif

namespace tributary::detail {

/// A buffer kept, unused, until the process ends; the object that owned it makes another.
class KeptBuffer {
 public:
  KeptBuffer() = default;
  KeptBuffer(const KeptBuffer&) = delete;
  KeptBuffer& operator=(const KeptBuffer&) = delete;
  virtual ~KeptBuffer() = default;
};

}  // namespace tributary::detail
