#pragma once
// The CUPTI and CUDA driver errors users meet, as a table: what each means for ceiling and
// how to fix it. Codes are the plain integers of CUptiResult / CUresult so the table (and
// `ceiling doctor`) works in builds without CUPTI; cupti_runtime.cpp checks them against the
// real enums with static_asserts.

#include <span>
#include <string>
#include <string_view>

#include "collectors/capability.hpp"

namespace ceiling::collectors::gpu {

struct ErrorExplanation {
    int code;
    std::string_view name;     // "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"
    std::string_view meaning;  // for people
    std::string_view fix;      // empty when nothing can be done
};

std::span<const ErrorExplanation> cupti_errors();
std::span<const ErrorExplanation> cuda_driver_errors();

// One line: "<what> failed: <meaning> (<NAME>)", and the fix.
Capability explain_cupti_error(int code, std::string_view what);
Capability explain_cuda_driver_error(int code, std::string_view what);

// CUptiResult / CUresult values the collectors branch on.
inline constexpr int cupti_success = 0;
inline constexpr int cupti_insufficient_privileges = 35;
inline constexpr int cupti_multiple_subscribers = 39;
inline constexpr int cuda_success = 0;
inline constexpr int cuda_error_no_device = 100;

}  // namespace ceiling::collectors::gpu
