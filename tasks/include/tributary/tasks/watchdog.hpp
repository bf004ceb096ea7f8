// What a watchdog does when it fires: shared by the task executors and the reduction Context.
#pragma once

namespace tributary {

/// What happens when nothing has progressed for the watchdog's time.
enum class WatchdogAction {
  report,  ///< Default: write the report once (which tasks wait on what; which objects,
           ///< generations, ranks and lists are missing) and keep waiting.
  fail     ///< Fail: the executor stops with the report; a Context applies its
           ///< FailurePolicy (abort, or propagate to every rank).
};

}  // namespace tributary
