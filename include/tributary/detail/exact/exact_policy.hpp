// What Determinism::rank_count_independent does with an operator on an element type: sum
// through ExactSum (Sum over float or double), run as it is (operators whose result does
// not depend on the order), or refuse. Shared by reductions and batch members.
#pragma once

#if !defined(TRIBUTARY_PUBLIC_INCLUDE) && !defined(TRIBUTARY_INTERNAL_INCLUDE)
#error \
    "<tributary/detail/exact/exact_policy.hpp> is internal to Tributary: include <tributary/exact_sum.hpp> instead"
#endif

#include <string>
#include <type_traits>

#include "tributary/datatype.hpp"
#include "tributary/determinism.hpp"
#include "tributary/errors.hpp"
#include "tributary/ops.hpp"

namespace tributary::detail {

/// True when a generation in `mode` sums E through ExactSum; false when it runs as it is;
/// UsageError (naming `element`) when `mode` is rank_count_independent and the operator's
/// result may depend on the order.
template <class E, class Op>
bool UsesExactSum(Determinism mode, const std::string& element) {
  if (mode != Determinism::rank_count_independent) return false;
  constexpr BuiltinOp b = OpBuiltin<Op>::value;
  if constexpr ((std::is_same_v<E, double> || std::is_same_v<E, float>)&&b == BuiltinOp::sum) {
    return true;
  } else {
    constexpr bool order_free =
        (kBuiltinElement<E> && b != BuiltinOp::none && b != BuiltinOp::sum &&
         b != BuiltinOp::prod) ||
        ((b == BuiltinOp::sum || b == BuiltinOp::prod) && std::is_integral_v<E>) ||
        std::is_same_v<Op, MinLoc> || std::is_same_v<Op, MaxLoc> || std::is_same_v<Op, MinMax>;
    if constexpr (!order_free) {
      throw UsageError(
          "Determinism::rank_count_independent is not available for this operator on " + element +
          " elements: it covers Sum over float and double (exactly), and operators "
          "whose result does not depend on the order (integer Sum and Prod, Min, Max, "
          "logical and bitwise operators, MinLoc, MaxLoc, MinMax); use run_to_run");
    }
    (void)element;
    return false;
  }
}

}  // namespace tributary::detail
