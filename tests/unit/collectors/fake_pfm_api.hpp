#pragma once
// A PfmApi that knows a fixed list of events, for collector tests that must not depend on
// which CPU runs them.

#include <map>
#include <string>

#include "collectors/pfm_api.hpp"

namespace ceiling::collectors::testing {

class FakePfmApi : public PfmApi {
  public:
    std::optional<std::string> host;  // the detected model
    // Fully qualified ("spr::EVENT:UMASK") or bare names -> encodings.
    std::map<std::string, EventEncoding, std::less<>> events;

    Capability status() const override { return Capability::yes("fake libpfm4"); }
    std::string version() const override { return "4.0"; }
    std::optional<std::string> host_pmu() const override { return host; }
    PfmResult encode(std::string_view event) const override {
        if (auto it = events.find(event); it != events.end())
            return {PfmEncoding{it->second, it->first}, {}};
        return {std::nullopt, "event not found"};
    }
    std::vector<std::string> event_names(std::string_view pmu) const override {
        std::vector<std::string> out;
        const std::string prefix = std::string(pmu) + "::";
        for (const auto& [name, e] : events)
            if (name.rfind(prefix, 0) == 0) out.push_back(name.substr(prefix.size()));
        return out;
    }
};

}  // namespace ceiling::collectors::testing
