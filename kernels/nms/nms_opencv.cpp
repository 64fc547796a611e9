#include "kernels/nms/nms.hpp"

#include "kernels/common/libraries.hpp"

#ifdef CEILING_HAVE_OPENCV
#include <opencv2/dnn.hpp>

namespace ceiling::kernels {

// cv::Rect is {int x, y, width, height}: the same layout as Box.
static_assert(sizeof(cv::Rect) == sizeof(Box));

struct OpenCvNms::State {
    std::vector<cv::Rect> boxes;
    std::vector<float> scores;
    float threshold;
};

OpenCvNms::OpenCvNms(std::span<const Box> boxes, std::span<const float> scores,
                     float score_threshold)
    : state_(std::make_unique<State>()) {
    for (const auto& b : boxes) state_->boxes.emplace_back(b.x, b.y, b.w, b.h);
    state_->scores.assign(scores.begin(), scores.end());
    state_->threshold = score_threshold;
}

OpenCvNms::~OpenCvNms() = default;

void OpenCvNms::run(std::vector<int>& keep) {
    cv::dnn::NMSBoxes(state_->boxes, state_->scores, state_->threshold, 0.5f, keep);
}

}  // namespace ceiling::kernels
#else
namespace ceiling::kernels {
struct OpenCvNms::State {};
OpenCvNms::OpenCvNms(std::span<const Box>, std::span<const float>, float) {}
OpenCvNms::~OpenCvNms() = default;
void OpenCvNms::run(std::vector<int>& keep) { keep.clear(); }
}  // namespace ceiling::kernels
#endif
