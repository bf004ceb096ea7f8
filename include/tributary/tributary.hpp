// Tributary: non-blocking global reductions for simulation codes organised as task lists.
// The umbrella header: everything public.
#pragma once

#include "tributary/all_gather.hpp"
#include "tributary/all_reduce.hpp"
#include "tributary/batch.hpp"
#include "tributary/blocks.hpp"
#include "tributary/config.hpp"
#include "tributary/context.hpp"
#include "tributary/datatype.hpp"
#include "tributary/errors.hpp"
#include "tributary/exact_sum.hpp"
#include "tributary/keyed.hpp"
#include "tributary/ops.hpp"
#include "tributary/phase.hpp"
#include "tributary/reduce.hpp"
#include "tributary/schedule_kind.hpp"
#include "tributary/tasks.hpp"
