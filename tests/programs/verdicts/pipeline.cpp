// Labelled program: not the model. Each step decodes text records, normalises them and runs
// a small model on the result; with --model-regions infer the model is a small part of the
// time. `step` encloses all three, so it must not be listed with the model's time in it.
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "verdict_work.hpp"

int main() {
    using namespace verdicts;
    const int steps = 8;
    const std::size_t records = 60000;
    // The model's share is small by construction: ~3 ms of FMAs per step.
    const std::int64_t iterations = fma_iterations_for(0.003);
    const double ops = fma_ops_per_iteration() * static_cast<double>(iterations);
    std::string text;
    for (std::size_t i = 0; i < records; ++i)
        text += std::to_string(static_cast<double>(i) * 0.37) + ",";
    double keep = 0;
    for (int s = 0; s < steps; ++s) {
        nvtxRangePushA("step");
        nvtxRangePushA("decode");
        std::vector<double> values;
        values.reserve(records);
        for (const char* p = text.c_str(); *p;) {
            char* end = nullptr;
            values.push_back(std::strtod(p, &end));
            p = *end ? end + 1 : end;
        }
        nvtxRangePop();
        nvtxRangePushA("normalise");
        double mean = 0;
        for (double v : values) mean += v;
        mean /= static_cast<double>(values.size());
        for (double& v : values) v = std::log1p(std::abs(v - mean));
        nvtxRangePop();
        nvtxRangePushA(declared("infer", ops, 0).c_str());
        keep += fma_loop(iterations, static_cast<float>(values[static_cast<std::size_t>(s)]));
        nvtxRangePop();
        nvtxRangePop();
    }
    std::printf("checksum=%g\n", keep);
    return 0;
}
