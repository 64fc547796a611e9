#pragma once
// Greedy non-maximum suppression, IoU threshold 0.5: in order of decreasing score, keep a
// box unless it overlaps an already kept box with IoU > 0.5. Boxes have integer corners
// (cv::Rect's layout), so the test IoU > 1/2 is done exactly in integers as
// 3 x intersection > area_a + area_b (from inter / (a + b - inter) > 1/2); every variant,
// OpenCV's included, then keeps exactly the same boxes. Two empty boxes count as
// overlapping, as OpenCV's jaccardDistance has it.
//
// Only scores above the score threshold take part (OpenCV's score_threshold: 0 keeps
// every positive score; the "prefilter" problem raises it, which changes the problem:
// fewer candidates, a subset of the same kept boxes). Ties in score keep index order
// (OpenCV's stable sort).
//
// Bound and measured (development VM, one core, CPU time, best of 7): no roof binds it -
// greedy NMS is a chain of data-dependent decisions (latency bound), so the levers are
// doing fewer tests (sort once, stop at the first overlap) and doing each in fewer cycles
// (16 kept boxes per vector test). 10,000 boxes: 1.2-1.4 ms, OpenCV's NMSBoxes 42-54 ms
// (~35x: it computes each IoU through Rect intersections and doubles), the naive loop
// 27 ms; with the 0.25 score pre-filter: 0.74 ms.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "kernels/cpu_features.hpp"

namespace ceiling::kernels {

struct Box {
    std::int32_t x, y, w, h;  // top-left corner and size, pixels
};

// The frame and the detector-like clustering of the suite's boxes.
inline constexpr int nms_frame_width = 1920;
inline constexpr int nms_frame_height = 1080;

// n boxes in clusters around n / 50 objects (each box its object's box jittered by up to
// a quarter of its size, scores object confidence x a random factor), plus 10% scattered
// low-score background boxes, all inside the frame. Same boxes for the same seed.
void generate_boxes(std::size_t n, std::uint64_t seed, std::vector<Box>& boxes,
                    std::vector<float>& scores);

// Kept boxes as a structure of arrays of corners and areas (what the vector test reads).
struct NmsKept {
    std::vector<std::int32_t> x1, y1, x2, y2, area;
    explicit NmsKept(std::size_t capacity = 0);
    void reserve(std::size_t capacity);
};

// The kept boxes' columns as plain pointers, for the per-ISA test (no library code in the
// ISA translation units).
struct KeptColumns {
    const std::int32_t *x1, *y1, *x2, *y2, *area;
};

// Whether candidate (x1, y1, x2, y2, area) overlaps any of kept[0, count) with IoU > 0.5.
struct NmsImpl {
    std::string_view isa;
    bool (*supported)(const CpuFeatures&);
    bool (*any_overlap)(const KeptColumns& kept, int count, std::int32_t x1, std::int32_t y1,
                        std::int32_t x2, std::int32_t y2, std::int32_t area);
};
std::span<const NmsImpl* const> nms_impls();  // widest first
const NmsImpl& best_nms_impl();

// Scratch of the optimized variant, sized once for n boxes (nothing allocated per run).
struct NmsWorkspace {
    explicit NmsWorkspace(std::size_t n);
    std::vector<std::uint64_t> order, tmp;  // (key, index) pairs for the radix sort
    NmsKept kept;
};

// The textbook loop: while boxes remain, take the best, drop every remaining box whose
// IoU with it (in double) exceeds 0.5. O(kept x n) IoUs, one thread.
void nms_naive(std::span<const Box> boxes, std::span<const float> scores, float score_threshold,
               std::vector<int>& keep);

// Sort once (stable, by score), then test each candidate against the kept boxes in
// order, exact integer test, stopping at the first overlap; scalar. The reference. When
// tests is given, it receives the number of candidate-versus-kept tests made.
void nms_reference(std::span<const Box> boxes, std::span<const float> scores,
                   float score_threshold, std::vector<int>& keep, std::size_t* tests = nullptr);

// Radix sort of the candidates' score bits (4 passes of 8 bits, stable), then the kept
// boxes tested 16 (AVX-512) or 8 (AVX2) at a time, stopping at the first overlap.
void nms_optimized(const NmsImpl& impl, std::span<const Box> boxes, std::span<const float> scores,
                   float score_threshold, std::vector<int>& keep, NmsWorkspace& ws);

}  // namespace ceiling::kernels

namespace ceiling::kernels {

// OpenCV's cv::dnn::NMSBoxes on our boxes (copied once into cv::Rect at construction, as
// a caller already holding cv::Rect would have them). Available when built with OpenCV;
// implemented in libceiling_libraries.so (kernels/libraries/), loaded on first use.
class OpenCvNms {
public:
    struct Impl {
        virtual ~Impl() = default;
        virtual void run(std::vector<int>& keep) = 0;
    };
    // Throws std::runtime_error when OpenCV is unavailable (opencv_info() says why).
    OpenCvNms(std::span<const Box> boxes, std::span<const float> scores, float score_threshold);
    void run(std::vector<int>& keep) { impl_->run(keep); }

private:
    std::unique_ptr<Impl> impl_;
};

}  // namespace ceiling::kernels
