// The Context that a Parthenon application's reductions share, and its lifetime.
//
// Parthenon creates its reduction objects without a Context (members of solvers and
// drivers, copies in Params). The layer gives them one, created with the first reduction
// object (after MPI_Init: Parthenon's objects are made once MPI and Kokkos run) and torn
// down from inside MPI_Finalize (an attribute of MPI_COMM_SELF, whose deletion MPI runs
// first in MPI_Finalize): every Tributary object still alive is destroyed there, then the
// Context, so nothing is leaked and nothing is freed after MPI_Finalize. Objects that hold
// Kokkos memory are released at Kokkos::finalize (a finalize hook), which Parthenon calls
// just before MPI_Finalize. Handles that outlive either keep their `val`; using them is a
// UsageError.
#pragma once

#include <cstdint>
#include <string>

#include "tributary/context.hpp"
#include "tributary/errors.hpp"

namespace tributary::parthenon_interop {

/// Options of the shared Context. Call before the first reduction object exists (all ranks
/// alike); UsageError afterwards. Without a call, the Context takes ContextOptions' defaults
/// with the environment applied (EnvironmentOptions).
void Configure(const ContextOptions& options);

/// The defaults with what the environment sets, as the shared Context reads them when
/// Configure was not called:
///  - TRIBUTARY_PARTHENON_DETERMINISM: fast | run_to_run | rank_count_independent;
///  - TRIBUTARY_PARTHENON_WATCHDOG: seconds before a hang is reported (0: off).
/// An unknown value is a UsageError naming the variable.
ContextOptions EnvironmentOptions();

/// Reads the determinism mode from a Parthenon input deck: block `tributary`, parameter
/// `determinism` (the environment's value, else "fast", when absent), and `terms`
/// (`ordered` or `arrival`: SetOrderedTerms), then Configure with them. For an application's
/// package setup, before its solvers are made: e.g.
/// `tributary::parthenon_interop::ConfigureFromInput(pin.get());`.
template <class ParameterInput>
void ConfigureFromInput(ParameterInput* pin);

/// The Context of Parthenon's reductions: created at the first call (collective: every
/// rank creates its reduction objects in the same order), after MPI_Init. UsageError before
/// MPI_Init and after the teardown at MPI_Finalize.
Context& SharedContext();

/// True once the Context exists (and is not torn down yet).
bool ContextAlive() noexcept;

/// Parses a determinism mode's name; UsageError naming `where` for anything else.
Determinism ParseDeterminism(const std::string& name, const std::string& where);

/// Ordered terms, the layer's opt-in for `fast` and `run_to_run`: a start with MPI_SUM over
/// a tracked `val` (float, double, or a container of them) whose value is what was assigned
/// and added through it reduces the assigned value plus the terms added since in an order
/// that does not depend on the order the tasks added them in (smallest magnitude first;
/// `val +=` does not say which partition a term comes from, so the order is the terms'
/// own), instead of the value as the additions left it. Off by default; the environment's
/// TRIBUTARY_PARTHENON_TERMS=ordered (or `arrival`) sets it at the first use, and an input
/// deck's `tributary/terms` through ConfigureFromInput. Starts after the call follow it.
void SetOrderedTerms(bool ordered) noexcept;
/// Whether ordered terms are on (see SetOrderedTerms). UsageError for an unknown value of
/// TRIBUTARY_PARTHENON_TERMS.
bool OrderedTerms();

namespace detail {

/// A live Tributary object behind Parthenon handles: released (its object destroyed) at
/// Kokkos::finalize or MPI_Finalize, whichever comes first.
class Slot {
 public:
  virtual void Release() noexcept = 0;

 protected:
  ~Slot() = default;
};

/// Registers a slot for teardown; UsageError after the teardown.
void Register(Slot* slot);
/// Removes a slot (its destructor); nothing after the teardown.
void Unregister(Slot* slot) noexcept;
/// Objects released so far by a teardown (Kokkos::finalize or MPI_Finalize), for tests.
std::int64_t ReleasedByTeardown() noexcept;

}  // namespace detail

template <class ParameterInput>
void ConfigureFromInput(ParameterInput* pin) {
  ContextOptions options = EnvironmentOptions();
  const char* deflt = options.determinism == Determinism::rank_count_independent
                          ? "rank_count_independent"
                      : options.determinism == Determinism::run_to_run ? "run_to_run"
                                                                       : "fast";
  const std::string mode = pin->GetOrAddString("tributary", "determinism", deflt);
  options.determinism = ParseDeterminism(mode, "input parameter tributary/determinism");
  const std::string terms =
      pin->GetOrAddString("tributary", "terms", OrderedTerms() ? "ordered" : "arrival");
  if (terms != "ordered" && terms != "arrival")
    throw UsageError("input parameter tributary/terms: '" + terms +
                     "' is neither ordered nor arrival");
  SetOrderedTerms(terms == "ordered");
  Configure(options);
}

}  // namespace tributary::parthenon_interop
