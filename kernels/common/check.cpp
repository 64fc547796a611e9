#include "kernels/common/check.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "kernels/common/random.hpp"

namespace ceiling::kernels {

void ErrorCheck::add(double got, double ref, double scale, std::size_t where) {
    ++checked_;
    const double err = std::abs(got - ref) / scale;
    // NaN compares false: record it as the worst error so it can never pass.
    if (!(err <= max_error_)) {
        max_error_ = std::isnan(err) ? INFINITY : err;
        worst_ = where;
        worst_got_ = got;
        worst_ref_ = ref;
    }
}

void ErrorCheck::fail(std::string why) {
    if (failure_.empty()) failure_ = std::move(why);
}

Verification ErrorCheck::result() const {
    Verification v;
    v.max_error = max_error_;
    v.tolerance = tolerance_;
    v.ok = failure_.empty() && checked_ > 0 && max_error_ <= tolerance_;
    char buf[256];
    if (!failure_.empty()) {
        v.detail = failure_;
    } else if (checked_ == 0) {
        v.detail = "nothing was checked";
    } else {
        std::snprintf(buf, sizeof buf, "%zu outputs checked, max %s %.3g (tolerance %.3g)",
                      checked_, unit_.c_str(), max_error_, tolerance_);
        v.detail = buf;
        if (!v.ok) {
            std::snprintf(buf, sizeof buf, "; worst at %zu: got %.9g, expected %.9g", worst_,
                          worst_got_, worst_ref_);
            v.detail += buf;
        }
    }
    return v;
}

std::vector<std::size_t> sample_indices(std::size_t total, std::size_t max_samples,
                                        std::uint64_t seed) {
    std::vector<std::size_t> out;
    if (total <= max_samples) {
        out.resize(total);
        for (std::size_t i = 0; i < total; ++i) out[i] = i;
        return out;
    }
    out.reserve(max_samples);
    out.push_back(0);
    out.push_back(total - 1);
    for (std::size_t i = 2; i < max_samples; ++i) out.push_back(random_bits(seed, i) % total);
    return out;
}

std::vector<std::int64_t> parse_dims(std::string_view s, std::size_t count) {
    std::vector<std::int64_t> dims;
    std::size_t pos = 0;
    while (pos <= s.size()) {
        const std::size_t end = std::min(s.find('x', pos), s.size());
        std::int64_t v = 0;
        const auto* first = s.data() + pos;
        const auto* last = s.data() + end;
        const auto r = std::from_chars(first, last, v);
        if (first == last || r.ec != std::errc{} || r.ptr != last || v <= 0) return {};
        dims.push_back(v);
        pos = end + 1;
    }
    if (count != 0 && dims.size() != count) return {};
    return dims;
}

std::string dims_string(std::initializer_list<std::int64_t> dims) {
    std::string s;
    for (auto d : dims) {
        if (!s.empty()) s += 'x';
        s += std::to_string(d);
    }
    return s;
}

}  // namespace ceiling::kernels
