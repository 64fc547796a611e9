#pragma once
// oneDNN convolutions in our layouts (NHWC activations; weights as conv.hpp lays them
// out, reordered once into oneDNN's preferred layout at construction, as an inference
// framework does): the library variants.

#include <memory>
#include <string>

#include "kernels/conv/conv.hpp"

namespace ceiling::kernels {

enum class DnnlConvKind { depthwise, dense, pointwise };

class DnnlConv {
public:
    DnnlConv(DnnlConvKind kind, ConvShape s, const float* weights, int threads);
    ~DnnlConv();
    DnnlConv(const DnnlConv&) = delete;
    DnnlConv& operator=(const DnnlConv&) = delete;
    void run(const float* in, float* out);
    // The implementation oneDNN chose, e.g. "jit_dw:avx512_core".
    std::string implementation() const;

private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace ceiling::kernels
