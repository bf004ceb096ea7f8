// Helpers shared by the suites that drive reductions through the public API.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "mpi_test.hpp"
#include "tributary/tributary.hpp"

namespace tributary::testing {

/// Polls `r` to completion (a wait loop that checks one object at a time).
template <class R>
void Wait(R& r) {
  while (r.CheckReduce() != TaskStatus::complete) {
  }
}

/// Polls `r` to completion, advancing `ctx` in between (a task loop in one line).
template <class R>
void Wait(Context& ctx, R& r) {
  while (r.CheckReduce() != TaskStatus::complete) ctx.Progress();
}

/// Runs `f` and returns the message of the exception of type E it throws ("" if none).
template <class E, class F>
std::string MessageOf(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "";
}

/// True on every rank when every rank holds the same bytes in `v` (a collective).
template <class T>
bool SameBitsEverywhere(const std::vector<T>& v) {
  const std::string bytes(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  const auto all = AllGatherBytes(bytes);
  return std::all_of(all.begin(), all.end(), [&](const std::string& b) { return b == all[0]; });
}

}  // namespace tributary::testing
