#include "kernels/resize/resize.hpp"

#include "kernels/common/libraries.hpp"

#ifdef CEILING_HAVE_OPENCV
#include <opencv2/imgproc.hpp>

namespace ceiling::kernels {

struct OpenCvResize::State {
    ResizeShape s;
};

OpenCvResize::OpenCvResize(ResizeShape s) : state_(std::make_unique<State>(State{s})) {}
OpenCvResize::~OpenCvResize() = default;

void OpenCvResize::run(const std::uint8_t* src, std::uint8_t* dst, int threads) {
    const auto& s = state_->s;
    opencv_set_threads(threads);
    const cv::Mat in(s.src_h, s.src_w, CV_8UC3, const_cast<std::uint8_t*>(src));
    cv::Mat out(s.dst_h, s.dst_w, CV_8UC3, dst);
    cv::resize(in, out, out.size(), 0, 0, cv::INTER_LINEAR);
}

}  // namespace ceiling::kernels
#else
namespace ceiling::kernels {
struct OpenCvResize::State {};
OpenCvResize::OpenCvResize(ResizeShape) {}
OpenCvResize::~OpenCvResize() = default;
void OpenCvResize::run(const std::uint8_t*, std::uint8_t*, int) {}
}  // namespace ceiling::kernels
#endif
