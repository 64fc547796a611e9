#ifdef CEILING_HAVE_OPENCV
#include <opencv2/core/utility.hpp>
#include <opencv2/imgproc.hpp>

#include "kernels/libraries/module.hpp"

namespace ceiling::kernels::libraries {
namespace {

class Resize final : public OpenCvResize::Impl {
public:
    explicit Resize(ResizeShape s) : s_(s) {}
    void run(const std::uint8_t* src, std::uint8_t* dst, int threads) override {
        cv::setNumThreads(threads);  // OpenCV takes its thread count from global state
        const cv::Mat in(s_.src_h, s_.src_w, CV_8UC3, const_cast<std::uint8_t*>(src));
        cv::Mat out(s_.dst_h, s_.dst_w, CV_8UC3, dst);
        cv::resize(in, out, out.size(), 0, 0, cv::INTER_LINEAR);
    }

private:
    ResizeShape s_;
};

}  // namespace

std::unique_ptr<OpenCvResize::Impl> make_opencv_resize(ResizeShape s) {
    return std::make_unique<Resize>(s);
}

}  // namespace ceiling::kernels::libraries
#endif
