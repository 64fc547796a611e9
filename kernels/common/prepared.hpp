#pragma once
// Helpers the kernel families share when they build cases: the common fields, the check
// for a (problem, variant) pair a family offers, and a PreparedKernel over buffer sets.

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/registry.hpp"

namespace ceiling::kernels {

// A (problem, variant) a family offers.
struct Offer {
    std::string_view problem;
    Variant variant;
};

// Throws std::invalid_argument when (problem, variant) is not among `offers`, naming the
// variants the problem has.
void require_offer(std::string_view kernel, std::span<const Offer> offers, std::string_view problem,
                   Variant variant);

// "shape 'x' is not of the form F" for a family.
[[noreturn]] void bad_shape(std::string_view kernel, std::string_view shape, std::string_view form,
                            std::string_view why = {});

KernelCase base_case(std::string_view kernel, std::string_view problem, Variant variant,
                     std::string shape);

// A prepared kernel as a vector of buffer sets plus a run and a verify function over a
// set: the families' setup functions fill the sets and the two functions.
template <typename Set>
class SetKernel : public PreparedKernel {
public:
    SetKernel(int threads, std::vector<Set> sets)
        : PreparedKernel(static_cast<int>(sets.size()), threads), sets_(std::move(sets)) {}
    std::function<void(Set&)> run_fn;
    std::function<Verification(const Set&)> verify_fn;
    Set& set(int i) { return sets_[static_cast<std::size_t>(i)]; }

protected:
    void run_set(int i) override { run_fn(sets_[static_cast<std::size_t>(i)]); }
    Verification verify_set(int i) const override {
        return verify_fn(sets_[static_cast<std::size_t>(i)]);
    }

private:
    std::vector<Set> sets_;
};

}  // namespace ceiling::kernels
