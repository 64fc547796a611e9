#pragma once
// A roofline chart as a standalone SVG (no scripts, no fonts or styles fetched): the
// machine profile's compute roofs (horizontal) and bandwidth roofs (diagonal, one per
// memory level) on log-log axes, and labelled points placed at (intensity, achieved rate).
// Used by `report --html` and by `suite`.

#include <optional>
#include <string>
#include <vector>

#include "diagnosis/machine_profile.hpp"

namespace ceiling::output {

struct RooflinePoint {
    std::string label;
    double intensity = 0;  // operations per byte
    double ops_per_s = 0;  // achieved
};

struct RooflineSvgOptions {
    int width = 760;
    int height = 460;
    // Roofs at this thread count; 0: the highest thread count the profile measured.
    int threads = 0;
    std::string title = "Roofline";
};

// Points with a non-positive or non-finite coordinate are left out (an unknown is not 0).
std::string render_roofline_svg(const MachineProfile& profile, const std::vector<RooflinePoint>& points,
                                const RooflineSvgOptions& options = {});

// Text escaped for XML / HTML element content and attribute values.
std::string xml_escape(const std::string& text);

}  // namespace ceiling::output
