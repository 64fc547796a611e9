#include "diagnosis/vector_width.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <string_view>

#include "diagnosis/decision.hpp"
#include "diagnosis/format.hpp"

namespace ceiling {
namespace {

// Roofs 1.3x or more apart: on a CPU whose 512-bit instructions run at the 256-bit rate (Zen
// 4) the width is no lever, and no rung is named.
constexpr double width_ratio_min = 1.3;

// Variables that make a library pick a narrower instruction set than the CPU has.
constexpr std::array<std::string_view, 6> isa_variables = {
    "OPENBLAS_CORETYPE", "MKL_ENABLE_INSTRUCTIONS", "MKL_DEBUG_CPU_TYPE",
    "DNNL_MAX_CPU_ISA",  "ONEDNN_MAX_CPU_ISA",      "ATEN_CPU_CAPABILITY"};

std::string times(double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1fx", x);
    return buf;
}

// "256-bit vectors" from "vfmadd231ps ymm"; scalar code from a scalar engine.
std::string width_of(const ComputeRoof& r) {
    if (r.engine == Engine::scalar) return "scalar code (one element an instruction)";
    for (const auto& [reg, bits] : {std::pair{"xmm", "128"}, {"ymm", "256"}, {"zmm", "512"}})
        if (r.instruction.find(reg) != std::string::npos) return std::string(bits) + "-bit vectors";
    return "the " + r.name + " roof's instructions";
}

const ComputeRoof* one_thread(const MachineProfile& p, const std::string& name) {
    for (const auto& r : p.compute_roofs)
        if (r.name == name && r.threads == 1) return &r;
    return nullptr;
}

}  // namespace

std::optional<WidthAdvice> narrower_vectors(const MachineProfile& profile, const Diagnosis& d,
                                            const Thresholds& t,
                                            const std::map<std::string, std::string>& environment,
                                            bool own_code) {
    const auto c = std::find_if(d.roofs.begin(), d.roofs.end(), [](const RoofComparison& r) {
        return r.kind == RoofKind::compute && r.fraction && r.verdict != Verdict::above_roof;
    });
    // Only where it reads latency bound (near no roof), whose move the width would mislead.
    if (d.bound != Bound::latency || c == d.roofs.end() || !(*c->fraction < t.near_roof))
        return std::nullopt;
    // Right of the ridge only (or with no bytes to place it): left of it the roof to approach
    // is bandwidth, and ridge_side says what to look at there (a 3x3 blur streaming at half
    // the DRAM roof read 80 % of the scalar roof too).
    if (const auto pos = ridge_position(d); pos && !pos->right) return std::nullopt;
    const ComputeRoof* wide = one_thread(profile, c->roof);
    if (!wide || !(wide->ops_per_s.median > 0)) return std::nullopt;
    // Fastest first: the widest rung that explains the rate is the one to name.
    std::vector<const ComputeRoof*> rungs;
    for (const auto& r : profile.compute_roofs)
        if (r.threads == 1 && r.precision == wide->precision && r.name != wide->name &&
            r.ops_per_s.median > 0 &&
            wide->ops_per_s.median >= width_ratio_min * r.ops_per_s.median)
            rungs.push_back(&r);
    std::sort(rungs.begin(), rungs.end(), [](const ComputeRoof* a, const ComputeRoof* b) {
        return a->ops_per_s.median > b->ops_per_s.median;
    });
    for (const ComputeRoof* n : rungs) {
        const double ratio = wide->ops_per_s.median / n->ops_per_s.median;
        const double at = *c->fraction * ratio;
        if (at < t.near_roof || at > 1 + t.above_roof_tolerance) continue;
        std::string set;
        for (const auto name : isa_variables)
            if (const auto it = environment.find(std::string(name)); it != environment.end())
                set += (set.empty() ? "" : ", ") + it->first + "=" + it->second;
        const std::string narrow = width_of(*n), wider = width_of(*wide);
        const std::string lever =
            !own_code ? "the library's kernel for this CPU's widest vectors (its build and its "
                        "ISA dispatch: nothing of the program's to recompile)"
            : n->engine == Engine::scalar
                ? "vectorised code (loops the compiler can vectorise, -O3 -march=native; a "
                  "vectorised library)"
                : "code built for its widest vectors (-march=native; a library's kernel for this "
                  "CPU)";
        const std::string picked =
            set.empty() ? ""
                        : "where it calls that library, " + set +
                              " in its environment picks a narrower kernel than this CPU's";
        return WidthAdvice{
            {FindingKind::assumption,
             "it ran at " + percent(at) + " of the " + n->name + " roof (" + n->instruction +
                 ") and " + percent(*c->fraction) + " of the " + wide->name +
                 " roof it is judged against: as fast as " + narrow + " allow. If its code runs " +
                 narrow + ", " + lever + " raises its roof " + times(ratio) +
                 (picked.empty() ? "" : " (" + picked + ")") + "; if it already runs " + wider +
                 ", the gap is as its verdict says (no PMU counted which it ran)"},
            "check its vector width: " + percent(at) + " of the " + n->name + " roof, " +
                percent(*c->fraction) + " of the " + wide->name + " one, as " + narrow +
                " would run" + (picked.empty() ? "" : " (" + picked + ")") + ": " + lever +
                "; then "};
    }
    return std::nullopt;
}

void weigh_vector_width(const MachineProfile& profile, Diagnosis& d, const Thresholds& t,
                        const std::map<std::string, std::string>& environment, const Evidence& e) {
    auto w = narrower_vectors(profile, d, t, environment, licensed(Premise::own_code, e));
    if (!w) return;
    insert_before_roofline_move(d, w->move);
    d.findings.push_back(std::move(w->finding));
}

}  // namespace ceiling
