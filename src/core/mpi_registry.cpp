#include "core/mpi_registry.hpp"

#if TRIBUTARY_HAVE_MPI

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>

#include "core/packed_combine.hpp"
#include "tributary/datatype.hpp"
#include "tributary/errors.hpp"

namespace tributary::detail {
namespace {

struct MpiObjects {
  std::mutex mutex;
  bool hooked = false;
  std::map<std::size_t, MPI_Datatype> byte_types;
  MPI_Op ops[2] = {MPI_OP_NULL, MPI_OP_NULL};
  int type_keyval = MPI_KEYVAL_INVALID;
  int self_keyval = MPI_KEYVAL_INVALID;
};

// Deliberately leaked: its contents are released at MPI_Finalize, not at exit.
MpiObjects& TheObjects() {
  static MpiObjects* registry = new MpiObjects;
  return *registry;
}

// A collective of the MPI library left pending (a failed generation's) may still use them.
std::atomic<bool> g_left_pending{false};

int OnSelfDelete(MPI_Comm, int, void*, void*) {
  MpiObjects& r = TheObjects();
  std::lock_guard<std::mutex> lock(r.mutex);
  // MPI_Finalize calls this first and may then progress a collective left pending: what it
  // combines by stays (Open MPI 4.1's persistent collectives do not hold on to it).
  if (!g_left_pending.load(std::memory_order_acquire)) {
    for (auto& [bytes, type] : r.byte_types) MPI_Type_free(&type);
    for (auto& op : r.ops)
      if (op != MPI_OP_NULL) MPI_Op_free(&op);
  }
  r.byte_types.clear();
  for (auto& op : r.ops) op = MPI_OP_NULL;
  if (r.type_keyval != MPI_KEYVAL_INVALID) MPI_Type_free_keyval(&r.type_keyval);
  r.hooked = false;
  return MPI_SUCCESS;
}

// Called with the registry lock held.
void EnsureHook(MpiObjects& r) {
  if (r.hooked) return;
  CheckMpi(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, OnSelfDelete, &r.self_keyval, nullptr),
           "MPI_Comm_create_keyval");
  CheckMpi(MPI_Comm_set_attr(MPI_COMM_SELF, r.self_keyval, nullptr), "MPI_Comm_set_attr");
  // The attribute stays until MPI_Finalize deletes it; the key itself may go now.
  CheckMpi(MPI_Comm_free_keyval(&r.self_keyval), "MPI_Comm_free_keyval");
  r.hooked = true;
}

// The attribute key under which a packed datatype carries its PackedLayout.
int PackedLayoutKeyval() {
  MpiObjects& r = TheObjects();
  std::lock_guard<std::mutex> lock(r.mutex);
  EnsureHook(r);
  if (r.type_keyval == MPI_KEYVAL_INVALID)
    CheckMpi(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &r.type_keyval,
                                    nullptr),
             "MPI_Type_create_keyval");
  return r.type_keyval;
}

// Moves on whenever a packed datatype's layout attribute is set or cleared or the type is
// freed: the generic op's per-thread copy of the last (datatype, layout) it looked up holds
// for one epoch, which keeps the attribute lookup (about 140 instructions) off every combine.
std::atomic<std::uint64_t> g_layout_epoch{1};

struct LayoutLookup {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  std::uint64_t epoch = 0;
  void* layout = nullptr;
};
thread_local LayoutLookup t_last_layout;

void GenericOpFn(void* in, void* inout, int* len, MPI_Datatype* type) {
  const std::uint64_t epoch = g_layout_epoch.load(std::memory_order_acquire);
  LayoutLookup& last = t_last_layout;
  if (last.epoch != epoch || last.type != *type) {
    void* layout = nullptr;
    int found = 0;
    MPI_Type_get_attr(*type, TheObjects().type_keyval, &layout, &found);
    last = LayoutLookup{*type, epoch, found ? layout : nullptr};
  }
  if (last.layout == nullptr) return;  // not a Tributary datatype: nothing to combine
  PackedCombine(last.layout, in, inout, static_cast<std::size_t>(*len));
}

}  // namespace

MPI_Datatype ByteBlockType(std::size_t bytes) {
  MpiObjects& r = TheObjects();
  std::lock_guard<std::mutex> lock(r.mutex);
  EnsureHook(r);
  auto it = r.byte_types.find(bytes);
  if (it != r.byte_types.end()) return it->second;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  CheckMpi(MPI_Type_contiguous(static_cast<int>(bytes), MPI_BYTE, &type), "MPI_Type_contiguous");
  CheckMpi(MPI_Type_commit(&type), "MPI_Type_commit");
  r.byte_types.emplace(bytes, type);
  return type;
}

MPI_Op GenericMpiOp(bool commutative) {
  MpiObjects& r = TheObjects();
  std::lock_guard<std::mutex> lock(r.mutex);
  EnsureHook(r);
  MPI_Op& op = r.ops[commutative ? 1 : 0];
  if (op == MPI_OP_NULL)
    CheckMpi(MPI_Op_create(&GenericOpFn, commutative ? 1 : 0, &op), "MPI_Op_create");
  return op;
}

void SetPackedLayout(MPI_Datatype type, const PackedLayout* layout) {
  CheckMpi(MPI_Type_set_attr(type, PackedLayoutKeyval(), const_cast<PackedLayout*>(layout)),
           "MPI_Type_set_attr");
  g_layout_epoch.fetch_add(1, std::memory_order_acq_rel);
}

void NoteLeftPending() noexcept { g_left_pending.store(true, std::memory_order_release); }

void FreePackedType(MPI_Datatype* type) noexcept {
  MPI_Type_free(type);
  g_layout_epoch.fetch_add(1, std::memory_order_acq_rel);
}

}  // namespace tributary::detail

#endif  // TRIBUTARY_HAVE_MPI
