// The shared Context of Parthenon's reductions on Tributary (tributary/parthenon/runtime.hpp):
// created with the first reduction object, torn down inside MPI_Finalize (an attribute of
// MPI_COMM_SELF) after every live object is released; objects are released at
// Kokkos::finalize already, which Parthenon calls first.
#include "tributary/parthenon/runtime.hpp"

#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tributary/config.hpp"
#include "tributary/errors.hpp"

#if TRIBUTARY_HAVE_KOKKOS
#include <Kokkos_Core.hpp>
#endif

namespace tributary::parthenon_interop {
namespace {

enum class Phase { none, alive, torn_down };

struct Runtime {
  std::mutex mutex;
  Phase phase = Phase::none;
  bool configured = false;
  ContextOptions options;
  std::unique_ptr<Context> context;
  std::vector<detail::Slot*> slots;
  int keyval = MPI_KEYVAL_INVALID;
};

Runtime& State() {
  static Runtime* runtime = new Runtime;  // never destroyed: handles may outlive main
  return *runtime;
}

std::atomic<std::int64_t> g_released{0};
std::atomic<int> g_ordered_terms{-1};  // -1: not read from the environment yet

// Destroys every live object (their destructors still reach MPI and Kokkos).
void ReleaseAll(Runtime& r) {
  std::vector<detail::Slot*> slots;
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    slots.swap(r.slots);
  }
  for (detail::Slot* s : slots) s->Release();
  g_released.fetch_add(static_cast<std::int64_t>(slots.size()));
}

// MPI_Finalize deletes MPI_COMM_SELF's attributes before anything else: MPI still works.
int OnFinalize(MPI_Comm, int, void*, void*) {
  Runtime& r = State();
  ReleaseAll(r);
  std::unique_ptr<Context> context;
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    context.swap(r.context);
    r.phase = Phase::torn_down;
  }
  context.reset();
  MPI_Comm_free_keyval(&r.keyval);  // MPI frees it once this attribute is gone
  return MPI_SUCCESS;
}

const char* ModeName(Determinism mode) {
  switch (mode) {
    case Determinism::fast:
      return "fast";
    case Determinism::run_to_run:
      return "run_to_run";
    case Determinism::rank_count_independent:
      return "rank_count_independent";
  }
  return "fast";
}

}  // namespace

Determinism ParseDeterminism(const std::string& name, const std::string& where) {
  for (Determinism m :
       {Determinism::fast, Determinism::run_to_run, Determinism::rank_count_independent})
    if (name == ModeName(m)) return m;
  throw UsageError(where + ": unknown determinism mode '" + name +
                   "' (fast, run_to_run or rank_count_independent)");
}

void SetOrderedTerms(bool ordered) noexcept { g_ordered_terms.store(ordered ? 1 : 0); }

bool OrderedTerms() {
  int state = g_ordered_terms.load();
  if (state < 0) {
    const char* s = std::getenv("TRIBUTARY_PARTHENON_TERMS");
    const std::string value = s ? s : "";
    if (!value.empty() && value != "ordered" && value != "arrival")
      throw UsageError("TRIBUTARY_PARTHENON_TERMS: '" + value + "' is neither ordered nor arrival");
    int unset = -1;
    g_ordered_terms.compare_exchange_strong(unset, value == "ordered" ? 1 : 0);
    state = g_ordered_terms.load();
  }
  return state == 1;
}

ContextOptions EnvironmentOptions() {
  ContextOptions options;
  // Parthenon applications hold dozens of reduction objects (BiCGSTAB alone holds ten).
  options.communicator_pool = 64;
  if (const char* mode = std::getenv("TRIBUTARY_PARTHENON_DETERMINISM"); mode && *mode)
    options.determinism = ParseDeterminism(mode, "TRIBUTARY_PARTHENON_DETERMINISM");
  if (const char* s = std::getenv("TRIBUTARY_PARTHENON_WATCHDOG"); s && *s) {
    char* end = nullptr;
    const double seconds = std::strtod(s, &end);
    if (end == s || *end != '\0' || seconds < 0)
      throw UsageError("TRIBUTARY_PARTHENON_WATCHDOG: '" + std::string(s) +
                       "' is not a number of seconds");
    options.watchdog = std::chrono::duration<double>(seconds);
  }
  return options;
}

void Configure(const ContextOptions& options) {
  Runtime& r = State();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (r.phase != Phase::none)
    throw UsageError(
        "tributary::parthenon_interop::Configure: the shared Context already exists (call "
        "it before the first Parthenon reduction object is made)");
  r.options = options;
  r.configured = true;
}

Context& SharedContext() {
  Runtime& r = State();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (r.phase == Phase::alive) return *r.context;
  if (r.phase == Phase::torn_down)
    throw UsageError(
        "a Parthenon reduction object was made after MPI_Finalize tore down Tributary's "
        "Context");
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized)
    throw UsageError(
        "a Parthenon reduction object was made before MPI_Init (Tributary's Context needs "
        "MPI)");
  ContextOptions options = r.configured ? r.options : EnvironmentOptions();
  r.context = std::make_unique<Context>(MPI_COMM_WORLD, std::move(options));
  // Torn down first thing in MPI_Finalize (MPI deletes MPI_COMM_SELF's attributes first).
  MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, &OnFinalize, &r.keyval, nullptr);
  MPI_Comm_set_attr(MPI_COMM_SELF, r.keyval, nullptr);
#if TRIBUTARY_HAVE_KOKKOS
  // Parthenon finalises Kokkos just before MPI: objects that hold Views or device slots go
  // first. A hook pushed after Kokkos::finalize would never run; objects made then are
  // released at MPI_Finalize.
  if (Kokkos::is_initialized()) Kokkos::push_finalize_hook([] { ReleaseAll(State()); });
#endif
  r.phase = Phase::alive;
  return *r.context;
}

bool ContextAlive() noexcept {
  Runtime& r = State();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.phase == Phase::alive;
}

namespace detail {

void Register(Slot* slot) {
  Runtime& r = State();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (r.phase == Phase::torn_down)
    throw UsageError("a Parthenon reduction object was made after MPI_Finalize");
  r.slots.push_back(slot);
}

void Unregister(Slot* slot) noexcept {
  Runtime& r = State();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.slots.erase(std::remove(r.slots.begin(), r.slots.end(), slot), r.slots.end());
}

std::int64_t ReleasedByTeardown() noexcept { return g_released.load(); }

}  // namespace detail
}  // namespace tributary::parthenon_interop
