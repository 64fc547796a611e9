#pragma once
// The GPU reference kernels' problems, defined once for both sides: inputs as functions of
// their index (random_hash.hpp), and simple CPU references in double precision that the
// device results are checked against. Plain C++: compiled and unit-tested without CUDA.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ceiling::kernels::gpu {

// Seeds of the input streams (arbitrary, distinct).
inline constexpr std::uint64_t seed_a = 11, seed_b = 12, seed_x = 13, seed_scale = 14, seed_box = 15,
                               seed_score = 16, seed_image = 17, seed_filter = 18;

// ---- GEMM: C[M x N] = A[M x K] B[K x N], row-major, fp32 output -----------------------------
struct GemmShape {
    int m, n, k;
    bool bf16_inputs;  // inputs rounded to bf16 (what the device multiplies)
};
float gemm_a(const GemmShape& s, std::uint64_t i);  // A[i], i = row * K + col
float gemm_b(const GemmShape& s, std::uint64_t i);  // B[i], i = row * N + col
// C[i][j] in double, and sum |a * b| over the dot product (the scale errors are judged by).
double gemm_reference(const GemmShape& s, int i, int j, double* abs_sum);

// ---- GEMV decode: y[M] = W[M x K] x[K]; W fp32, bf16, or int8 with a per-row fp32 scale --------
enum class WeightType { fp32, bf16, int8 };
struct GemvShape {
    int m, k;
    WeightType weights;
};
float gemv_weight(const GemvShape& s, std::uint64_t i);  // dequantised W[i] (int8: q only)
std::int8_t gemv_weight_q(const GemvShape& s, std::uint64_t i);
float gemv_scale(const GemvShape& s, int row);            // int8 only; 1 otherwise
float gemv_x(const GemvShape& s, int col);
double gemv_reference(const GemvShape& s, int row, double* abs_sum);

// ---- depthwise 3x3 convolution, stride 1, zero padding 1, NCHW fp32 ---------------------------
struct ConvShape {
    int n, c, h, w;
};
float conv_input(const ConvShape& s, std::uint64_t i);
float conv_filter(const ConvShape& s, std::uint64_t i);  // [c][3][3]
double conv_reference(const ConvShape& s, std::uint64_t out_index, double* abs_sum);

// ---- NMS: greedy, boxes sorted by descending score, IoU > threshold suppresses -----------------
struct Box {
    float x1, y1, x2, y2;
};
// `n` random boxes (in a 1024 x 1024 image, sides 8..136), sorted by descending score.
std::vector<Box> nms_boxes(int n);
// Whether a suppresses b: inter > threshold * union, in fp32 with no fused multiply-add, the
// exact comparison the device makes.
bool nms_suppresses(const Box& a, const Box& b, float threshold);
// Indices of the kept boxes, ascending.
std::vector<int> nms_reference(const std::vector<Box>& boxes, float threshold);

// ---- bilinear resize (half-pixel centres, clamped edges), NCHW fp32 ----------------------------
struct ResizeShape {
    int n, c, in_h, in_w, out_h, out_w;
};
float resize_input(const ResizeShape& s, std::uint64_t i);
double resize_reference(const ResizeShape& s, std::uint64_t out_index);

// Evenly spread sample indices in [0, count): which outputs the CPU recomputes.
std::vector<std::uint64_t> sample_indices(std::uint64_t count, std::size_t samples, std::uint64_t seed);

}  // namespace ceiling::kernels::gpu
