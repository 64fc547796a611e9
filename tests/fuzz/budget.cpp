// Budget files (`ceiling run --budget FILE`): parse_budgets refuses a bad one with
// std::invalid_argument; the budgets it accepts are then judged, as run does, against
// actuals that pass some and fail others.
#include "diagnosis/budget.hpp"
#include "diagnosis/statistics.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    ceiling::fuzz::only_throws<std::invalid_argument>([&] {
        const ceiling::Budgets b = ceiling::parse_budgets(ceiling::fuzz::text(data, size));
        ceiling::BudgetActuals a;
        a.latency_s = ceiling::summarize({0.010, 0.012, 0.011, 0.030});
        a.peak_memory_bytes = 1.5e9;
        (void)ceiling::judge_budgets(b, a, ceiling::Thresholds{});
        (void)ceiling::judge_budgets(b, ceiling::BudgetActuals{}, ceiling::Thresholds{});
    });
    return 0;
}
