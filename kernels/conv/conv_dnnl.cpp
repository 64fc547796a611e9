#include "kernels/conv/conv_dnnl.hpp"

#include "kernels/common/libraries.hpp"

#ifdef CEILING_HAVE_DNNL
#include "kernels/common/dnnl_support.hpp"

namespace ceiling::kernels {

using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;

struct DnnlConv::State {
    int threads;
    dnnl::memory::desc src_md, dst_md;
    dnnl::memory weights;
    dnnl::convolution_forward prim;
    std::string impl;
};

DnnlConv::DnnlConv(DnnlConvKind kind, ConvShape s, const float* weights, int threads)
    : state_(std::make_unique<State>()) {
    auto& eng = dnnl_cpu_engine();
    dnnl_set_threads(threads);  // oneDNN splits the work when the primitive is created
    state_->threads = threads;
    const dnnl::memory::dim n = s.n, c = s.c, h = s.h, w = s.w;
    state_->src_md = dnnl::memory::desc({n, c, h, w}, dt::f32, tag::nhwc);
    state_->dst_md = dnnl::memory::desc({n, c, h, w}, dt::f32, tag::nhwc);
    // Our weight layouts as oneDNN tags: depthwise [kh][kw][c] is (g, o=1, i=1, h, w) in
    // hwigo order; dense [kh][kw][ci][co] is hwio; pointwise [ci][co] is hwio with 1x1.
    dnnl::memory::desc user_w;
    dnnl::memory::dims any_dims;
    if (kind == DnnlConvKind::depthwise) {
        any_dims = {c, 1, 1, 3, 3};
        user_w = dnnl::memory::desc(any_dims, dt::f32, tag::hwigo);
    } else {
        const dnnl::memory::dim k = kind == DnnlConvKind::dense ? 3 : 1;
        any_dims = {c, c, k, k};
        user_w = dnnl::memory::desc(any_dims, dt::f32, tag::hwio);
    }
    const dnnl::memory::dim pad = kind == DnnlConvKind::pointwise ? 0 : 1;
    const dnnl::convolution_forward::desc d(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, state_->src_md,
        dnnl::memory::desc(any_dims, dt::f32, tag::any), state_->dst_md, {1, 1}, {pad, pad},
        {pad, pad});
    const dnnl::convolution_forward::primitive_desc pd(d, eng);
    state_->impl = pd.impl_info_str();
    state_->prim = dnnl::convolution_forward(pd);
    dnnl::memory w_user(user_w, eng, const_cast<float*>(weights));
    state_->weights = dnnl::memory(pd.weights_desc(), eng);
    dnnl::reorder(w_user, state_->weights).execute(dnnl_cpu_stream(), w_user, state_->weights);
    dnnl_cpu_stream().wait();
}

DnnlConv::~DnnlConv() = default;

void DnnlConv::run(const float* in, float* out) {
    auto& eng = dnnl_cpu_engine();
    dnnl_set_threads(state_->threads);
    dnnl::memory src(state_->src_md, eng, const_cast<float*>(in));
    dnnl::memory dst(state_->dst_md, eng, out);
    state_->prim.execute(dnnl_cpu_stream(), {{DNNL_ARG_SRC, src},
                                             {DNNL_ARG_WEIGHTS, state_->weights},
                                             {DNNL_ARG_DST, dst}});
    dnnl_cpu_stream().wait();
}

std::string DnnlConv::implementation() const { return state_->impl; }

}  // namespace ceiling::kernels
#else
namespace ceiling::kernels {
struct DnnlConv::State {};
DnnlConv::DnnlConv(DnnlConvKind, ConvShape, const float*, int) {}
DnnlConv::~DnnlConv() = default;
void DnnlConv::run(const float*, float*) {}
std::string DnnlConv::implementation() const { return {}; }
}  // namespace ceiling::kernels
#endif
