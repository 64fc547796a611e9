// The declared-work grammar at the end of an NVTX message, "name {ops=... bytes=...}": the
// message is the wrapped program's, so anything may arrive. parse_declared_work never
// throws; a malformed group keeps the whole message as the name and says why.
#include <string_view>

#include "agent/run/region.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view message(reinterpret_cast<const char*>(data), size);
    ceiling::fuzz::only_throws<ceiling::fuzz::NoException>([&] {
        const auto d = ceiling::measure::parse_declared_work(message);
        if (!d.error.empty() && d.work)
            ceiling::fuzz::finding("a malformed group still declared work");
    });
    return 0;
}
