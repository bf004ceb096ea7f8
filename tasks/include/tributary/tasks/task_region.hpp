// TaskRegion: task lists that run together, with regional dependencies across them, and
// TaskCollection: regions that run one after the other.
#pragma once

#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "tributary/tasks/task_list.hpp"
#include "tributary/tasks/task_status.hpp"

namespace tributary {

class Executor;

/// The key of a regional dependency: an integer or a string.
class RegionalKey {
 public:
  /// A numbered key (implicit, so that a plain 7 names it).
  RegionalKey(int key) : key_(key) {}  // NOLINT: implicit by design
  /// A named key (implicit, so that "flux" names it).
  RegionalKey(const char* key) : key_(std::string(key)) {}  // NOLINT
  /// A named key.
  RegionalKey(std::string key) : key_(std::move(key)) {}  // NOLINT
  /// "7" or "\"flux\"" for messages.
  std::string ToString() const;
  /// The same number, or the same name.
  friend bool operator==(const RegionalKey& a, const RegionalKey& b) { return a.key_ == b.key_; }
  /// An order for maps: numbers before names.
  friend bool operator<(const RegionalKey& a, const RegionalKey& b) { return a.key_ < b.key_; }

 private:
  std::variant<int, std::string> key_;
};

/// A task graph is wrong: a regional key missing from some lists, a TaskID from another
/// list, a sublist whose regional keys do not line up. The message says what and where.
class TaskGraphError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// An exception thrown by a task, rethrown by Execute with the task's label and list index
/// (the original exception is nested: std::rethrow_if_nested).
class TaskError : public std::runtime_error {
 public:
  /// The error `what` of the task labelled `label` in list `list`.
  TaskError(const std::string& what, std::string label, int list)
      : std::runtime_error(what), label_(std::move(label)), list_(list) {}
  /// The failed task's label.
  const std::string& label() const noexcept { return label_; }
  /// The index of the failed task's list in its region.
  int list() const noexcept { return list_; }

 private:
  std::string label_;
  int list_;
};

/// n task lists that execute together. A task that depends on a task registered with
/// AddRegionalDependencies(key, i, id) waits until the task registered under that key has
/// completed in every list of the region.
class TaskRegion {
 public:
  /// A region of `lists` task lists (>= 0).
  explicit TaskRegion(int lists);
  ~TaskRegion();
  TaskRegion(const TaskRegion&) = delete;
  TaskRegion& operator=(const TaskRegion&) = delete;

  /// List i (0 <= i < size()).
  TaskList& operator[](int i);
  /// The number of lists.
  int size() const noexcept { return static_cast<int>(lists_.size()); }

  /// Registers task `id` of list `list_index` under `key`. Every list of the region must
  /// register the key exactly once; this is checked when the graph is built (Validate, or
  /// the first execution) and reported as a TaskGraphError naming the key and the lists.
  void AddRegionalDependencies(RegionalKey key, int list_index, TaskID id);

  /// Builds and checks the graph; throws TaskGraphError. Called by every execution.
  void Validate();

  /// The region as a GraphViz dot graph: one cluster per list, solid edges for
  /// dependencies within a list, dashed edges for regional dependencies across lists.
  std::string ToDot();

 private:
  friend class detail::TaskEngine;
  struct Registration;
  std::vector<std::unique_ptr<TaskList>> lists_;
  std::vector<Registration> registrations_;
  std::vector<std::unique_ptr<detail::RegionalGroup>> groups_;
  std::vector<std::unique_ptr<detail::SublistBarrier>> barriers_;
  bool built_ = false;
};

/// Regions executed one after the other.
class TaskCollection {
 public:
  TaskCollection();
  ~TaskCollection();
  /// Adds a region of `lists` task lists; the reference stays valid.
  TaskRegion& AddRegion(int lists);
  /// Executes every region in order on a SerialExecutor.
  TaskStatus Execute();
  /// Executes every region in order on `executor`; stops at the first failed region and
  /// returns TaskStatus::fail (executor.LastReport() says which task and why). Rethrows an
  /// exception thrown by a task as TaskError.
  TaskStatus Execute(Executor& executor);

 private:
  std::vector<std::unique_ptr<TaskRegion>> regions_;
};

}  // namespace tributary
