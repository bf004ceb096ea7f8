// TaskList: tasks with dependencies, run by an executor until all have completed. Iterative
// sublists repeat their tasks until they say they are done.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "tributary/tasks/task_id.hpp"
#include "tributary/tasks/task_status.hpp"

namespace tributary {

class TaskRegion;

/// What an iterative sublist does when it reaches its maximum number of iterations while a
/// task still asks for another one.
enum class OnMaxIterations {
  fail,  ///< Fail the region with a message naming the sublist (the default).
  warn   ///< Print a warning naming the sublist and list to stderr, then complete.
};

/// Iteration bounds of a sublist: at least `min`, at most `max` iterations.
struct IterationLimits {
  int min = 1;                                     ///< Iterations run at least.
  int max = 1;                                     ///< Iterations run at most.
  OnMaxIterations on_max = OnMaxIterations::fail;  ///< What reaching `max` does.
};

namespace detail {
struct TaskNode;
struct ListRuntime;
struct RegionalGroup;
struct SublistBarrier;
class TaskEngine;

// A member function pointer type spelled so that it is never deduced from the argument: the
// object and argument types, deduced from the other arguments, pick the overload (or the
// template's arguments) of an overloaded member named by `&Class::Member`.
template <class T>
struct TypeIdentity {
  using type = T;
};
template <class Object, class... Args>
using MemberTask = typename TypeIdentity<TaskStatus (Object::*)(std::decay_t<Args>...)>::type;
}  // namespace detail

/// An ordered set of tasks with dependencies. Tasks are callables returning TaskStatus
/// (callables returning void count as complete). Arguments given to AddTask are copied
/// (decay-copied) and stored with the task; to share state, pass pointers or
/// std::ref(x), and keep the referenced objects alive until execution ends.
class TaskList {
 public:
  TaskList();
  ~TaskList();
  TaskList(const TaskList&) = delete;
  TaskList& operator=(const TaskList&) = delete;

  /// Adds a task that runs once every task in `dependency` has completed. `f` may be a
  /// free function, a lambda or a member function pointer (then the first argument is the
  /// object, a pointer or std::ref). Returns the new task's id.
  template <class F, class... Args,
            class = std::enable_if_t<!std::is_convertible_v<F, std::string_view>>>
  TaskID AddTask(const TaskID& dependency, F&& f, Args&&... args) {
    return AddTaskImpl(dependency, std::string(),
                       Bind(std::forward<F>(f), std::forward<Args>(args)...));
  }

  /// As above, with a label used in reports, the watchdog and the GraphViz dump.
  template <class F, class... Args>
  TaskID AddTask(const TaskID& dependency, const std::string& label, F&& f, Args&&... args) {
    return AddTaskImpl(dependency, label, Bind(std::forward<F>(f), std::forward<Args>(args)...));
  }

  /// Adds a task that calls the member function `f` of `*object` with `args`, where `f`
  /// names an overload set or a member template, as task-list codes write it:
  /// `AddTask(dep, &AllReduce<double>::StartReduce, &r, MPI_SUM)`. The member is the one
  /// declared in (or inherited into) the object's class that takes exactly the decayed
  /// argument types and returns TaskStatus. A member pointer that names one function
  /// (`&AllReduce<double>::CheckReduce`) works with the overloads above as well.
  template <class Object, class... Args>
  TaskID AddTask(const TaskID& dependency, detail::MemberTask<Object, Args...> f, Object* object,
                 Args&&... args) {
    return AddTaskImpl(dependency, std::string(), Bind(f, object, std::forward<Args>(args)...));
  }

  /// As above, with a label.
  template <class Object, class... Args>
  TaskID AddTask(const TaskID& dependency, const std::string& label,
                 detail::MemberTask<Object, Args...> f, Object* object, Args&&... args) {
    return AddTaskImpl(dependency, label, Bind(f, object, std::forward<Args>(args)...));
  }

  /// Adds an iterative sublist that starts once `dependency` has completed. Its tasks run
  /// in dependency order; when all have completed, the sublist runs them all again if one
  /// of them returned TaskStatus::iterate (or fewer than `limits.min` iterations ran), and
  /// completes otherwise. Reaching `limits.max` while a task still asks to iterate is never
  /// silent (see OnMaxIterations). Returns the sublist (add its tasks to it) and the id of
  /// the sublist as one task of this list.
  std::pair<TaskList&, TaskID> AddSublist(const TaskID& dependency, IterationLimits limits,
                                          std::string label = {});

  /// Number of tasks added directly to this list (a sublist counts as one).
  int NumTasks() const noexcept;

 private:
  friend class TaskRegion;
  friend class detail::TaskEngine;
  using Body = std::function<TaskStatus()>;

  template <class F, class... Args>
  static Body Bind(F&& f, Args&&... args) {
    return [fn = std::forward<F>(f),
            tup = std::make_tuple(std::forward<Args>(args)...)]() mutable -> TaskStatus {
      return std::apply(
          [&fn](auto&... a) -> TaskStatus {
            if constexpr (std::is_void_v<std::invoke_result_t<decltype(fn)&, decltype(a)&...>>) {
              std::invoke(fn, a...);
              return TaskStatus::complete;
            } else {
              return std::invoke(fn, a...);
            }
          },
          tup);
    };
  }
  TaskID AddTaskImpl(const TaskID& dependency, std::string label, Body body);
  void CheckDependency(const TaskID& dependency) const;

  std::vector<std::unique_ptr<detail::TaskNode>> tasks_;
  std::unique_ptr<detail::ListRuntime> runtime_;
};

}  // namespace tributary
