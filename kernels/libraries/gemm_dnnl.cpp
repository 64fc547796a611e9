#ifdef CEILING_HAVE_DNNL
#include "kernels/libraries/dnnl_support.hpp"
#include "kernels/libraries/module.hpp"

namespace ceiling::kernels::libraries {
namespace {

using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;

class DnnlMatmul final : public DnnlMatmulBf16::Impl {
public:
    DnnlMatmul(int m, int n, int k, const Bf16* b, int threads) : threads_(threads) {
        auto& eng = dnnl_cpu_engine();
        dnnl_set_threads(threads);  // oneDNN sizes its work split when the primitive is created
        a_md_ = dnnl::memory::desc({m, k}, dt::bf16, tag::ab);
        c_md_ = dnnl::memory::desc({m, n}, dt::f32, tag::ab);
        const dnnl::memory::desc b_any({k, n}, dt::bf16, tag::any);
        const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md_, b_any, c_md_), eng);
        impl_ = pd.impl_info_str();
        prim_ = dnnl::matmul(pd);
        dnnl::memory b_user({{k, n}, dt::bf16, tag::ab}, eng, const_cast<Bf16*>(b));
        weights_ = dnnl::memory(pd.weights_desc(), eng);
        dnnl::reorder(b_user, weights_).execute(dnnl_cpu_stream(), b_user, weights_);
        dnnl_cpu_stream().wait();
    }

    void run(const Bf16* a, float* c) override {
        auto& eng = dnnl_cpu_engine();
        dnnl_set_threads(threads_);
        dnnl::memory am(a_md_, eng, const_cast<Bf16*>(a));
        dnnl::memory cm(c_md_, eng, c);
        prim_.execute(dnnl_cpu_stream(),
                      {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, weights_}, {DNNL_ARG_DST, cm}});
        dnnl_cpu_stream().wait();
    }

    std::string implementation() const override { return impl_; }

private:
    int threads_;
    dnnl::memory::desc a_md_, c_md_;
    dnnl::memory weights_;
    dnnl::matmul prim_;
    std::string impl_;
};

}  // namespace

std::unique_ptr<DnnlMatmulBf16::Impl> make_dnnl_matmul_bf16(int m, int n, int k, const Bf16* b,
                                                            int threads) {
    try {
        return std::make_unique<DnnlMatmul>(m, n, k, b, threads);
    } catch (const dnnl::error& e) {
        // No implementation for this CPU (oneDNN 2.6 on an AVX2-only Zen 3: bf16 matmul
        // needs AVX-512): null, which the caller reports as unavailable.
        if (e.status == dnnl_unimplemented) return nullptr;
        throw;
    }
}

}  // namespace ceiling::kernels::libraries
#endif
