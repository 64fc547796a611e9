// Machine profiles (--profile FILE, the saved one, and the copy inside every run record):
// parse_machine_profile refuses a bad one with std::invalid_argument.
#include <nlohmann/json.hpp>

#include "diagnosis/machine_profile.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    ceiling::fuzz::only_throws<std::invalid_argument>([&] {
        const ceiling::MachineProfile p =
            ceiling::parse_machine_profile(ceiling::fuzz::text(data, size));
        (void)nlohmann::json(p).dump();
    });
    return 0;
}
