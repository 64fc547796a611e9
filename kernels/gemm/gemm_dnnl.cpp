#include "kernels/gemm/gemm_dnnl.hpp"

#include "kernels/common/libraries.hpp"

#ifdef CEILING_HAVE_DNNL
#include "kernels/common/dnnl_support.hpp"

namespace ceiling::kernels {

using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;

struct DnnlMatmulBf16::State {
    int threads;
    dnnl::memory::desc a_md, c_md;
    dnnl::memory weights;
    dnnl::matmul prim;
    std::string impl;
};

DnnlMatmulBf16::DnnlMatmulBf16(int m, int n, int k, const Bf16* b, int threads)
    : state_(std::make_unique<State>()) {
    auto& eng = dnnl_cpu_engine();
    dnnl_set_threads(threads);  // oneDNN sizes its work split when the primitive is created
    state_->threads = threads;
    state_->a_md = dnnl::memory::desc({m, k}, dt::bf16, tag::ab);
    state_->c_md = dnnl::memory::desc({m, n}, dt::f32, tag::ab);
    const dnnl::memory::desc b_any({k, n}, dt::bf16, tag::any);
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(state_->a_md, b_any, state_->c_md),
                                          eng);
    state_->impl = pd.impl_info_str();
    state_->prim = dnnl::matmul(pd);
    dnnl::memory b_user({{k, n}, dt::bf16, tag::ab}, eng, const_cast<Bf16*>(b));
    state_->weights = dnnl::memory(pd.weights_desc(), eng);
    dnnl::reorder(b_user, state_->weights).execute(dnnl_cpu_stream(), b_user, state_->weights);
    dnnl_cpu_stream().wait();
}

DnnlMatmulBf16::~DnnlMatmulBf16() = default;

void DnnlMatmulBf16::run(const Bf16* a, float* c) {
    auto& eng = dnnl_cpu_engine();
    dnnl_set_threads(state_->threads);
    dnnl::memory am(state_->a_md, eng, const_cast<Bf16*>(a));
    dnnl::memory cm(state_->c_md, eng, c);
    state_->prim.execute(dnnl_cpu_stream(), {{DNNL_ARG_SRC, am},
                                             {DNNL_ARG_WEIGHTS, state_->weights},
                                             {DNNL_ARG_DST, cm}});
    dnnl_cpu_stream().wait();
}

std::string DnnlMatmulBf16::implementation() const { return state_->impl; }

}  // namespace ceiling::kernels
#else
namespace ceiling::kernels {
struct DnnlMatmulBf16::State {};
DnnlMatmulBf16::DnnlMatmulBf16(int, int, int, const Bf16*, int) {}
DnnlMatmulBf16::~DnnlMatmulBf16() = default;
void DnnlMatmulBf16::run(const Bf16*, float*) {}
std::string DnnlMatmulBf16::implementation() const { return {}; }
}  // namespace ceiling::kernels
#endif
