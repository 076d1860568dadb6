// Small deterministic random numbers (identical on every platform, unlike
// std::normal_distribution): splitmix64 keyed by the quantities a draw
// belongs to, so any rank can recompute any other rank's draws.
#pragma once

#include <cmath>
#include <cstdint>

namespace moetrace::tracegen {

inline uint64_t Mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

inline uint64_t Key(uint64_t a, uint64_t b, uint64_t c = 0, uint64_t d = 0, uint64_t e = 0) {
  return Mix64(Mix64(Mix64(Mix64(Mix64(a) ^ b) ^ c) ^ d) ^ e);
}

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() { return Mix64(state_++); }
  double Uniform() { return (Next() >> 11) * (1.0 / 9007199254740992.0); }  // [0,1)
  // Box-Muller gives two independent normals per pair of uniforms: the
  // second is kept for the next call (half the log/sqrt/trig work).
  double Normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    double u1 = Uniform(), u2 = Uniform();
    if (u1 < 1e-300) u1 = 1e-300;
    const double r = std::sqrt(-2.0 * std::log(u1)), a = 6.283185307179586 * u2;
    spare_ = r * std::sin(a);
    has_spare_ = true;
    return r * std::cos(a);
  }

 private:
  uint64_t state_;
  double spare_ = 0;
  bool has_spare_ = false;
};

}  // namespace moetrace::tracegen
