// Saved run records, read by `ceiling report` and `ceiling diff` (store::load_run_record):
// parse_run_record refuses a bad one with std::invalid_argument. One it accepts is also
// written back out, as report and diff hand records on to their renderers.
#include <nlohmann/json.hpp>

#include "diagnosis/run_record.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    ceiling::fuzz::only_throws<std::invalid_argument>([&] {
        const ceiling::RunRecord r = ceiling::parse_run_record(ceiling::fuzz::text(data, size));
        (void)nlohmann::json(r).dump();
    });
    return 0;
}
