// The declared-work grammar at the end of an NVTX message, "name {ops=... bytes=...}": the
// message is the wrapped program's, so anything may arrive. parse_declared_work never
// throws; a malformed group keeps the whole message as the name and says why. What it
// declares is finite and non-negative, and a record holding it reads back with the same
// amounts: report and diff must read every record run writes (bytes=2e19 once did not).
#include <cmath>
#include <exception>
#include <string_view>

#include <nlohmann/json.hpp>

#include "agent/run/region.hpp"
#include "diagnosis/run_record.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {

using ceiling::fuzz::finding;

bool amount(double v) { return std::isfinite(v) && v >= 0; }

void check_round_trip(const ceiling::measure::DeclaredName& d) {
    const ceiling::Work& w = *d.work;
    if (!amount(w.ops) || !amount(w.compulsory_bytes) || !amount(w.working_set_bytes) ||
        (w.written_bytes && !amount(*w.written_bytes)))
        finding("declared an amount that is negative, infinite or NaN");
    ceiling::RunRecord record;
    ceiling::RecordedRegion region;
    region.path = region.name = "r";
    region.measurement.work = w;
    record.regions.push_back(region);
    ceiling::RunRecord back;
    try {
        back = ceiling::parse_run_record(nlohmann::json(record).dump());
    } catch (const std::exception& e) {
        finding(std::string("a record holding what parsed does not read back: ") + e.what());
    }
    const auto& read = back.regions.at(0).measurement.work;
    if (!read || read->ops != w.ops || read->compulsory_bytes != w.compulsory_bytes ||
        read->working_set_bytes != w.working_set_bytes || read->written_bytes != w.written_bytes)
        finding("a record holding what parsed reads back other amounts");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view message(reinterpret_cast<const char*>(data), size);
    ceiling::fuzz::only_throws<ceiling::fuzz::NoException>([&] {
        const auto d = ceiling::measure::parse_declared_work(message);
        if (!d.error.empty() && d.work) finding("a malformed group still declared work");
        if (d.work) check_round_trip(d);
    });
    return 0;
}
