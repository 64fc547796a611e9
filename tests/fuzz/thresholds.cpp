// Threshold files (--thresholds FILE, over the defaults or over a record's own thresholds in
// `report`): parse_thresholds refuses a bad one with std::invalid_argument.
#include "diagnosis/thresholds.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text = ceiling::fuzz::text(data, size);
    ceiling::fuzz::only_throws<std::invalid_argument>(
        [&] { (void)ceiling::parse_thresholds(text); });
    ceiling::Thresholds base;
    base.near_roof = 0.5;
    base.done = 0.9;
    ceiling::fuzz::only_throws<std::invalid_argument>(
        [&] { (void)ceiling::parse_thresholds(text, base); });
    return 0;
}
