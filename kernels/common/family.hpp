#pragma once
// What each kernel family gives the registry: its problems, its standard cases and a case
// at any shape. One table in registry.cpp lists the families.

#include <span>
#include <string_view>
#include <vector>

#include "kernels/registry.hpp"

namespace ceiling::kernels {

struct KernelFamily {
    std::string_view name;
    std::span<const std::string_view> problems;
    std::string_view shape_form;  // how a shape is written, for error messages
    std::vector<KernelCase> (*standard_cases)();
    // Throws std::invalid_argument for a shape or a problem/variant pair it does not offer.
    KernelCase (*make_case)(std::string_view problem, Variant variant, std::string_view shape);
};

// One row of a family's table of standard cases: which problem, variant and shape, and
// whether the default and the quick suite include it.
struct StandardCase {
    std::string_view problem;
    Variant variant;
    std::string_view shape;
    bool in_default, in_quick;
};

// The cases of such a table, made by the family's make_case, in table order.
inline std::vector<KernelCase> cases_of(std::span<const StandardCase> table,
                                        KernelCase (*make_case)(std::string_view, Variant,
                                                                std::string_view)) {
    std::vector<KernelCase> out;
    for (const auto& s : table) {
        auto c = make_case(s.problem, s.variant, s.shape);
        c.in_default = s.in_default;
        c.in_quick = s.in_quick;
        out.push_back(std::move(c));
    }
    return out;
}

const KernelFamily& gemm_family();
const KernelFamily& gemv_family();
const KernelFamily& conv_family();
const KernelFamily& nms_family();
const KernelFamily& resize_family();

}  // namespace ceiling::kernels
