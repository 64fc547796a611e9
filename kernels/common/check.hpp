#pragma once
// Comparing a kernel's output with its reference: the tolerance per precision (stated
// once, here), the running maximum error, and which outputs to check when checking all
// of them would cost more than the kernel (large GEMMs: sample, including the corners).

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/registry.hpp"

namespace ceiling::kernels {

// Error of a dot-product-like output (GEMM, GEMV, convolution) relative to the sum of the
// absolute values of its terms, sum_k |a_k * b_k|, computed in double by the reference.
// fp32 accumulation of K terms: the worst-case rounding bound is K * u with u = 2^-24
// (6.0e-8), i.e. 2.4e-4 at K = 4096, and blocked or vectorised sums stay near sqrt(K) * u
// (3.8e-6 at K = 4096). 1e-4 therefore passes every correct order of summation on these
// random inputs, while a wrong index, a missed tail or a stale buffer errs by order 1.
// bf16 and int8 inputs are compared with a reference computed from the very same bf16 /
// int8 values (dequantised exactly), so only the fp32 accumulation is judged: same bound.
inline constexpr double dot_tolerance_fp32 = 1e-4;
// uint8 images (resize): levels of 255; two correct fixed-point roundings differ by one.
inline constexpr double image_tolerance_levels = 1.0;

class ErrorCheck {
public:
    ErrorCheck(double tolerance, std::string unit) : tolerance_(tolerance), unit_(std::move(unit)) {}
    // One output: `got` against `ref`, error scaled by `scale` (> 0; sum|terms| for dots,
    // 1 for absolute errors). `where` is the flat index of the output.
    void add(double got, double ref, double scale, std::size_t where);
    // A structural failure (wrong count, NaN) that no tolerance excuses.
    void fail(std::string why);
    Verification result() const;
    std::size_t checked() const { return checked_; }

private:
    double tolerance_;
    std::string unit_;
    double max_error_ = 0;
    std::size_t worst_ = 0;
    double worst_got_ = 0, worst_ref_ = 0;
    std::size_t checked_ = 0;
    std::string failure_;
};

// Every index below `total` when total <= max_samples; else max_samples indices drawn
// from a fixed seed, always with the first and the last (tails are where bugs live).
std::vector<std::size_t> sample_indices(std::size_t total, std::size_t max_samples,
                                        std::uint64_t seed);

// "2048x1024" -> {2048, 1024}; empty when malformed, a dimension is not a positive
// integer, or the count differs from `count` (0: any count).
std::vector<std::int64_t> parse_dims(std::string_view s, std::size_t count = 0);
std::string dims_string(std::initializer_list<std::int64_t> dims);

}  // namespace ceiling::kernels
