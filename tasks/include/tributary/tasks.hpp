// The task engine: task lists, regions with regional dependencies, iterative sublists,
// collections of regions, and the executors that run them. No MPI inside.
#pragma once

#include "tributary/tasks/executor.hpp"
#include "tributary/tasks/foreign.hpp"
#include "tributary/tasks/sweep.hpp"
#include "tributary/tasks/task_id.hpp"
#include "tributary/tasks/task_list.hpp"
#include "tributary/tasks/task_region.hpp"
#include "tributary/tasks/task_status.hpp"
