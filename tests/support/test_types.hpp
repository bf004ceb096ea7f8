// Value types shared by the reduction tests.
#pragma once

namespace tributary::testing {

/// A 2x2 integer matrix. Products of these do not commute, so they show combine order.
struct Mat {
  long a, b, c, d;
  bool operator==(const Mat& o) const { return a == o.a && b == o.b && c == o.c && d == o.d; }
};

/// The matrix product as a non-commutative user operator: inout = in * inout.
struct MatMul {
  static constexpr bool commutative = false;
  static Mat identity() { return {1, 0, 0, 1}; }
  void operator()(const Mat& x, Mat& y) const {
    y = Mat{x.a * y.a + x.b * y.c, x.a * y.b + x.b * y.d, x.c * y.a + x.d * y.c,
            x.c * y.b + x.d * y.d};
  }
};

}  // namespace tributary::testing
