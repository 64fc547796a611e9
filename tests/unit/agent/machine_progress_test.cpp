// `ceiling machine`'s progress: the whole total is announced before the first step and
// every step is counted in it (the total used to grow from 39 to 47 as phases began).
#include "agent/measure/machine.hpp"

#include <gtest/gtest.h>

namespace ceiling::measure {
namespace {

TEST(MachineProgress, TotalIsKnownBeforeTheFirstStepAndMatchesTheSteps) {
#if defined(__SANITIZE_ADDRESS__)
    GTEST_SKIP() << "a whole quick profile under ASan takes minutes; the release build checks it";
#endif
    int total = 0, steps = 0, announcements_after_start = 0;
    MachineOptions o;
    o.quick = true;
    o.add_steps = [&](int n) {
        total += n;
        if (steps > 0) ++announcements_after_start;
    };
    o.on_step = [&](const std::string&) { ++steps; };
    const MachineProfile p = measure_machine(o);
    // A GPU adds its roofs when its phase begins (devices are enumerated there).
    if (p.gpus.empty()) {
        EXPECT_EQ(announcements_after_start, 0);
    }
    EXPECT_EQ(steps, total);
    EXPECT_GT(steps, 5);
}

}  // namespace
}  // namespace ceiling::measure
