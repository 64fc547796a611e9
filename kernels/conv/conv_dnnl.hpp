#pragma once
// oneDNN convolutions in our layouts (NHWC activations; weights as conv.hpp lays them
// out, reordered once into oneDNN's preferred layout at construction, as an inference
// framework does): the library variants.

#include <memory>
#include <string>

#include "kernels/conv/conv.hpp"

namespace ceiling::kernels {

enum class DnnlConvKind { depthwise, dense, pointwise };

// Implemented in libceiling_libraries.so (kernels/libraries/), loaded on first use.
class DnnlConv {
public:
    struct Impl {
        virtual ~Impl() = default;
        virtual void run(const float* in, float* out) = 0;
        virtual std::string implementation() const = 0;
    };
    // Throws std::runtime_error when oneDNN is unavailable (dnnl_info() says why).
    DnnlConv(DnnlConvKind kind, ConvShape s, const float* weights, int threads);
    void run(const float* in, float* out) { impl_->run(in, out); }
    // The implementation oneDNN chose, e.g. "jit_dw:avx512_core".
    std::string implementation() const { return impl_->implementation(); }

private:
    std::unique_ptr<Impl> impl_;
};

}  // namespace ceiling::kernels
