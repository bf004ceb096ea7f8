#include <algorithm>
#include <stdexcept>

#include "engine.hpp"

namespace tributary {

TaskID TaskID::And(const TaskID& other) const {
  if (Empty()) return other;
  if (other.Empty()) return *this;
  if (owner_ != other.owner_)
    throw TaskGraphError("TaskID: cannot combine tasks of different task lists");
  TaskID both;
  both.owner_ = owner_;
  std::set_union(ids_.begin(), ids_.end(), other.ids_.begin(), other.ids_.end(),
                 std::back_inserter(both.ids_));
  return both;
}

TaskList::TaskList() : runtime_(std::make_unique<detail::ListRuntime>()) {}
TaskList::~TaskList() = default;

int TaskList::NumTasks() const noexcept { return static_cast<int>(tasks_.size()); }

void TaskList::CheckDependency(const TaskID& dependency) const {
  if (!dependency.Empty() && dependency.owner_ != this)
    throw TaskGraphError(
        "AddTask: the dependency names tasks of another task list; a task can depend only "
        "on tasks of its own list (use AddRegionalDependencies across lists)");
}

TaskID TaskList::AddTaskImpl(const TaskID& dependency, std::string label, Body body) {
  CheckDependency(dependency);
  auto node = std::make_unique<detail::TaskNode>();
  const int id = static_cast<int>(tasks_.size());
  node->label = label.empty() ? "task " + std::to_string(id) : std::move(label);
  node->deps = dependency.ids_;
  node->body = std::move(body);
  tasks_.push_back(std::move(node));
  return TaskID(this, id);
}

std::pair<TaskList&, TaskID> TaskList::AddSublist(const TaskID& dependency, IterationLimits limits,
                                                  std::string label) {
  CheckDependency(dependency);
  if (limits.min < 0 || limits.max < 1 || limits.max < limits.min)
    throw TaskGraphError(
        "AddSublist: iteration limits need 0 <= min <= max and max >= 1 (got min " +
        std::to_string(limits.min) + ", max " + std::to_string(limits.max) + ")");
  auto node = std::make_unique<detail::TaskNode>();
  const int id = static_cast<int>(tasks_.size());
  node->label = label.empty() ? "sublist " + std::to_string(id) : std::move(label);
  node->deps = dependency.ids_;
  node->sublist = std::make_unique<TaskList>();
  node->limits = limits;
  TaskList& sub = *node->sublist;
  tasks_.push_back(std::move(node));
  return {sub, TaskID(this, id)};
}

}  // namespace tributary
