// Must not compile: a struct of an int and a double has another type map than a struct of a
// double and an int.
#include <tuple>

#include "tributary/tributary.hpp"

struct A {
  double x;
  int n;
};
struct B {
  int n;
  double x;
};
template <>
struct tributary::TypeMap<A> {
  using type = std::tuple<double, int>;
};
template <>
struct tributary::TypeMap<B> {
  using type = std::tuple<int, double>;
};

void Contribute(tributary::KeyedReduction<A>& r, const B& b) { r.Contribute(1, 0, b); }
