// TaskStatus: what a task tells the executor after each call.
#pragma once

namespace tributary {

/// The result of one call of a task.
enum class TaskStatus {
  complete,    ///< Done; dependents may run.
  incomplete,  ///< Not done yet; call again in a later sweep.
  iterate,     ///< In an iterative sublist: run the sublist's tasks once more.
  fail         ///< Failed; the region stops and the executor reports this task.
};

/// The status's name ("complete", "incomplete", "iterate", "fail").
constexpr const char* ToString(TaskStatus s) noexcept {
  switch (s) {
    case TaskStatus::complete:
      return "complete";
    case TaskStatus::incomplete:
      return "incomplete";
    case TaskStatus::iterate:
      return "iterate";
    case TaskStatus::fail:
      return "fail";
  }
  return "unknown";
}

}  // namespace tributary
