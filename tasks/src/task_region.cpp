#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "engine.hpp"

namespace tributary {

std::string RegionalKey::ToString() const {
  if (auto* i = std::get_if<int>(&key_)) return std::to_string(*i);
  return "\"" + std::get<std::string>(key_) + "\"";
}

struct TaskRegion::Registration {
  RegionalKey key;
  int list;
  TaskID id;
};

TaskRegion::TaskRegion(int lists) {
  if (lists < 0) throw TaskGraphError("TaskRegion: the number of lists must be >= 0");
  for (int i = 0; i < lists; ++i) lists_.push_back(std::make_unique<TaskList>());
}
TaskRegion::~TaskRegion() = default;

TaskList& TaskRegion::operator[](int i) {
  if (i < 0 || i >= size())
    throw TaskGraphError("TaskRegion: list index " + std::to_string(i) + " out of range (" +
                         std::to_string(size()) + " lists)");
  return *lists_[static_cast<std::size_t>(i)];
}

void TaskRegion::AddRegionalDependencies(RegionalKey key, int list_index, TaskID id) {
  if (list_index < 0 || list_index >= size())
    throw TaskGraphError("AddRegionalDependencies: list index " + std::to_string(list_index) +
                         " out of range (" + std::to_string(size()) + " lists) for key " +
                         key.ToString());
  if (id.Size() != 1)
    throw TaskGraphError("AddRegionalDependencies: key " + key.ToString() +
                         " must name exactly one task");
  registrations_.push_back(Registration{std::move(key), list_index, std::move(id)});
  built_ = false;
}

namespace {

// Where a task list sits: the list index and the sublist nodes from the top list down.
struct Place {
  int list = -1;
  std::vector<detail::TaskNode*> path;
};

void MapPlaces(
    TaskList& list, int index, std::vector<detail::TaskNode*>& path,
    std::map<const TaskList*, Place>& places,
    const std::function<std::vector<std::unique_ptr<detail::TaskNode>>&(TaskList&)>& tasks) {
  places[&list] = Place{index, path};
  for (auto& node : tasks(list)) {
    if (!node->sublist) continue;
    path.push_back(node.get());
    MapPlaces(*node->sublist, index, path, places, tasks);
    path.pop_back();
  }
}

std::string ListNames(const std::vector<int>& lists) {
  std::string s;
  for (std::size_t k = 0; k < lists.size(); ++k) s += (k ? ", " : "") + std::to_string(lists[k]);
  return s;
}

}  // namespace

void TaskRegion::Validate() {
  if (built_) return;
  groups_.clear();
  barriers_.clear();
  std::map<const TaskList*, Place> places;
  auto tasks = [](TaskList& l) -> std::vector<std::unique_ptr<detail::TaskNode>>& {
    return l.tasks_;
  };
  for (int i = 0; i < size(); ++i) {
    std::vector<detail::TaskNode*> path;
    MapPlaces(*lists_[static_cast<std::size_t>(i)], i, path, places, tasks);
  }
  // Clear earlier wiring.
  for (auto& [list, place] : places)
    for (auto& node : const_cast<TaskList*>(list)->tasks_) {
      node->group = nullptr;
      node->barrier = nullptr;
    }

  std::map<RegionalKey, std::vector<const Registration*>> by_key;
  for (const auto& r : registrations_) by_key[r.key].push_back(&r);
  for (auto& [key, regs] : by_key) {
    std::vector<int> count(static_cast<std::size_t>(size()), 0);
    for (const auto* r : regs) {
      auto it = places.find(r->id.owner_);
      if (it == places.end() || it->second.list != r->list)
        throw TaskGraphError("regional key " + key.ToString() + ": the task given for list " +
                             std::to_string(r->list) + " does not belong to that list");
      ++count[static_cast<std::size_t>(r->list)];
    }
    std::vector<int> missing, twice;
    for (int i = 0; i < size(); ++i) {
      if (count[static_cast<std::size_t>(i)] == 0) missing.push_back(i);
      if (count[static_cast<std::size_t>(i)] > 1) twice.push_back(i);
    }
    if (!missing.empty() || !twice.empty()) {
      std::vector<int> present;
      for (int i = 0; i < size(); ++i)
        if (count[static_cast<std::size_t>(i)]) present.push_back(i);
      std::string msg =
          "regional key " + key.ToString() + " is registered in list(s) " + ListNames(present);
      if (!missing.empty()) msg += " but missing from list(s) " + ListNames(missing);
      if (!twice.empty()) msg += "; registered more than once in list(s) " + ListNames(twice);
      msg += ": every list of the region must register it exactly once";
      throw TaskGraphError(msg);
    }
    auto group = std::make_unique<detail::RegionalGroup>();
    group->key = key;
    group->size = size();
    group->members.assign(static_cast<std::size_t>(size()), nullptr);
    std::vector<const Place*> where(static_cast<std::size_t>(size()));
    for (const auto* r : regs) {
      const TaskList* owner = r->id.owner_;
      auto* node =
          const_cast<TaskList*>(owner)->tasks_[static_cast<std::size_t>(r->id.ids_[0])].get();
      if (node->group)
        throw TaskGraphError("task '" + node->label + "' of list " + std::to_string(r->list) +
                             " is registered under two regional keys");
      node->group = group.get();
      group->members[static_cast<std::size_t>(r->list)] = node;
      where[static_cast<std::size_t>(r->list)] = &places[owner];
    }
    // Sublists that hold the key's tasks iterate in lockstep, depth by depth.
    const std::size_t depth = where[0] ? where[0]->path.size() : 0;
    for (auto* p : where)
      if (p->path.size() != depth)
        throw TaskGraphError("regional key " + key.ToString() +
                             " is registered at different sublist depths in different lists");
    for (std::size_t d = 0; d < depth; ++d) {
      detail::SublistBarrier* existing = where[0]->path[d]->barrier;
      for (auto* p : where)
        if (p->path[d]->barrier != existing)
          throw TaskGraphError("regional key " + key.ToString() +
                               " ties together sublists that other keys tie differently");
      if (existing) continue;
      auto barrier = std::make_unique<detail::SublistBarrier>();
      barrier->size = size();
      barrier->decisions =
          std::make_unique<std::atomic<int>[]>(2 * static_cast<std::size_t>(size()));
      for (auto* p : where) {
        p->path[d]->barrier = barrier.get();
        barrier->members.push_back(p->path[d]);
      }
      barriers_.push_back(std::move(barrier));
    }
    groups_.push_back(std::move(group));
  }
  built_ = true;
}

std::string TaskRegion::ToDot() {
  Validate();
  std::ostringstream dot;
  dot << "digraph region {\n  compound=true;\n";
  std::map<const detail::TaskNode*, std::string> names;
  std::function<void(const TaskList&, const std::string&, int)> nodes =
      [&](const TaskList& list, const std::string& prefix, int indent) {
        const std::string pad(static_cast<std::size_t>(indent), ' ');
        for (std::size_t t = 0; t < list.tasks_.size(); ++t) {
          const auto& node = *list.tasks_[t];
          const std::string name = prefix + "_" + std::to_string(t);
          names[&node] = name;
          if (node.sublist) {
            dot << pad << "subgraph cluster_" << name << " {\n"
                << pad << "  label=\"" << node.label << "\";\n"
                << pad << "  " << name << " [label=\"" << node.label << "\", shape=box];\n";
            nodes(*node.sublist, name, indent + 2);
            dot << pad << "}\n";
          } else {
            dot << pad << name << " [label=\"" << node.label << "\"];\n";
          }
        }
      };
  for (int i = 0; i < static_cast<int>(lists_.size()); ++i) {
    dot << "  subgraph cluster_l" << i << " {\n    label=\"list " << i << "\";\n";
    nodes(*lists_[static_cast<std::size_t>(i)], "l" + std::to_string(i), 4);
    dot << "  }\n";
  }
  // Edges: dependencies within a list; for a dependency on a regional task, dashed edges
  // from that key's task in every other list.
  std::function<void(const TaskList&)> edges = [&](const TaskList& list) {
    for (const auto& node : list.tasks_) {
      for (int d : node->deps) {
        const auto& dep = *list.tasks_[static_cast<std::size_t>(d)];
        dot << "  " << names[&dep] << " -> " << names[node.get()] << ";\n";
        if (!dep.group) continue;
        for (const auto* other : dep.group->members)
          if (other != &dep)
            dot << "  " << names[other] << " -> " << names[node.get()] << " [style=dashed];\n";
      }
      if (node->sublist) edges(*node->sublist);
    }
  };
  for (const auto& list : lists_) edges(*list);
  dot << "}\n";
  return dot.str();
}

TaskCollection::TaskCollection() = default;
TaskCollection::~TaskCollection() = default;

TaskRegion& TaskCollection::AddRegion(int lists) {
  regions_.push_back(std::make_unique<TaskRegion>(lists));
  return *regions_.back();
}

TaskStatus TaskCollection::Execute() {
  SerialExecutor executor;
  return Execute(executor);
}

TaskStatus TaskCollection::Execute(Executor& executor) {
  for (auto& region : regions_) {
    const TaskStatus status = executor.Run(*region);
    if (status != TaskStatus::complete) return status;
  }
  return TaskStatus::complete;
}

}  // namespace tributary
