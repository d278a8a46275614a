// Linear layouts: where the elements of a block value live on the GPU, as a
// linear map over GF(2).
//
// A layout maps hardware indices (named input dimensions such as register,
// lane, warp) to tensor coordinates (named output dimensions dim0, dim1,
// ...). Every size is a power of two, so an index is a string of bits, and
// the map is linear over GF(2): input bit i of dimension d has an image (a
// coordinate per output dimension), and the image of an index is the XOR of
// the images of its set bits. Blocked layouts, their slices, MMA
// accumulators and operands, broadcasts (a zero image: the bit replicates)
// and XOR-swizzled shared memory are all such maps, so the compiler reasons
// about them with one algebra instead of a case per pair:
//   - compose: one layout after another (where a value's elements go after
//     a shape op, say);
//   - product: two layouts side by side (a register tile per lane, lanes per
//     warp, warps per program);
//   - invert / invert_and_compose: which hardware index holds a coordinate,
//     so a conversion from layout A to layout B is B's inverse after A,
//     whose bits tell a register renumbering, a shuffle between lanes, or a
//     trip through shared memory apart.
// The representation follows "Linear Layouts: Robust Code Generation of
// Efficient Tensor Computation Using F2" (2025), as Triton uses it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace blocc::ir {

class LinearLayout {
public:
  /// A named dimension and the log2 of its size.
  struct Dimension {
    std::string name;
    int bits = 0;
    bool operator==(const Dimension &) const = default;
  };
  /// Coordinates, one per dimension, by name.
  using Point = std::map<std::string, int64_t>;

  /// The empty layout: no input, no output (a product's unit).
  LinearLayout() = default;

  /// in (size 2^bits) -> out, x -> x: consecutive indices, consecutive
  /// coordinates.
  static LinearLayout identity(const std::string &in, int bits,
                               const std::string &out);
  /// in (size 2^bits) -> out, x -> 0: every index holds coordinate 0, i.e.
  /// the dimension replicates (broadcast). The output gets size 1 unless
  /// out_bits says otherwise.
  static LinearLayout zeros(const std::string &in, int bits,
                            const std::string &out, int out_bits = 0);
  /// in (size 2^bits) -> out, x -> x * 2^shift (size 2^(bits + shift)).
  static LinearLayout strided(const std::string &in, int bits,
                              const std::string &out, int shift);
  /// A layout from its images: images[d][i] is the image of bit i of input
  /// dimension `inputs[d]`, one coordinate per output dimension in the
  /// order of `outputs`. Throws when an image does not fit its output.
  static LinearLayout
  from_images(std::vector<Dimension> inputs, std::vector<Dimension> outputs,
              const std::vector<std::vector<std::vector<int64_t>>> &images);

  /// log2 of a dimension's size; throws naming `what` unless `size` is a
  /// power of two.
  static int bits_of(int64_t size, const std::string &what);

  const std::vector<Dimension> &inputs() const { return inputs_; }
  const std::vector<Dimension> &outputs() const { return outputs_; }
  int input_bits(const std::string &name) const;
  int output_bits(const std::string &name) const;
  int total_input_bits() const;
  int total_output_bits() const;

  /// Where index `in` (a value per input dimension; missing ones are 0)
  /// goes, one coordinate per output dimension.
  Point apply(const Point &in) const;
  /// The image of bit `bit` of input dimension `in`.
  Point image(const std::string &in, int bit) const;

  /// Side by side: the inputs and outputs of both. A dimension both have
  /// is concatenated, this layout's bits the low ones (inputs and outputs
  /// alike): identity("lane", 5, "dim0") * identity("warp", 2, "dim0")
  /// numbers dim0 by lane first, then by warp.
  LinearLayout operator*(const LinearLayout &outer) const;

  /// `outer` after this layout: this layout's outputs are `outer`'s inputs
  /// (same names; this layout's sizes at most `outer`'s).
  LinearLayout compose(const LinearLayout &outer) const;

  /// Every coordinate is reached.
  bool is_surjective() const;
  /// No two indices give the same coordinates (no replication).
  bool is_injective() const;
  bool is_invertible() const { return is_surjective() && is_injective(); }

  /// The inverse of an invertible layout: coordinates -> hardware index.
  /// Throws naming the layout when it is not invertible.
  LinearLayout invert() const;

  /// For each index of this layout, an index of `other` that holds the same
  /// coordinates: other's inverse after this layout. `other` must be
  /// surjective onto this layout's outputs; where it replicates, the index
  /// with the replicated bits 0 is chosen.
  LinearLayout invert_and_compose(const LinearLayout &other) const;

  /// The input bits whose images are 0 in every output dimension: what
  /// this layout replicates, e.g. {"lane": [4]} when lanes 16 apart hold
  /// the same elements.
  std::map<std::string, std::vector<int>> replicated_bits() const;

  /// Same dimensions (names and sizes, in order) and images.
  bool operator==(const LinearLayout &other) const;

  /// "lane: [0,1] [0,2] ...; warp: ... -> dim0: 2^3, dim1: 2^4", one line.
  std::string str() const;

private:
  // An image as a mask over the flattened output bits: output dimension k
  // occupies bits [offset(k), offset(k) + outputs_[k].bits).
  using Mask = uint64_t;
  Mask mask_of(const std::vector<int64_t> &coordinates) const;
  std::vector<int64_t> coordinates_of(Mask mask) const;
  /// A mask over the flattened input bits as an index per input dimension.
  std::vector<int64_t> split_inputs(uint64_t combination) const;
  int output_offset(size_t k) const;
  /// The images of all input bits, flattened in input-dimension order.
  std::vector<Mask> columns() const;
  /// The rank of `columns()` over GF(2).
  int rank() const;

  std::vector<Dimension> inputs_;
  std::vector<Dimension> outputs_;
  // images_[d][i]: the image of bit i of input dimension d.
  std::vector<std::vector<Mask>> images_;
};

} // namespace blocc::ir
