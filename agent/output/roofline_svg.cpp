#include "agent/output/roofline_svg.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "diagnosis/format.hpp"

namespace ceiling::output {

std::string xml_escape(const std::string& text) {
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            case '\'': out += "&#39;"; break;
            default: out += c;
        }
    }
    return out;
}

namespace {

std::string num(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", v);
    return buf;
}

// Colours per memory level; compute roofs are dark grey with a dash per engine.
const std::map<std::string, std::string>& level_colours() {
    static const std::map<std::string, std::string> c = {
        {"L1", "#2b8a3e"}, {"L2", "#1971c2"}, {"L3", "#7048e8"}, {"DRAM", "#c92a2a"}, {"HBM", "#c92a2a"}};
    return c;
}

// Point colours by family, in order of first appearance (colour-blind-safe Okabe-Ito).
// Okabe-Ito's eight, then four of Tol's: twelve told apart, as many as a run's chart holds.
constexpr const char* family_palette[] = {"#e69f00", "#56b4e9", "#009e73", "#f0e442",
                                          "#0072b2", "#d55e00", "#cc79a7", "#000000",
                                          "#882255", "#44aa99", "#999933", "#aa4499"};

// A marker of the variant's shape centred at (x, y).
std::string marker(const std::string& variant, double x, double y, const std::string& fill,
                   const std::string& extra = "") {
    std::ostringstream m;
    const std::string style = "fill=\"" + fill + "\" stroke=\"#000000\"" + extra;
    if (variant == "naive") {
        m << "<rect x=\"" << num(x - 4.5) << "\" y=\"" << num(y - 4.5) << "\" width=\"9\" height=\"9\" " << style;
    } else if (variant == "library") {
        m << "<polygon points=\"" << num(x) << "," << num(y - 5.5) << " " << num(x + 5.5) << "," << num(y + 4.5)
          << " " << num(x - 5.5) << "," << num(y + 4.5) << "\" " << style;
    } else if (variant == "optimized" || variant.empty()) {
        m << "<circle cx=\"" << num(x) << "\" cy=\"" << num(y) << "\" r=\"5\" " << style;
    } else {
        m << "<polygon points=\"" << num(x) << "," << num(y - 6) << " " << num(x + 6) << "," << num(y) << " "
          << num(x) << "," << num(y + 6) << " " << num(x - 6) << "," << num(y) << "\" " << style;
    }
    return m.str();
}

// Labels stacked where they would overprint: each at least `gap` below the one above it.
void spread(std::vector<double>& ys, double gap) {
    for (std::size_t i = 1; i < ys.size(); ++i) ys[i] = std::max(ys[i], ys[i - 1] + gap);
}

// A text's width in the chart's sans-serif, from its length: generous (6.8 px a character at
// 11 px, digits and capitals included) so that a box reserved for it holds it. The HTML test
// measures the rendered boxes (report_test: no label clipped or overprinted).
double text_width(const std::string& text, double font_px = 11) {
    return static_cast<double>(text.size()) * font_px * 0.62;
}

// The boxes labels and markers already take, so the next label goes where it overprints none.
struct Box {
    double x0, y0, x1, y1;
};
struct Taken {
    std::vector<Box> boxes;
    bool free(const Box& b) const {
        for (const auto& t : boxes)
            if (b.x0 < t.x1 && t.x0 < b.x1 && b.y0 < t.y1 && t.y0 < b.y1) return false;
        return true;
    }
};

}  // namespace

namespace {

// A run's chart holds at most this many points, the longest first: one per op type of a torch
// run, else its regions by time (62 same-coloured points of one model read as noise).
constexpr std::size_t run_points_max = 12;

// The roofs the point's diagnosis compared it with: the attainable rate at its intensity (the
// tightest) and what they were.
void judged_by(RooflinePoint& p, const Diagnosis& d) {
    for (const auto& c : d.roofs) {
        if (!c.roof_per_s) continue;
        const double attainable = c.kind == RoofKind::compute ? *c.roof_per_s : *c.roof_per_s * p.intensity;
        if (c.kind == RoofKind::compute) p.compute_roofs.push_back(c.roof);
        p.judged_per_s = p.judged_per_s ? std::min(*p.judged_per_s, attainable) : attainable;
        p.judged_against += std::string(p.judged_against.empty() ? "" : ", ") +
                            (c.kind == RoofKind::compute ? c.roof : c.level) + " at " +
                            std::to_string(c.threads) + (c.threads == 1 ? " thread" : " threads") +
                            (c.fraction ? ": " + percent(*c.fraction) : std::string());
    }
}

// A torch run: one point per judged op type (inside models) with work, its own colour.
std::vector<RooflinePoint> op_type_points(const RunRecord& r) {
    std::vector<RooflinePoint> pts;
    for (const auto& t : r.op_summary.types) {
        if (!t.judged || !t.ops || !t.bytes || !(*t.ops > 0) || !(*t.bytes > 0)) continue;
        std::optional<double> rate;
        for (const auto& c : t.judged->roofs)
            if (c.kind == RoofKind::compute && c.achieved_per_s) rate = c.achieved_per_s;
        if (!rate || !(*rate > 0)) continue;
        RooflinePoint p;
        p.label = t.name;
        p.family = t.name;
        p.intensity = *t.ops / *t.bytes;
        p.ops_per_s = *rate;
        judged_by(p, *t.judged);
        pts.push_back(std::move(p));
        if (pts.size() == run_points_max) break;  // the types are longest first
    }
    return pts;
}

}  // namespace

std::vector<RooflinePoint> roofline_points(const RunRecord& r) {
    if (r.kind == RecordKind::run && !r.op_summary.types.empty()) return op_type_points(r);
    // A run's torch ops and modules are the op types' (above); its torch models stay.
    std::vector<const RecordedRegion*> regions;
    for (const auto& reg : r.regions) {
        const auto role = reg.labels.find(torch_role_label);
        if (r.kind != RecordKind::run || role == reg.labels.end() || role->second == "model")
            regions.push_back(&reg);
    }
    // A run's longest regions first, so the cap keeps what matters.
    if (r.kind == RecordKind::run)
        std::stable_sort(regions.begin(), regions.end(), [](const auto* a, const auto* b) {
            return a->open_s_per_execution() > b->open_s_per_execution();
        });
    std::vector<RooflinePoint> pts;
    for (const RecordedRegion* g : regions) {
        const RecordedRegion& reg = *g;
        const auto& m = reg.measurement;
        if (!m.work || m.work->device == Device::gpu) continue;
        if (m.duration_s.count == 0 || !(m.duration_s.median > 0) || !(m.work->ops > 0)) continue;
        const double intensity = m.work->intensity();
        if (!std::isfinite(intensity)) continue;
        RooflinePoint p;
        p.label = reg.path;
        p.intensity = intensity;
        p.ops_per_s = m.work->ops / m.duration_s.median;
        const auto kernel = reg.labels.find("kernel");
        // A suite colours by kernel; a run's regions each have their own colour.
        p.family = kernel != reg.labels.end()      ? kernel->second
                   : r.kind == RecordKind::run ? reg.path
                                               : reg.path.substr(0, reg.path.find('/'));
        if (const auto v = reg.labels.find("variant"); v != reg.labels.end()) p.variant = v->second;
        for (const auto& v : r.region_diagnoses)
            if (v.path == reg.path) judged_by(p, v.diagnosis);
        pts.push_back(std::move(p));
        if (r.kind == RecordKind::run && pts.size() == run_points_max) break;
    }
    return pts;
}

namespace {

// The roofs the chart draws: compute roofs by name, bandwidth roofs by level.
struct ChartRoofs {
    std::map<std::string, const ComputeRoof*> compute;
    std::map<std::string, const BandwidthRoof*> bandwidth;
};

// The thread count asked for, else the highest the profile measured.
int chart_threads(const MachineProfile& profile, const RooflineSvgOptions& o) {
    int threads = o.threads;
    if (threads == 0) {
        for (const auto& r : profile.compute_roofs) threads = std::max(threads, r.threads);
        for (const auto& r : profile.bandwidth_roofs) threads = std::max(threads, r.threads);
    }
    return threads;
}

// One line per compute roof (by the name the verdicts use) and per level, at that thread
// count; the best kernel of each.
ChartRoofs roofs_at(const MachineProfile& profile, int threads) {
    ChartRoofs roofs;
    auto& compute = roofs.compute;
    for (const auto& r : profile.compute_roofs) {
        if (r.threads != threads) continue;
        if (!compute[r.name] || r.ops_per_s.median > compute[r.name]->ops_per_s.median)
            compute[r.name] = &r;
    }
    auto& bandwidth = roofs.bandwidth;
    for (const auto& r : profile.bandwidth_roofs) {
        if (r.threads != threads) continue;
        if (!bandwidth[r.level] || r.bytes_per_s.median > bandwidth[r.level]->bytes_per_s.median)
            bandwidth[r.level] = &r;
    }
    return roofs;
}

std::vector<RooflinePoint> plottable(const std::vector<RooflinePoint>& points) {
    std::vector<RooflinePoint> pts;
    for (const auto& p : points)
        if (std::isfinite(p.intensity) && std::isfinite(p.ops_per_s) && p.intensity > 0 &&
            p.ops_per_s > 0)
            pts.push_back(p);
    return pts;
}

// A profile has a dozen compute roofs: the chart keeps those the points were judged
// against, and the highest for scale.
void keep_judged_compute_roofs(std::map<std::string, const ComputeRoof*>& compute,
                               const std::vector<RooflinePoint>& pts) {
    std::set<std::string> judged;
    for (const auto& p : pts) judged.insert(p.compute_roofs.begin(), p.compute_roofs.end());
    if (!judged.empty()) {
        const ComputeRoof* highest = nullptr;
        for (const auto& [name, r] : compute)
            if (!highest || r->ops_per_s.median > highest->ops_per_s.median) highest = r;
        std::erase_if(compute, [&](const auto& kv) {
            return kv.second != highest && !judged.count(kv.first);
        });
    }
}

std::map<std::string, std::string> family_colours(const std::vector<RooflinePoint>& pts) {
    std::map<std::string, std::string> family_colour;
    for (const auto& p : pts)
        if (!family_colour.count(p.family))
            family_colour[p.family] =
                family_palette[family_colour.size() % std::size(family_palette)];
    return family_colour;
}

// The point list's line height.
constexpr double row = 14;

// Where things go: the roofs' extremes, the log-log axes (decades lx0..lx1, ly0..ly1) and the
// plot's place in the picture.
struct Frame {
    double peak = 0, bw_max = 0;  // the highest compute roof, the fastest bandwidth roof
    double x_hi = 0;              // the intensity axis' right end, where bandwidth roofs stop
    double lx0 = 0, lx1 = 0, ly0 = 0, ly1 = 0;
    double left = 96, right = 300, top = 40, bottom = 50;
    double height = 0, pw = 0, ph = 0, width = 0;

    double X(double x) const { return left + (std::log10(x) - lx0) / (lx1 - lx0) * pw; }
    double Y(double y) const { return top + ph - (std::log10(y) - ly0) / (ly1 - ly0) * ph; }
};

Frame chart_frame(const ChartRoofs& roofs, const std::vector<RooflinePoint>& pts,
                  const RooflineSvgOptions& o) {
    double peak = 0, bw_min = INFINITY, bw_max = 0;
    for (const auto& [k, r] : roofs.compute) peak = std::max(peak, r->ops_per_s.median);
    for (const auto& [k, r] : roofs.bandwidth) {
        bw_min = std::min(bw_min, r->bytes_per_s.median);
        bw_max = std::max(bw_max, r->bytes_per_s.median);
    }
    // Axes: a decade around the ridge points and every point.
    double x_lo = 1.0 / 64, x_hi = 256, y_lo = INFINITY, y_hi = 0;
    if (peak > 0 && bw_max > 0) {
        x_lo = std::min(x_lo, peak / bw_max / 64);
        x_hi = std::max(x_hi, peak / bw_min * 8);
    }
    for (const auto& p : pts) {
        x_lo = std::min(x_lo, p.intensity / 2);
        x_hi = std::max(x_hi, p.intensity * 2);
        y_lo = std::min(y_lo, p.ops_per_s / 2);
        y_hi = std::max(y_hi, std::max(p.ops_per_s, p.judged_per_s.value_or(0)) * 2);
    }
    if (peak > 0) y_hi = std::max(y_hi, peak * 2);
    if (bw_min < INFINITY) y_lo = std::min(y_lo, bw_min * x_lo);
    if (!(y_hi > 0)) y_hi = 1e12;
    if (!(y_lo < y_hi)) y_lo = y_hi / 1e6;
    Frame f;
    f.peak = peak, f.bw_max = bw_max, f.x_hi = x_hi;
    f.lx0 = std::floor(std::log10(x_lo)), f.lx1 = std::ceil(std::log10(x_hi));
    f.ly0 = std::floor(std::log10(y_lo)), f.ly1 = std::ceil(std::log10(y_hi));

    // The point list beside the plot sets the height when it is longer than the plot.
    f.height =
        std::max<double>(o.height, f.top + row * static_cast<double>(pts.size() + 2) + f.bottom);
    // The list beside the plot as wide as its longest name: a legend never cut off.
    for (std::size_t i = 0; i < pts.size(); ++i)
        f.right = std::max(f.right, 24 + 14 + text_width(std::to_string(i + 1) + ". " + pts[i].label) + 12);
    f.pw = o.width - f.left - 20, f.ph = f.height - f.top - f.bottom;
    f.width = o.width + f.right;
    return f;
}

// The picture's head and title, the grid with its decade labels, and the axes' names.
void draw_frame(std::ostream& s, const Frame& f, const std::string& title) {
    const double left = f.left, top = f.top, pw = f.pw, ph = f.ph, width = f.width,
                 height = f.height;
    s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << num(width) << "\" height=\""
      << num(height) << "\" viewBox=\"0 0 " << num(width) << " " << num(height)
      << "\" font-family=\"sans-serif\" font-size=\"11\">\n";
    s << "<title>" << xml_escape(title) << "</title>\n";
    s << "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
    s << "<text x=\"" << left << "\" y=\"22\" font-size=\"14\" font-weight=\"bold\">"
      << xml_escape(title) << "</text>\n";
    // Grid and decade labels, with units.
    for (double e = f.lx0; e <= f.lx1; e += 1) {
        const double x = f.X(std::pow(10, e));
        s << "<line x1=\"" << num(x) << "\" y1=\"" << top << "\" x2=\"" << num(x) << "\" y2=\""
          << num(top + ph) << "\" stroke=\"#e9ecef\"/>\n";
        s << "<text x=\"" << num(x) << "\" y=\"" << num(top + ph + 16)
          << "\" text-anchor=\"middle\">" << xml_escape(si(std::pow(10, e), "", 3)) << "</text>\n";
    }
    for (double e = f.ly0; e <= f.ly1; e += 1) {
        const double y = f.Y(std::pow(10, e));
        s << "<line x1=\"" << left << "\" y1=\"" << num(y) << "\" x2=\"" << num(left + pw)
          << "\" y2=\"" << num(y) << "\" stroke=\"#e9ecef\"/>\n";
        s << "<text x=\"" << left - 6 << "\" y=\"" << num(y + 4) << "\" text-anchor=\"end\">"
          << xml_escape(si(std::pow(10, e), "op/s", 3)) << "</text>\n";
    }
    s << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << num(pw) << "\" height=\""
      << num(ph) << "\" fill=\"none\" stroke=\"#495057\"/>\n";
    s << "<text x=\"" << num(left + pw / 2) << "\" y=\"" << num(height - 12)
      << "\" text-anchor=\"middle\">arithmetic intensity (op/B)</text>\n";
    s << "<text transform=\"translate(14," << num(top + ph / 2)
      << ") rotate(-90)\" text-anchor=\"middle\">achieved rate (op/s)</text>\n";
}

// Bandwidth roofs: rate = intensity x bandwidth, up to the highest compute roof; the
// label lies on the line, turned to its slope.
void draw_bandwidth_roofs(std::ostream& s, const Frame& f,
                          const std::map<std::string, const BandwidthRoof*>& bandwidth, Taken& taken) {
    const double slope_deg =
        -std::atan2(f.ph / (f.ly1 - f.ly0), f.pw / (f.lx1 - f.lx0)) * 180 / M_PI;
    for (const auto& [level, r] : bandwidth) {
        const double bw = r->bytes_per_s.median;
        const double x_end = f.peak > 0 ? std::min(f.x_hi, f.peak / bw) : f.x_hi;
        const double x_start = std::max(std::pow(10, f.lx0), std::pow(10, f.ly0) / bw);
        if (x_start >= x_end) continue;
        const auto it = level_colours().find(level);
        const std::string colour = it != level_colours().end() ? it->second : "#868e96";
        s << "<line class=\"roof bandwidth\" x1=\"" << num(f.X(x_start)) << "\" y1=\""
          << num(f.Y(x_start * bw)) << "\" x2=\"" << num(f.X(x_end)) << "\" y2=\""
          << num(f.Y(x_end * bw)) << "\" stroke=\"" << colour << "\" stroke-width=\"2\"/>\n";
        // Along the line where it overprints no other label or point: roofs of close
        // bandwidths run side by side, so their labels take turns along them.
        const std::string label = level + " " + si(bw, "B/s");
        const double w = text_width(label), rad = slope_deg * M_PI / 180;
        auto box_at = [&](double t) {
            const double lx = std::pow(10, std::log10(x_start) + t * (std::log10(x_end) - std::log10(x_start)));
            const double x = f.X(lx), y = f.Y(lx * bw) - 4;
            return std::pair{lx, Box{x, y + w * std::sin(rad) - 11, x + w * std::cos(rad), y + 2}};
        };
        auto [lx, box] = box_at(0.15);
        for (const double t : {0.15, 0.05, 0.3, 0.45, 0.6, 0.75, 0.9})
            if (const auto tried = box_at(t); taken.free(tried.second)) {
                std::tie(lx, box) = tried;
                break;
            }
        taken.boxes.push_back(box);
        s << "<text class=\"roof-label\" fill=\"" << colour << "\" transform=\"translate("
          << num(f.X(lx)) << "," << num(f.Y(lx * bw) - 4) << ") rotate(" << num(slope_deg) << ")\">"
          << xml_escape(label) << "</text>\n";
    }
}

// Compute roofs: flat from the fastest bandwidth roof's ridge point on, labelled at their
// right end with name and value, stacked where they would overprint.
void draw_compute_roofs(std::ostream& s, const Frame& f,
                        const std::map<std::string, const ComputeRoof*>& compute, Taken& taken) {
    std::vector<std::pair<double, const ComputeRoof*>> flat;
    for (const auto& [name, r] : compute) flat.push_back({f.Y(r->ops_per_s.median), r});
    std::sort(flat.begin(), flat.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<double> label_y;
    for (const auto& [y, r] : flat) label_y.push_back(y - 3);
    spread(label_y, 11);
    for (std::size_t i = 0; i < flat.size(); ++i) {
        const ComputeRoof* r = flat[i].second;
        const double rate = r->ops_per_s.median;
        const double x_start =
            f.bw_max > 0 ? std::max(std::pow(10, f.lx0), rate / f.bw_max) : std::pow(10, f.lx0);
        s << "<line class=\"roof compute\" x1=\"" << num(f.X(x_start)) << "\" y1=\""
          << num(f.Y(rate)) << "\" x2=\"" << num(f.left + f.pw) << "\" y2=\"" << num(f.Y(rate))
          << "\" stroke=\"#343a40\" stroke-width=\"1.5\" stroke-dasharray=\""
          << (r->engine == Engine::matrix   ? "6 3"
              : r->engine == Engine::scalar ? "2 3"
                                            : "none")
          << "\"/>\n";
        const std::string label = r->name + " " + si(rate, "op/s");
        const double right = f.left + f.pw - 4;
        taken.boxes.push_back({right - text_width(label), label_y[i] - 11, right, label_y[i] + 2});
        s << "<text class=\"roof-label\" x=\"" << num(right) << "\" y=\""
          << num(label_y[i]) << "\" text-anchor=\"end\" fill=\"#343a40\">"
          << xml_escape(label) << "</text>\n";
    }
}

// Where each point's number goes: beside its marker on the first side (up right, up left,
// down right, down left) that overprints no marker or number placed before it. The markers
// and numbers are then taken for the roofs' labels.
std::vector<std::pair<double, double>> place_numbers(const Frame& f, const std::vector<RooflinePoint>& pts,
                                                     Taken& taken) {
    for (const auto& p : pts) {
        const double x = f.X(p.intensity), y = f.Y(p.ops_per_s);
        taken.boxes.push_back({x - 5, y - 5, x + 5, y + 5});
    }
    std::vector<std::pair<double, double>> at;
    for (std::size_t i = 0; i < pts.size(); ++i) {
        const double x = f.X(pts[i].intensity), y = f.Y(pts[i].ops_per_s);
        const double w = text_width(std::to_string(i + 1), 9);
        std::pair<double, double> chosen{x + 7, y - 5};
        for (const auto& [dx, dy] : {std::pair{7.0, -5.0}, {-7.0 - w, -5.0}, {7.0, 13.0}, {-7.0 - w, 13.0}})
            if (taken.free({x + dx, y + dy - 9, x + dx + w, y + dy + 1})) {
                chosen = {x + dx, y + dy};
                break;
            }
        taken.boxes.push_back({chosen.first, chosen.second - 9, chosen.first + w, chosen.second + 1});
        at.push_back(chosen);
    }
    return at;
}

// Points, numbered where place_numbers put the numbers; the list beside the plot names them.
void draw_points(std::ostream& s, const Frame& f, const std::vector<RooflinePoint>& pts,
                 std::map<std::string, std::string>& family_colour,
                 const std::vector<std::pair<double, double>>& numbers) {
    const double list_x = f.left + f.pw + 24;
    s << "<text x=\"" << num(list_x) << "\" y=\"" << num(f.top - 10) << "\" font-weight=\"bold\">"
      << (pts.empty() ? "no points" : "points (naive \u25a0, optimized \u25cf, library \u25b2)")
      << "</text>\n";
    for (std::size_t i = 0; i < pts.size(); ++i) {
        const auto& p = pts[i];
        const std::string n = std::to_string(i + 1);
        const std::string colour = family_colour[p.family];
        const double x = f.X(p.intensity), y = f.Y(p.ops_per_s);
        std::string tip = n + ". " + p.label + ": " + si(p.ops_per_s, "op/s") + " at " +
                          fixed(p.intensity, 3) + " op/B";
        if (!p.judged_against.empty()) tip += "; judged against " + p.judged_against;
        if (p.judged_per_s && *p.judged_per_s > p.ops_per_s)
            s << "<line class=\"judged\" x1=\"" << num(x) << "\" y1=\"" << num(y) << "\" x2=\""
              << num(x) << "\" y2=\"" << num(f.Y(*p.judged_per_s)) << "\" stroke=\"" << colour
              << "\" stroke-dasharray=\"2 2\"/>\n"
              << "<line class=\"judged\" x1=\"" << num(x - 5) << "\" y1=\""
              << num(f.Y(*p.judged_per_s)) << "\" x2=\"" << num(x + 5) << "\" y2=\""
              << num(f.Y(*p.judged_per_s)) << "\" stroke=\"" << colour << "\"/>\n";
        s << "<g class=\"point\" data-n=\"" << n << "\">" << marker(p.variant, x, y, colour)
          << "/><title>" << xml_escape(tip) << "</title></g>\n";
        s << "<text class=\"point-number\" x=\"" << num(numbers[i].first) << "\" y=\""
          << num(numbers[i].second) << "\" font-size=\"9\">" << n << "</text>\n";
        const double ly = f.top + 4 + row * static_cast<double>(i + 1);
        s << marker(p.variant, list_x + 5, ly - 4, colour) << "/>\n";
        s << "<text class=\"point-label\" x=\"" << num(list_x + 14) << "\" y=\"" << num(ly) << "\">"
          << xml_escape(n + ". " + p.label) << "</text>\n";
    }
}

}  // namespace

std::string render_roofline_svg(const MachineProfile& profile,
                                const std::vector<RooflinePoint>& points,
                                const RooflineSvgOptions& o) {
    const int threads = chart_threads(profile, o);
    ChartRoofs roofs = roofs_at(profile, threads);
    const std::vector<RooflinePoint> pts = plottable(points);
    keep_judged_compute_roofs(roofs.compute, pts);
    std::map<std::string, std::string> family_colour = family_colours(pts);
    const Frame f = chart_frame(roofs, pts, o);

    std::ostringstream s;
    const std::string title = o.title + (threads ? " (roofs at " + std::to_string(threads) +
                                                       (threads == 1 ? " thread)" : " threads)")
                                                 : "");
    draw_frame(s, f, title);
    // Labels placed so none overprints another: points' numbers first, then the compute
    // roofs' (at their right ends), then the bandwidth roofs' along their lines.
    Taken taken;
    const auto numbers = place_numbers(f, pts, taken);
    draw_compute_roofs(s, f, roofs.compute, taken);
    draw_bandwidth_roofs(s, f, roofs.bandwidth, taken);
    if (roofs.compute.empty() && roofs.bandwidth.empty())
        s << "<text x=\"" << num(f.left + f.pw / 2) << "\" y=\"" << num(f.top + f.ph / 2)
          << "\" text-anchor=\"middle\" fill=\"#868e96\">no roofs measured at this thread "
             "count</text>\n";
    draw_points(s, f, pts, family_colour, numbers);
    s << "</svg>\n";
    return s.str();
}

std::string suite_roofline_svg(const RunRecord& record, int threads) {
    const MachineProfile profile = record.machine_profile.value_or(MachineProfile{});
    RooflineSvgOptions o;
    o.threads = threads;
    o.title = "ceiling suite on " + profile.host.hostname;  // the renderer adds the roofs' threads
    return render_roofline_svg(profile, roofline_points(record), o);
}

}  // namespace ceiling::output
