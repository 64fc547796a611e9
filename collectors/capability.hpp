#pragma once
// What a collector can measure on this machine, or why not and how to enable it. Every
// probe answers with one of these so `ceiling doctor` and the measuring loops can say the
// same thing to the user ("no CPU PMU exposed by this VM: enable the virtual PMU").

#include <stdexcept>
#include <string>

namespace ceiling::collectors {

struct Capability {
    bool available = false;
    std::string reason;  // unavailable: why; available: optional detail ("user space only")
    std::string fix;     // unavailable: how to enable it; empty when nothing can be done

    static Capability yes(std::string detail = {}) { return {true, std::move(detail), {}}; }
    static Capability no(std::string why, std::string how_to_fix = {}) {
        return {false, std::move(why), std::move(how_to_fix)};
    }
};

// Thrown by start() when the environment refuses what probe() allowed (a race, a limit).
// The message is one line and already says how to fix it when the fix is known.
struct CollectorError : std::runtime_error {
    explicit CollectorError(const Capability& c)
        : std::runtime_error(c.fix.empty() ? c.reason : c.reason + " (fix: " + c.fix + ")"),
          capability(c) {}
    Capability capability;
};

}  // namespace ceiling::collectors
