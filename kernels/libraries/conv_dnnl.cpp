#ifdef CEILING_HAVE_DNNL
#include "kernels/libraries/dnnl_support.hpp"
#include "kernels/libraries/module.hpp"

namespace ceiling::kernels::libraries {
namespace {

using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;

class Conv final : public DnnlConv::Impl {
public:
    Conv(DnnlConvKind kind, ConvShape s, const float* weights, int threads) : threads_(threads) {
        auto& eng = dnnl_cpu_engine();
        dnnl_set_threads(threads);  // oneDNN splits the work when the primitive is created
        const dnnl::memory::dim n = s.n, c = s.c, h = s.h, w = s.w;
        src_md_ = dnnl::memory::desc({n, c, h, w}, dt::f32, tag::nhwc);
        dst_md_ = dnnl::memory::desc({n, c, h, w}, dt::f32, tag::nhwc);
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
            dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src_md_,
            dnnl::memory::desc(any_dims, dt::f32, tag::any), dst_md_, {1, 1}, {pad, pad},
            {pad, pad});
        const dnnl::convolution_forward::primitive_desc pd(d, eng);
        impl_ = pd.impl_info_str();
        prim_ = dnnl::convolution_forward(pd);
        dnnl::memory w_user(user_w, eng, const_cast<float*>(weights));
        weights_ = dnnl::memory(pd.weights_desc(), eng);
        dnnl::reorder(w_user, weights_).execute(dnnl_cpu_stream(), w_user, weights_);
        dnnl_cpu_stream().wait();
    }

    void run(const float* in, float* out) override {
        auto& eng = dnnl_cpu_engine();
        dnnl_set_threads(threads_);
        dnnl::memory src(src_md_, eng, const_cast<float*>(in));
        dnnl::memory dst(dst_md_, eng, out);
        prim_.execute(dnnl_cpu_stream(),
                      {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights_}, {DNNL_ARG_DST, dst}});
        dnnl_cpu_stream().wait();
    }

    std::string implementation() const override { return impl_; }

private:
    int threads_;
    dnnl::memory::desc src_md_, dst_md_;
    dnnl::memory weights_;
    dnnl::convolution_forward prim_;
    std::string impl_;
};

}  // namespace

std::unique_ptr<DnnlConv::Impl> make_dnnl_conv(DnnlConvKind kind, ConvShape s,
                                               const float* weights, int threads) {
    return std::make_unique<Conv>(kind, s, weights, threads);
}

}  // namespace ceiling::kernels::libraries
#endif
