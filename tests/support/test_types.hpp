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

/// A permutation of 6 points; composition does not commute, so a product of one per rank
/// shows the combine order, and it stays small for any number of ranks.
struct Perm {
  unsigned char p[6];
  bool operator==(const Perm& o) const {
    for (int i = 0; i < 6; ++i)
      if (p[i] != o.p[i]) return false;
    return true;
  }
  /// A permutation that depends on `seed` (distinct seeds give mostly distinct ones).
  static Perm Of(unsigned seed) {
    Perm r{{0, 1, 2, 3, 4, 5}};
    for (int i = 5; i > 0; --i) {
      seed = seed * 1103515245u + 12345u;
      const int j = static_cast<int>((seed >> 16) % static_cast<unsigned>(i + 1));
      const unsigned char t = r.p[i];
      r.p[i] = r.p[j];
      r.p[j] = t;
    }
    return r;
  }
};

/// Composition as a non-commutative operator: inout = in · inout, (x·y)[i] = y[x[i]].
struct PermCompose {
  static constexpr bool commutative = false;
  void operator()(const Perm& x, Perm& y) const {
    Perm r;
    for (int i = 0; i < 6; ++i) r.p[i] = y.p[x.p[i]];
    y = r;
  }
};

}  // namespace tributary::testing
