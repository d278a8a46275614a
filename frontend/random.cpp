// Philox random numbers traced from ordinary block ops (see blocc/random.h).
// Everything here is built at the IR level with the user's source line, so
// that the dozens of ops one call emits all point at the call.
#include "blocc/random.h"

#include "semantics.h"

namespace blocc {

using detail::user_error;
using ir::OpCode;
using ir::Scalar;
using ir::Type;

namespace {

/// The multipliers and key increments (Weyl sequence) of one Philox word
/// width, as Random123 and Triton define them.
struct PhiloxConstants {
  Scalar word;
  uint64_t round_a, round_b; // multipliers of counter words 0 and 2
  uint64_t key_a, key_b;     // added to key words 0 and 1 between rounds
};

constexpr PhiloxConstants kPhilox4x32{Scalar::U32, 0xD2511F53, 0xCD9E8D57,
                                      0x9E3779B9, 0xBB67AE85};
constexpr PhiloxConstants kPhilox4x64{Scalar::U64, 0xD2E7470EE14C6C93,
                                      0xCA5A826395121157, 0x9E3779B97F4A7C15,
                                      0xBB67AE8584CAA73B};

/// Builds IR at one source location.
class Emitter {
public:
  explicit Emitter(const SourceLoc &loc) : loc_(loc) {}

  const SourceLoc &loc() const { return loc_; }
  ir::Builder &b() const {
    return detail::TraceContext::current(loc_).at(loc_);
  }

  /// An integer constant of type `s` (given by its bit pattern), splatted to
  /// `shape`.
  ir::Value *constant(uint64_t bits, Scalar s, const Shape &shape) const {
    ir::Value *c =
        b().int_constant(static_cast<int64_t>(bits), Type::scalar(s));
    return splat(c, shape);
  }
  /// A float constant of type `s`. f32 constants are rounded here, so the
  /// value the IR holds is exactly the float every backend uses.
  ir::Value *float_constant(double v, Scalar s, const Shape &shape) const {
    if (s == Scalar::F32)
      v = static_cast<double>(static_cast<float>(v));
    return splat(b().float_constant(v, Type::scalar(s)), shape);
  }
  ir::Value *splat(ir::Value *v, const Shape &shape) const {
    return detail::broadcast_value(v, shape, loc_);
  }
  ir::Value *binary(OpCode code, ir::Value *x, ir::Value *y) const {
    return b().binary(code, x, y);
  }
  ir::Value *unary(OpCode code, ir::Value *x) const {
    return b().unary(code, x);
  }
  ir::Value *convert(ir::Value *v, Scalar s) const {
    return detail::convert(v, s, loc_);
  }
  ir::Value *bitcast(ir::Value *v, Scalar s) const {
    if (v->type().element() == s)
      return v;
    return b().create_value(OpCode::Bitcast, {v},
                            v->type().with_element(Type::scalar(s)));
  }
  ir::Value *select(ir::Value *cond, ir::Value *x, ir::Value *y) const {
    return b().create_value(OpCode::Select, {cond, x, y}, x->type());
  }

private:
  SourceLoc loc_;
};

void check_rounds(int n_rounds, const char *what, const SourceLoc &loc) {
  if (n_rounds < 1)
    user_error(loc, std::string(what) + ": n_rounds must be at least 1, got " +
                        std::to_string(n_rounds) +
                        " (Philox needs rounds to mix the counter; the "
                        "default is " +
                        std::to_string(kPhiloxDefaultRounds) + ")");
}

/// An integer operand other than bool and pointers; `rule` says what it
/// must be ("the seed must be an integer").
Scalar expect_integer(const Operand &x, const char *what, const char *rule,
                      const char *fix) {
  bool pointer = x.is_value() && x.value()->type().is_pointer();
  Scalar s = detail::natural_dtype(x);
  if (pointer || !ir::is_integer(s) || s == Scalar::I1)
    user_error(x.loc(), std::string(what) + ": " + rule + ", got " +
                            x.describe() + "; " + fix);
  return s;
}

/// The Philox key (k0, k1) from a seed, as Triton derives it: the seed
/// converted to uint64 (sign-extended when signed), split into 32-bit
/// halves for Philox 4x32, or (seed, 0) for Philox 4x64.
std::pair<ir::Value *, ir::Value *> philox_key(const Emitter &e,
                                               const Operand &seed, Scalar word,
                                               const char *what) {
  if (seed.is_value() && seed.value()->type().is_block())
    user_error(seed.loc(),
               std::string(what) + ": the seed must be a scalar, got " +
                   seed.describe() +
                   "; use one seed per launch (a kernel argument such as "
                   "bl::i64 seed) and vary the offsets per element");
  expect_integer(seed, what, "the seed must be an integer",
                 "pass an integer such as a bl::i64 seed argument");
  if (!seed.is_value()) {
    uint64_t bits = static_cast<uint64_t>(seed.int_value());
    if (word == Scalar::U64)
      return {e.constant(bits, word, {}), e.constant(0, word, {})};
    return {e.constant(bits & 0xffffffffu, word, {}),
            e.constant(bits >> 32, word, {})};
  }
  ir::Value *wide = e.convert(seed.value(), Scalar::U64);
  if (word == Scalar::U64)
    return {wide, e.constant(0, word, {})};
  ir::Value *low_mask = e.constant(0xffffffffu, Scalar::U64, {});
  ir::Value *lo = e.binary(OpCode::And, wide, low_mask);
  ir::Value *hi = e.binary(OpCode::Shr, wide, e.constant(32, Scalar::U64, {}));
  return {e.convert(lo, word), e.convert(hi, word)};
}

/// `n_rounds` Philox rounds on counters c (all of one word type and shape)
/// with key (k0, k1) (scalars). The key is raised before every round but
/// the first, Random123's order; Triton raises it after every round, which
/// differs only in a last, unused key.
std::array<ir::Value *, 4> philox_rounds(const Emitter &e,
                                         const PhiloxConstants &k,
                                         std::array<ir::Value *, 4> c,
                                         ir::Value *k0, ir::Value *k1,
                                         int n_rounds) {
  Shape shape = c[0]->type().shape();
  ir::Value *a = e.constant(k.round_a, k.word, shape);
  ir::Value *b = e.constant(k.round_b, k.word, shape);
  ir::Value *key_a = e.constant(k.key_a, k.word, k0->type().shape());
  ir::Value *key_b = e.constant(k.key_b, k.word, k1->type().shape());
  for (int round = 0; round < n_rounds; ++round) {
    if (round > 0) {
      k0 = e.binary(OpCode::Add, k0, key_a);
      k1 = e.binary(OpCode::Add, k1, key_b);
    }
    ir::Value *hi_b = e.binary(OpCode::Umulhi, b, c[2]);
    ir::Value *hi_a = e.binary(OpCode::Umulhi, a, c[0]);
    ir::Value *lo_b = e.binary(OpCode::Mul, b, c[2]);
    ir::Value *lo_a = e.binary(OpCode::Mul, a, c[0]);
    ir::Value *x0 = e.binary(OpCode::Xor, e.binary(OpCode::Xor, hi_b, c[1]),
                             e.splat(k0, shape));
    ir::Value *x2 = e.binary(OpCode::Xor, e.binary(OpCode::Xor, hi_a, c[3]),
                             e.splat(k1, shape));
    c = {x0, lo_b, x2, lo_a};
  }
  return c;
}

std::array<Tensor, 4> to_tensors(const std::array<ir::Value *, 4> &v) {
  return {Tensor(v[0]), Tensor(v[1]), Tensor(v[2]), Tensor(v[3])};
}

/// The Philox counter Triton's randint4x uses for `offsets`:
/// (low 32 bits, high 32 bits or 0, 0, 0) as uint32 of the offsets' shape.
std::array<ir::Value *, 4>
offset_counter(const Emitter &e, const Operand &offsets, const char *what) {
  Scalar s = expect_integer(offsets, what, "the offsets must be integers",
                            "build them from bl::arange, e.g. pid * BLOCK + "
                            "bl::arange(0, BLOCK)");
  ir::Value *v = detail::as_dtype(offsets, s);
  Shape shape = v->type().shape();
  ir::Value *zero = e.constant(0, Scalar::U32, shape);
  if (ir::scalar_bits(s) <= 32) {
    // Narrower signed offsets sign-extend, as Triton's cast does.
    ir::Value *lo = ir::scalar_bits(s) == 32 ? e.bitcast(v, Scalar::U32)
                                             : e.convert(v, Scalar::U32);
    return {lo, zero, zero, zero};
  }
  ir::Value *u = e.bitcast(v, Scalar::U64);
  ir::Value *lo =
      e.binary(OpCode::And, u, e.constant(0xffffffffu, Scalar::U64, shape));
  ir::Value *hi = e.binary(OpCode::Shr, u, e.constant(32, Scalar::U64, shape));
  return {e.convert(lo, Scalar::U32), e.convert(hi, Scalar::U32), zero, zero};
}

std::array<ir::Value *, 4> randint4x_values(const Emitter &e,
                                            const Operand &seed,
                                            const Operand &offsets,
                                            int n_rounds, const char *what) {
  check_rounds(n_rounds, what, e.loc());
  std::array<ir::Value *, 4> counter = offset_counter(e, offsets, what);
  auto [k0, k1] = philox_key(e, seed, Scalar::U32, what);
  return philox_rounds(e, kPhilox4x32, counter, k0, k1, n_rounds);
}

ir::Value *uniform(const Emitter &e, ir::Value *x) {
  return uint_to_uniform_float(Operand(Tensor(x), e.loc())).value(e.loc());
}

} // namespace

std::array<Tensor, 4> philox(Operand seed, Operand c0, Operand c1, Operand c2,
                             Operand c3, int n_rounds) {
  const char *what = "bl::philox";
  Emitter e(c0.loc());
  check_rounds(n_rounds, what, e.loc());
  std::array<const Operand *, 4> counters{&c0, &c1, &c2, &c3};
  Scalar s0 = expect_integer(c0, what, "the counters must be integers",
                             "convert them with bl::cast(c, bl::uint32)");
  int bits = ir::scalar_bits(s0);
  if (bits != 32 && bits != 64)
    user_error(c0.loc(), std::string(what) +
                             ": counters must be 32- or 64-bit integers "
                             "(Philox 4x32 or 4x64), got " +
                             c0.describe() +
                             "; convert them with bl::cast(c, bl::uint32)");
  const PhiloxConstants &k = bits == 32 ? kPhilox4x32 : kPhilox4x64;
  Shape shape;
  for (const Operand *c : counters) {
    Scalar s = expect_integer(*c, what, "the counters must be integers",
                              "convert them with bl::cast(c, bl::uint32)");
    // Numbers take the counters' width; tensors must have it already, as
    // Triton bitcasts them.
    if (c->is_value() && ir::scalar_bits(s) != bits)
      user_error(c->loc(), std::string(what) +
                               ": all four counters must have one width, "
                               "got " +
                               c0.describe() + " and " + c->describe() +
                               "; convert them with bl::cast");
    if (c->is_value())
      shape = detail::broadcast_shapes(shape, c->value()->type().shape(),
                                       c->loc(), what);
  }
  std::array<ir::Value *, 4> words;
  for (size_t i = 0; i < 4; ++i) {
    const Operand &c = *counters[i];
    if (c.is_value()) {
      words[i] = e.splat(e.bitcast(c.value(), k.word), shape);
    } else {
      uint64_t v = static_cast<uint64_t>(c.int_value());
      words[i] = e.constant(bits == 32 ? v & 0xffffffffu : v, k.word, shape);
    }
  }
  auto [k0, k1] = philox_key(e, seed, k.word, what);
  return to_tensors(philox_rounds(e, k, words, k0, k1, n_rounds));
}

std::array<Tensor, 4> randint4x(Operand seed, Operand offsets, int n_rounds) {
  Emitter e(offsets.loc());
  return to_tensors(
      randint4x_values(e, seed, offsets, n_rounds, "bl::randint4x"));
}

Tensor randint(Operand seed, Operand offsets, int n_rounds) {
  Emitter e(offsets.loc());
  return Tensor(randint4x_values(e, seed, offsets, n_rounds, "bl::randint")[0]);
}

Tensor uint_to_uniform_float(Operand x) {
  const char *what = "bl::uint_to_uniform_float";
  Scalar s = expect_integer(x, what, "its operand must be integer bits",
                            "pass random bits such as bl::randint's result");
  int bits = ir::scalar_bits(s);
  if (bits != 32 && bits != 64)
    user_error(x.loc(), std::string(what) +
                            " needs 32- or 64-bit integers, got " +
                            x.describe() +
                            "; pass random bits such as bl::randint's result");
  Emitter e(x.loc());
  Scalar as_signed = bits == 32 ? Scalar::I32 : Scalar::I64;
  ir::Value *v = e.bitcast(detail::as_dtype(x, s), as_signed);
  Shape shape = v->type().shape();
  ir::Value *negative = e.b().cmp("lt", v, e.constant(0, as_signed, shape));
  // Triton folds negatives with -x - 1, which is ~x in two's complement;
  // ~x also has no overflow at INT_MIN to reason about.
  ir::Value *folded = e.select(negative, e.unary(OpCode::Not, v), v);
  // The largest scale with (2^(bits-1) - 1) * scale < 1 in float32.
  double scale = bits == 32 ? 4.6566127342e-10 : 1.0842020432385337e-19;
  return Tensor(e.binary(OpCode::Mul, e.convert(folded, Scalar::F32),
                         e.float_constant(scale, Scalar::F32, shape)));
}

Tensor rand(Operand seed, Operand offsets, int n_rounds) {
  Emitter e(offsets.loc());
  auto words = randint4x_values(e, seed, offsets, n_rounds, "bl::rand");
  return Tensor(uniform(e, words[0]));
}

std::array<Tensor, 4> rand4x(Operand seed, Operand offsets, int n_rounds) {
  Emitter e(offsets.loc());
  auto words = randint4x_values(e, seed, offsets, n_rounds, "bl::rand4x");
  return {Tensor(uniform(e, words[0])), Tensor(uniform(e, words[1])),
          Tensor(uniform(e, words[2])), Tensor(uniform(e, words[3]))};
}

std::pair<Tensor, Tensor> pair_uniform_to_normal(Operand u1, Operand u2) {
  const char *what = "bl::pair_uniform_to_normal";
  Scalar s =
      detail::promote(detail::natural_dtype(u1), detail::natural_dtype(u2));
  bool pointer = (u1.is_value() && u1.value()->type().is_pointer()) ||
                 (u2.is_value() && u2.value()->type().is_pointer());
  if (pointer || !ir::is_float(s) || ir::is_fp8(s))
    user_error(u1.loc(), std::string(what) +
                             " needs floating-point operands (uniform samples "
                             "in [0, 1) such as bl::rand's), got " +
                             u1.describe() + " and " + u2.describe());
  Emitter e(u1.loc());
  auto v = detail::unify({&u1, &u2}, {s, s}, what);
  Shape shape = v[0]->type().shape();
  ir::Value *clamped =
      e.binary(OpCode::Maximum, e.float_constant(1.0e-7, s, shape), v[0]);
  ir::Value *theta = e.binary(
      OpCode::Mul, e.float_constant(6.283185307179586, s, shape), v[1]);
  ir::Value *r = e.unary(OpCode::Sqrt,
                         e.binary(OpCode::Mul, e.float_constant(-2.0, s, shape),
                                  e.unary(OpCode::Log, clamped)));
  return {Tensor(e.binary(OpCode::Mul, r, e.unary(OpCode::Cos, theta))),
          Tensor(e.binary(OpCode::Mul, r, e.unary(OpCode::Sin, theta)))};
}

Tensor randn(Operand seed, Operand offsets, int n_rounds) {
  Emitter e(offsets.loc());
  auto words = randint4x_values(e, seed, offsets, n_rounds, "bl::randn");
  Tensor u1(uniform(e, words[0])), u2(uniform(e, words[1]));
  return pair_uniform_to_normal(Operand(u1, e.loc()), Operand(u2, e.loc()))
      .first;
}

std::array<Tensor, 4> randn4x(Operand seed, Operand offsets, int n_rounds) {
  Emitter e(offsets.loc());
  auto words = randint4x_values(e, seed, offsets, n_rounds, "bl::randn4x");
  std::array<Tensor, 4> u;
  for (size_t i = 0; i < 4; ++i)
    u[i] = Tensor(uniform(e, words[i]));
  auto [n1, n2] =
      pair_uniform_to_normal(Operand(u[0], e.loc()), Operand(u[1], e.loc()));
  auto [n3, n4] =
      pair_uniform_to_normal(Operand(u[2], e.loc()), Operand(u[3], e.loc()));
  return {n1, n2, n3, n4};
}

} // namespace blocc
