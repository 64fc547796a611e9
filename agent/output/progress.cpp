#include "agent/output/progress.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>

namespace ceiling::output {

bool progress_wanted(bool quiet) { return !quiet && isatty(STDERR_FILENO) == 1; }

Progress::Progress(std::string title, int total, bool enabled)
    : title_(std::move(title)), total_(total), enabled_(enabled) {}

Progress::~Progress() {
    if (enabled_) std::fprintf(stderr, "\r\033[K");
}

void Progress::step(const std::string& what) {
    ++done_;
    if (!enabled_) return;
    // At most ten lines a second: thousands of quick steps (run --repeat) would otherwise
    // spend their time drawing.
    const auto now = std::chrono::steady_clock::now();
    if (done_ != total_ && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    std::fprintf(stderr, "\r\033[K%s [%d/%d] %s", title_.c_str(), done_, total_, what.c_str());
    std::fflush(stderr);
}

}  // namespace ceiling::output
