#include "ir/linear_layout.h"

#include "ir/error.h"

#include <algorithm>
#include <sstream>

namespace blocc::ir {

namespace {

using Dimension = LinearLayout::Dimension;

const Dimension *find(const std::vector<Dimension> &dims,
                      const std::string &name) {
  for (const Dimension &d : dims)
    if (d.name == name)
      return &d;
  return nullptr;
}

int highest_bit(uint64_t v) { return 63 - __builtin_clzll(v); }

/// Columns in echelon form, each with the input bits it combines: solves
/// "which XOR of the columns gives this vector" over GF(2).
class Echelon {
public:
  explicit Echelon(const std::vector<uint64_t> &columns) {
    for (size_t i = 0; i < columns.size(); ++i) {
      auto [rest, combination] = reduce(columns[i], uint64_t{1} << i);
      if (rest != 0)
        insert(rest, combination);
    }
  }
  int rank() const { return static_cast<int>(rows_.size()); }
  /// The input bits whose columns XOR to `target`, using only independent
  /// columns (a dependent one, a replicated bit, stays 0); false when no
  /// combination gives it.
  bool solve(uint64_t target, uint64_t &combination) const {
    auto [rest, c] = reduce(target, 0);
    combination = c;
    return rest == 0;
  }

private:
  struct Row {
    uint64_t vector, combination;
  };
  std::pair<uint64_t, uint64_t> reduce(uint64_t v, uint64_t c) const {
    for (const Row &r : rows_) // highest pivot first
      if (v >> highest_bit(r.vector) & 1) {
        v ^= r.vector;
        c ^= r.combination;
      }
    return {v, c};
  }
  void insert(uint64_t v, uint64_t c) {
    auto at = std::find_if(rows_.begin(), rows_.end(), [&](const Row &r) {
      return highest_bit(r.vector) < highest_bit(v);
    });
    rows_.insert(at, Row{v, c});
  }
  std::vector<Row> rows_;
};

void check_bits(const std::vector<Dimension> &dims, const char *what) {
  int total = 0;
  for (const Dimension &d : dims) {
    if (d.bits < 0)
      throw Error(std::string("linear layout: ") + what + " dimension '" +
                  d.name + "' has a negative size");
    total += d.bits;
  }
  if (total > 64)
    throw Error(std::string("linear layout: more than 2^64 ") + what +
                " indices");
}

} // namespace

int LinearLayout::bits_of(int64_t size, const std::string &what) {
  int bits = 0;
  while (bits < 62 && (int64_t{1} << bits) < size)
    ++bits;
  if (size < 1 || (int64_t{1} << bits) != size)
    throw Error("linear layout: " + what + " " + std::to_string(size) +
                " is not a power of two");
  return bits;
}

LinearLayout LinearLayout::identity(const std::string &in, int bits,
                                    const std::string &out) {
  return strided(in, bits, out, 0);
}

LinearLayout LinearLayout::zeros(const std::string &in, int bits,
                                 const std::string &out, int out_bits) {
  std::vector<std::vector<int64_t>> images(size_t(bits),
                                           std::vector<int64_t>{0});
  return from_images({{in, bits}}, {{out, out_bits}}, {images});
}

LinearLayout LinearLayout::strided(const std::string &in, int bits,
                                   const std::string &out, int shift) {
  std::vector<std::vector<int64_t>> images;
  for (int i = 0; i < bits; ++i)
    images.push_back({int64_t{1} << (i + shift)});
  return from_images({{in, bits}}, {{out, bits + shift}}, {images});
}

LinearLayout LinearLayout::from_images(
    std::vector<Dimension> inputs, std::vector<Dimension> outputs,
    const std::vector<std::vector<std::vector<int64_t>>> &images) {
  check_bits(inputs, "input");
  check_bits(outputs, "output");
  if (images.size() != inputs.size())
    throw Error("linear layout: " + std::to_string(images.size()) +
                " image lists for " + std::to_string(inputs.size()) +
                " input dimensions");
  LinearLayout l;
  l.inputs_ = std::move(inputs);
  l.outputs_ = std::move(outputs);
  for (size_t d = 0; d < l.inputs_.size(); ++d) {
    if (images[d].size() != size_t(l.inputs_[d].bits))
      throw Error("linear layout: input '" + l.inputs_[d].name + "' has " +
                  std::to_string(l.inputs_[d].bits) + " bits but " +
                  std::to_string(images[d].size()) + " images");
    std::vector<Mask> masks;
    for (const std::vector<int64_t> &coordinates : images[d])
      masks.push_back(l.mask_of(coordinates));
    l.images_.push_back(masks);
  }
  return l;
}

int LinearLayout::input_bits(const std::string &name) const {
  const Dimension *d = find(inputs_, name);
  return d ? d->bits : 0;
}

int LinearLayout::output_bits(const std::string &name) const {
  const Dimension *d = find(outputs_, name);
  return d ? d->bits : 0;
}

int LinearLayout::total_input_bits() const {
  int total = 0;
  for (const Dimension &d : inputs_)
    total += d.bits;
  return total;
}

int LinearLayout::total_output_bits() const {
  int total = 0;
  for (const Dimension &d : outputs_)
    total += d.bits;
  return total;
}

int LinearLayout::output_offset(size_t k) const {
  int offset = 0;
  for (size_t j = 0; j < k; ++j)
    offset += outputs_[j].bits;
  return offset;
}

LinearLayout::Mask
LinearLayout::mask_of(const std::vector<int64_t> &coordinates) const {
  if (coordinates.size() != outputs_.size())
    throw Error("linear layout: an image has " +
                std::to_string(coordinates.size()) + " coordinates for " +
                std::to_string(outputs_.size()) + " output dimensions");
  Mask mask = 0;
  for (size_t k = 0; k < outputs_.size(); ++k) {
    int64_t c = coordinates[k];
    if (c < 0 || (outputs_[k].bits < 63 && c >> outputs_[k].bits != 0))
      throw Error("linear layout: coordinate " + std::to_string(c) +
                  " is outside output '" + outputs_[k].name + "' of size 2^" +
                  std::to_string(outputs_[k].bits));
    mask |= static_cast<Mask>(c) << output_offset(k);
  }
  return mask;
}

std::vector<int64_t> LinearLayout::coordinates_of(Mask mask) const {
  std::vector<int64_t> coordinates;
  for (size_t k = 0; k < outputs_.size(); ++k) {
    int bits = outputs_[k].bits;
    Mask field = bits >= 64 ? ~Mask{0} : (Mask{1} << bits) - 1;
    coordinates.push_back(
        static_cast<int64_t>(mask >> output_offset(k) & field));
  }
  return coordinates;
}

LinearLayout::Point LinearLayout::apply(const Point &in) const {
  for (const auto &[name, value] : in) {
    const Dimension *d = find(inputs_, name);
    if (!d && value != 0)
      throw Error("linear layout: no input dimension '" + name + "'");
    if (d && (value < 0 || (d->bits < 63 && value >> d->bits != 0)))
      throw Error("linear layout: index " + std::to_string(value) +
                  " is outside input '" + name + "' of size 2^" +
                  std::to_string(d->bits));
  }
  Mask result = 0;
  for (size_t d = 0; d < inputs_.size(); ++d) {
    auto it = in.find(inputs_[d].name);
    uint64_t value = it == in.end() ? 0 : static_cast<uint64_t>(it->second);
    for (int i = 0; i < inputs_[d].bits; ++i)
      if (value >> i & 1)
        result ^= images_[d][size_t(i)];
  }
  std::vector<int64_t> coordinates = coordinates_of(result);
  Point out;
  for (size_t k = 0; k < outputs_.size(); ++k)
    out[outputs_[k].name] = coordinates[k];
  return out;
}

LinearLayout::Point LinearLayout::image(const std::string &in, int bit) const {
  return apply({{in, int64_t{1} << bit}});
}

LinearLayout LinearLayout::operator*(const LinearLayout &outer) const {
  // The merged dimensions: this layout's in order, then outer's new ones.
  auto merge = [](const std::vector<Dimension> &low,
                  const std::vector<Dimension> &high) {
    std::vector<Dimension> merged = low;
    for (const Dimension &h : high) {
      auto it =
          std::find_if(merged.begin(), merged.end(),
                       [&](const Dimension &m) { return m.name == h.name; });
      if (it == merged.end())
        merged.push_back(h);
      else
        it->bits += h.bits;
    }
    return merged;
  };
  std::vector<Dimension> inputs = merge(inputs_, outer.inputs_);
  std::vector<Dimension> outputs = merge(outputs_, outer.outputs_);
  // An image of one side as coordinates of the merged outputs; outer's
  // coordinates sit above this layout's bits of the same dimension.
  auto place = [&](const LinearLayout &side, int d, int i, bool high) {
    Point p = side.image(side.inputs_[size_t(d)].name, i);
    std::vector<int64_t> coordinates;
    for (const Dimension &o : outputs) {
      auto it = p.find(o.name);
      int64_t c = it == p.end() ? 0 : it->second;
      coordinates.push_back(high ? c << output_bits(o.name) : c);
    }
    return coordinates;
  };
  std::vector<std::vector<std::vector<int64_t>>> images(inputs.size());
  for (size_t m = 0; m < inputs.size(); ++m)
    for (const auto *side : {this, &outer})
      for (size_t d = 0; d < side->inputs_.size(); ++d)
        if (side->inputs_[d].name == inputs[m].name)
          for (int i = 0; i < side->inputs_[d].bits; ++i)
            images[m].push_back(place(*side, int(d), i, side == &outer));
  return from_images(inputs, outputs, images);
}

LinearLayout LinearLayout::compose(const LinearLayout &outer) const {
  for (const Dimension &o : outputs_) {
    const Dimension *in = find(outer.inputs_, o.name);
    if (!in || in->bits < o.bits)
      throw Error("linear layout: cannot compose: output '" + o.name + "' (2^" +
                  std::to_string(o.bits) +
                  ") is not an input of the outer layout at least as large");
  }
  std::vector<std::vector<std::vector<int64_t>>> images;
  for (const Dimension &d : inputs_) {
    std::vector<std::vector<int64_t>> dimension_images;
    for (int i = 0; i < d.bits; ++i) {
      Point p = outer.apply(image(d.name, i));
      std::vector<int64_t> coordinates;
      for (const Dimension &o : outer.outputs_)
        coordinates.push_back(p[o.name]);
      dimension_images.push_back(coordinates);
    }
    images.push_back(dimension_images);
  }
  return from_images(inputs_, outer.outputs_, images);
}

std::vector<LinearLayout::Mask> LinearLayout::columns() const {
  std::vector<Mask> all;
  for (const std::vector<Mask> &d : images_)
    all.insert(all.end(), d.begin(), d.end());
  return all;
}

int LinearLayout::rank() const { return Echelon(columns()).rank(); }

bool LinearLayout::is_surjective() const {
  return rank() == total_output_bits();
}

bool LinearLayout::is_injective() const { return rank() == total_input_bits(); }

LinearLayout LinearLayout::invert() const {
  if (!is_invertible())
    throw Error("linear layout: not invertible (" + str() + ")");
  // The inverse's images: for each output bit, the input bits that reach
  // exactly it.
  Echelon echelon(columns());
  std::vector<std::vector<std::vector<int64_t>>> images;
  for (size_t k = 0; k < outputs_.size(); ++k) {
    std::vector<std::vector<int64_t>> dimension_images;
    for (int b = 0; b < outputs_[k].bits; ++b) {
      uint64_t combination = 0;
      echelon.solve(Mask{1} << (output_offset(k) + b), combination);
      dimension_images.push_back(split_inputs(combination));
    }
    images.push_back(dimension_images);
  }
  return from_images(outputs_, inputs_, images);
}

LinearLayout LinearLayout::invert_and_compose(const LinearLayout &other) const {
  for (const Dimension &o : outputs_)
    if (other.output_bits(o.name) < o.bits)
      throw Error("linear layout: output '" + o.name +
                  "' is larger than the other layout's");
  Echelon echelon(other.columns());
  std::vector<std::vector<std::vector<int64_t>>> images;
  for (const Dimension &d : inputs_) {
    std::vector<std::vector<int64_t>> dimension_images;
    for (int i = 0; i < d.bits; ++i) {
      Point p = image(d.name, i);
      std::vector<int64_t> coordinates;
      for (const Dimension &o : other.outputs_)
        coordinates.push_back(p.count(o.name) ? p[o.name] : 0);
      uint64_t combination = 0;
      if (!echelon.solve(other.mask_of(coordinates), combination))
        throw Error("linear layout: the other layout does not reach what "
                    "this one does (" +
                    other.str() + ")");
      dimension_images.push_back(other.split_inputs(combination));
    }
    images.push_back(dimension_images);
  }
  return from_images(inputs_, other.inputs_, images);
}

std::vector<int64_t> LinearLayout::split_inputs(uint64_t combination) const {
  std::vector<int64_t> index;
  int offset = 0;
  for (const Dimension &d : inputs_) {
    uint64_t field = d.bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << d.bits) - 1;
    index.push_back(static_cast<int64_t>(combination >> offset & field));
    offset += d.bits;
  }
  return index;
}

std::map<std::string, std::vector<int>> LinearLayout::replicated_bits() const {
  std::map<std::string, std::vector<int>> bits;
  for (size_t d = 0; d < inputs_.size(); ++d)
    for (int i = 0; i < inputs_[d].bits; ++i)
      if (images_[d][size_t(i)] == 0)
        bits[inputs_[d].name].push_back(i);
  return bits;
}

bool LinearLayout::operator==(const LinearLayout &other) const {
  return inputs_ == other.inputs_ && outputs_ == other.outputs_ &&
         images_ == other.images_;
}

std::string LinearLayout::str() const {
  std::ostringstream out;
  for (size_t d = 0; d < inputs_.size(); ++d) {
    out << (d ? "; " : "") << inputs_[d].name << ":";
    for (Mask m : images_[d]) {
      out << " [";
      std::vector<int64_t> c = coordinates_of(m);
      for (size_t k = 0; k < c.size(); ++k)
        out << (k ? "," : "") << c[k];
      out << "]";
    }
  }
  out << " ->";
  for (size_t k = 0; k < outputs_.size(); ++k)
    out << (k ? ", " : " ") << outputs_[k].name << ": 2^" << outputs_[k].bits;
  return out.str();
}

} // namespace blocc::ir
