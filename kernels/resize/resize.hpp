#pragma once
// Bilinear resize of interleaved 8-bit RGB images (a detector's preprocessing step),
// with OpenCV's INTER_LINEAR arithmetic: source coordinate (d + 0.5) x scale - 0.5,
// clamped at the borders, weights in 11-bit fixed point (2048 = 1), a horizontal pass
// S[x0] a0 + S[x0 + 1] a1 kept as int16 after >> 4, then a vertical pass
// ((b0 D0) >> 16) + ((b1 D1) >> 16), rounded >> 2. Separable: each source row is resized
// horizontally once (and reused by the next output row), so a downscale reads each
// needed row once and does 2 multiply-adds per output value per pass.
//
// Bound and measured (development VM, CPU time, best of 5-7): source and output (7.4 MB
// for 640x640) live in L2/L3; per 16 output pixels the horizontal pass costs 2 gathers, and
// gather throughput and the cache bandwidth bound it rather than the integer roof.
// 1920x1080 -> 640x640: one core 1.13 ms (OpenCV 1.40 ms: 1.23x), two 0.78 ms (OpenCV
// 0.79: 1.0x); -> 224x224: one core 0.35 ms (OpenCV 0.41: 1.18x), two 0.27 ms (OpenCV
// 0.25: 0.93x). Bit-exact with OpenCV 4.6's (non-IPP) INTER_LINEAR.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "kernels/cpu_features.hpp"

namespace ceiling::kernels {

struct ResizeShape {
    int src_w, src_h, dst_w, dst_h;  // pixels; 3 channels
};

// The tables as plain pointers: what the per-ISA passes read (no library code from the
// ISA translation units, where the linker could keep an instance compiled for that ISA).
struct ResizeView {
    int src_w, src_h, dst_w, dst_h, d_row;
    const std::int32_t *xofs0, *xofs1, *y0, *y1;
    const std::int16_t *alpha, *alpha_groups, *beta;
};

// OpenCV's coordinate mapping and fixed-point weights, computed once per shape.
struct ResizeTables {
    explicit ResizeTables(ResizeShape s);
    ResizeShape s;
    int d_row;  // int16 elements of one horizontally resized row: dst_w rounded up to 16, x 4 (RGBX)
    std::vector<std::int32_t> xofs0, xofs1;  // byte offsets of source pixels x0 and x1 in a row
    std::vector<std::int16_t> alpha;         // (a0, a1) per output x
    // The same weights for the SIMD horizontal pass: per group of 8 output pixels, 8
    // int16 (a0, a1 x 4 channels) for pixels 0, 2, 4, 6 then 1, 3, 5, 7 (the order
    // unpacklo/unpackhi of two pixel vectors leave them in).
    std::vector<std::int16_t> alpha_groups;
    std::vector<std::int32_t> y0, y1;  // source rows per output row
    std::vector<std::int16_t> beta;    // (b0, b1) per output row
    // Source pixels / bytes the mapping reads (nonzero weights): distinct rows x the 64-byte
    // lines of a row they touch.
    double source_bytes_read() const;
    ResizeView view() const;
};

// The horizontal and vertical passes per ISA. Sources need 4 readable bytes past their
// last pixel (the gathers load 4 bytes per 3-byte pixel).
struct ResizeImpl {
    std::string_view isa;
    bool (*supported)(const CpuFeatures&);
    // Output rows [dy0, dy1); ws: 2 x t.d_row int16.
    void (*rows)(const ResizeView& t, const std::uint8_t* src, std::uint8_t* dst, int dy0,
                 int dy1, std::int16_t* ws);
};
std::span<const ResizeImpl* const> resize_impls();  // widest first
const ResizeImpl& best_resize_impl();

// Textbook bilinear in float per output value (same coordinate mapping), rounded.
void resize_naive(ResizeShape s, const std::uint8_t* src, std::uint8_t* dst);

class ResizeWorkspace {
public:
    ResizeWorkspace(const ResizeTables& t, int threads);
    std::int16_t* rows(int thread) { return data_.data() + static_cast<std::size_t>(thread) * 2 * static_cast<std::size_t>(d_row_); }
    int threads() const { return threads_; }

private:
    int d_row_, threads_;
    std::vector<std::int16_t> data_;
};

// Output rows split over threads, each with its own pair of cached horizontal rows.
void resize_optimized(const ResizeImpl& impl, const ResizeTables& t, const std::uint8_t* src,
                      std::uint8_t* dst, ResizeWorkspace& ws, int threads);

// cv::resize(INTER_LINEAR) on our buffers (no copies). Available when built with OpenCV;
// implemented in libceiling_libraries.so (kernels/libraries/), loaded on first use.
class OpenCvResize {
public:
    struct Impl {
        virtual ~Impl() = default;
        virtual void run(const std::uint8_t* src, std::uint8_t* dst, int threads) = 0;
    };
    // Throws std::runtime_error when OpenCV is unavailable (opencv_info() says why).
    explicit OpenCvResize(ResizeShape s);
    void run(const std::uint8_t* src, std::uint8_t* dst, int threads) { impl_->run(src, dst, threads); }

private:
    std::unique_ptr<Impl> impl_;
};

}  // namespace ceiling::kernels
