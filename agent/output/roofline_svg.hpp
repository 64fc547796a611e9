#pragma once
// A roofline chart as a standalone SVG (no scripts, no fonts or styles fetched): the
// machine profile's compute roofs (horizontal, one per roof name: those the points were
// judged against and the highest, or all when no point was judged) and bandwidth roofs
// (diagonal, one per memory level) on log-log axes, each labelled on its line with its
// value, and numbered points at (intensity, achieved rate), listed beside the plot with
// their labels (the numbers beside close points may overlap; the list is what to read),
// coloured by family and shaped by variant. A point judged against a roof gets a dotted line up to that roof's attainable
// rate at its intensity: the distance the verdict measured, even where the plotted roofs
// (one thread count) are not the ones it was judged against. Used by `report --html` and
// by `suite`.

#include <optional>
#include <string>
#include <vector>

#include "diagnosis/machine_profile.hpp"
#include "diagnosis/run_record.hpp"

namespace ceiling::output {

struct RooflinePoint {
    std::string label;
    double intensity = 0;  // operations per byte
    double ops_per_s = 0;  // achieved
    std::string family;    // colour: points of one family share it (e.g. the kernel)
    std::string variant;   // marker: "naive" square, "optimized" circle, "library" triangle
    // The attainable rate at this intensity of the roofs the point was judged against, and
    // what they were ("fp32_fma512 at 1 thread: 22%"); absent when it was not judged.
    std::optional<double> judged_per_s;
    std::string judged_against;
    std::vector<std::string> compute_roofs;  // names of the compute roofs it was judged against
};

struct RooflineSvgOptions {
    int width = 760;
    int height = 460;
    // Roofs at this thread count; 0: the highest thread count the profile measured.
    int threads = 0;
    std::string title = "Roofline";  // the thread count of the roofs is appended
};

// A point per suite kernel with known work, on this host's roofs (GPU work is judged against
// the GPU's and left out), family and variant from its labels; a run's: one per op type of a
// torch run, else its longest regions with known work (at most twelve, each its own colour);
// each with the roofs its diagnosis compared it with.
std::vector<RooflinePoint> roofline_points(const RunRecord& record);

// Points with a non-positive or non-finite coordinate are left out (an unknown is not 0).
std::string render_roofline_svg(const MachineProfile& profile, const std::vector<RooflinePoint>& points,
                                const RooflineSvgOptions& options = {});

// The suite's roofline: the record's machine profile with one labelled point per CPU kernel
// region with known work (GPU ones have other roofs), roofs at `threads`. Empty profile when
// the record has none.
std::string suite_roofline_svg(const RunRecord& record, int threads);

// Text escaped for XML / HTML element content and attribute values.
std::string xml_escape(const std::string& text);

}  // namespace ceiling::output
