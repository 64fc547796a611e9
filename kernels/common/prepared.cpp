#include "kernels/common/prepared.hpp"

#include <algorithm>
#include <stdexcept>

namespace ceiling::kernels {

void require_offer(std::string_view kernel, std::span<const Offer> offers, std::string_view problem,
                   Variant variant) {
    std::string valid;
    for (const auto& o : offers) {
        if (o.problem != problem) continue;
        if (o.variant == variant) return;
        if (!valid.empty()) valid += ", ";
        valid += to_string(o.variant);
    }
    throw std::invalid_argument(std::string(kernel) + "/" + std::string(problem) +
                                " has no variant '" + std::string(to_string(variant)) +
                                "' (valid: " + valid + ")");
}

void bad_shape(std::string_view kernel, std::string_view shape, std::string_view form,
               std::string_view why) {
    std::string msg = std::string(kernel) + " shape '" + std::string(shape) + "' ";
    msg += why.empty() ? "is not of the form " + std::string(form) : std::string(why);
    throw std::invalid_argument(msg);
}

KernelCase base_case(std::string_view kernel, std::string_view problem, Variant variant,
                     std::string shape) {
    KernelCase c;
    c.kernel = kernel;
    c.problem = problem;
    c.variant = variant;
    c.shape = std::move(shape);
    c.multithreaded = variant != Variant::naive;
    return c;
}

}  // namespace ceiling::kernels
