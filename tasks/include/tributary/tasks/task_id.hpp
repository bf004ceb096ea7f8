// TaskID: the set of tasks a new task depends on.
#pragma once

#include <cstdint>
#include <vector>

namespace tributary {

class TaskList;
class TaskRegion;

/// A set of tasks of one task list. A default-constructed TaskID is the empty set: a task
/// added with it depends on nothing. `a & b` (or `a.And(b)`) is the set of both: a task
/// added with it runs once every task in `a` and every task in `b` has completed.
class TaskID {
 public:
  TaskID() = default;

  /// The set of the tasks in this set and in `other`.
  TaskID And(const TaskID& other) const;
  /// Same as And: "both".
  friend TaskID operator&(const TaskID& a, const TaskID& b) { return a.And(b); }
  /// True for the empty set.
  bool Empty() const noexcept { return ids_.empty(); }
  /// Number of tasks in the set.
  std::size_t Size() const noexcept { return ids_.size(); }

 private:
  friend class TaskList;
  friend class TaskRegion;
  TaskID(const TaskList* owner, int id) : owner_(owner), ids_{id} {}
  const TaskList* owner_ = nullptr;
  std::vector<int> ids_;  // sorted, unique
};

}  // namespace tributary
