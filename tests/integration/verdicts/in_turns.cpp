#include "tests/integration/verdicts/in_turns.hpp"

#include <cstdio>
#include <memory>
#include <vector>

#include "agent/machine/roof_check.hpp"

namespace ceiling::testing {
namespace {

// Turns taken, and the looks at the roof on each side of a run: enough that one turn spoiled
// by the host is outvoted, few enough to add seconds, not minutes, to an above-roof run.
constexpr int turns = 3;
constexpr int looks_each_side = 2;
// Turns whose roof held that a verdict of over-count or of no recurrence needs.
constexpr int held_turns_needed = 2;

std::string fixed(double x, int decimals) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, x);
    return buf;
}

// The roof kernel behind `c` at its thread count, else at one thread (a comparison whose
// roof was scaled from one core: its scale follows that core's).
std::unique_ptr<measure::RoofLook> look_for(const MachineProfile& profile,
                                            const RoofComparison& c) {
    for (const int t : {c.threads, 1}) {
        auto look = c.kind == RoofKind::compute ? measure::RoofLook::compute(profile, c.roof, t)
                                                : measure::RoofLook::dram(profile, t);
        if (look) return look;
    }
    return nullptr;
}

// The same comparison in a rerun's verdict of `path`: the same roof (compute) or level
// (bandwidth); its thread count may differ with the cores the rerun kept busy.
std::optional<double> fraction_in(const RunRecord& rec, const std::string& path,
                                  const RoofComparison& c) {
    for (const auto& v : rec.region_diagnoses) {
        if (v.path != path) continue;
        for (const auto& r : v.diagnosis.roofs)
            if (r.kind == c.kind && (c.kind == RoofKind::compute ? r.roof == c.roof
                                                                 : r.level == c.level))
                return r.fraction;
    }
    return std::nullopt;
}

}  // namespace

InTurnsOutcome decide(const std::vector<Turn>& turns, double above_ratio) {
    int held = 0, above = 0;
    for (const auto& t : turns) {
        if (!t.held_fraction) continue;
        ++held;
        above += *t.held_fraction > above_ratio;
    }
    if (held < held_turns_needed) return InTurnsOutcome::roof_moved;
    return above == held ? InTurnsOutcome::over_count : InTurnsOutcome::did_not_recur;
}

InTurns measure_in_turns(const MachineProfile& profile, const std::string& path,
                         const RoofComparison& above, double above_ratio, const Rerun& rerun) {
    InTurns out;
    const std::string what = path + " at " +
                             (above.kind == RoofKind::compute ? above.roof : above.level) + ": " +
                             fixed(above.fraction.value_or(0), 2) + " of the profile's roof";
    auto look = look_for(profile, above);
    if (!look) {
        // Nothing can clear it: a roof the profile has but this machine cannot run now.
        out.outcome = InTurnsOutcome::over_count;
        out.detail = what + "; its roof cannot be measured again here";
        return out;
    }
    std::vector<Turn> measured;
    std::string turns_said;
    for (int t = 1; t <= turns; ++t) {
        look->forget();
        for (int i = 0; i < looks_each_side; ++i) look->look();
        std::string why;
        const auto rec = rerun(why);
        for (int i = 0; i < looks_each_side; ++i) look->look();
        const RoofCheck check = look->check();
        const double now = check.now_per_s / check.profile_per_s;
        turns_said += "\n      turn " + std::to_string(t) + ": roof " + fixed(now, 2) +
                      " of the profile (slowest look " +
                      fixed(check.slowest_ratio().value_or(now), 2) + ")";
        const auto fraction = rec ? fraction_in(*rec, path, above) : std::nullopt;
        Turn& turn = measured.emplace_back();
        if (!rec) {
            turns_said += ", run set aside: " + why;
        } else if (moved_within(check)) {
            turns_said += ", moved during the turn";
        } else if (!fraction) {
            turns_said += ", the run was not judged against that roof";
        } else {
            turn.held_fraction = *fraction / now;
            turns_said += ", the run " + fixed(*fraction, 2) + " of the profile's roof: " +
                          fixed(*turn.held_fraction, 2) + " of the roof measured around it";
        }
    }
    const RoofCheck looked = look->check();
    out.detail = what + "; in turns with its roof (" + looked.kernel + " at " +
                 std::to_string(looked.threads) + " threads, against the profile's " +
                 fixed(looked.profile_per_s / 1e9, 1) + "G/s):" + turns_said;
    out.outcome = decide(measured, above_ratio);
    return out;
}

}  // namespace ceiling::testing
