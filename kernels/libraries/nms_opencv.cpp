#ifdef CEILING_HAVE_OPENCV
#include <opencv2/dnn.hpp>

#include "kernels/libraries/module.hpp"

namespace ceiling::kernels::libraries {
namespace {

// cv::Rect is {int x, y, width, height}: the same layout as Box.
static_assert(sizeof(cv::Rect) == sizeof(Box));

class Nms final : public OpenCvNms::Impl {
public:
    Nms(std::span<const Box> boxes, std::span<const float> scores, float score_threshold)
        : scores_(scores.begin(), scores.end()), threshold_(score_threshold) {
        for (const auto& b : boxes) boxes_.emplace_back(b.x, b.y, b.w, b.h);
    }
    void run(std::vector<int>& keep) override {
        cv::dnn::NMSBoxes(boxes_, scores_, threshold_, 0.5f, keep);
    }

private:
    std::vector<cv::Rect> boxes_;
    std::vector<float> scores_;
    float threshold_;
};

}  // namespace

std::unique_ptr<OpenCvNms::Impl> make_opencv_nms(std::span<const Box> boxes,
                                                 std::span<const float> scores,
                                                 float score_threshold) {
    return std::make_unique<Nms>(boxes, scores, score_threshold);
}

}  // namespace ceiling::kernels::libraries
#endif
