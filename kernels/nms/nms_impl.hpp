#pragma once
// The vector overlap test written once over integer vector traits V (lanes int32 lanes).
// Included only by the per-ISA translation units (traits in anonymous namespaces).

#include "kernels/nms/nms.hpp"

namespace ceiling::kernels::detail {

// Per block of kept boxes: intersection corners (4 max/min), width and height clamped at
// 0, intersection area (1 multiply), then 3 x inter > area_c + area_k, or both areas 0.
// Returns at the first block with a hit: most candidates of a cluster are suppressed by
// one of the first kept boxes they meet.
template <typename V>
bool any_overlap(const KeptColumns& k, int count, std::int32_t x1, std::int32_t y1, std::int32_t x2,
                 std::int32_t y2, std::int32_t area) {
    using R = typename V::reg;
    constexpr int L = V::lanes;
    const R cx1 = V::set1(x1), cy1 = V::set1(y1), cx2 = V::set1(x2), cy2 = V::set1(y2);
    const R ca = V::set1(area), zero = V::zero();
    for (int i = 0; i < count; i += L) {
        const R iw = V::max(V::sub(V::min(cx2, V::load(k.x2 + i)), V::max(cx1, V::load(k.x1 + i))), zero);
        const R ih = V::max(V::sub(V::min(cy2, V::load(k.y2 + i)), V::max(cy1, V::load(k.y1 + i))), zero);
        const R inter = V::mullo(iw, ih);
        const R sum = V::add(ca, V::load(k.area + i));
        const unsigned hit = V::gt(V::add(V::add(inter, inter), inter), sum) | V::eq(sum, zero);
        const int left = count - i;
        if (hit & (left >= L ? V::all : (1u << left) - 1u)) return true;
    }
    return false;
}

}  // namespace ceiling::kernels::detail
