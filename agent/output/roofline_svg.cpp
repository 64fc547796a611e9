#include "agent/output/roofline_svg.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "agent/output/format.hpp"

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

// Colours per memory level and for compute roofs; points share one colour.
const std::map<std::string, std::string>& level_colours() {
    static const std::map<std::string, std::string> c = {
        {"L1", "#2b8a3e"}, {"L2", "#1971c2"}, {"L3", "#7048e8"}, {"DRAM", "#c92a2a"}, {"HBM", "#c92a2a"}};
    return c;
}

}  // namespace

std::string render_roofline_svg(const MachineProfile& profile, const std::vector<RooflinePoint>& points,
                                const RooflineSvgOptions& o) {
    int threads = o.threads;
    if (threads == 0) {
        for (const auto& r : profile.compute_roofs) threads = std::max(threads, r.threads);
        for (const auto& r : profile.bandwidth_roofs) threads = std::max(threads, r.threads);
    }
    // The best roof per precision/engine and per level at that thread count.
    std::map<std::string, const ComputeRoof*> compute;
    for (const auto& r : profile.compute_roofs) {
        if (r.threads != threads) continue;
        const std::string key = std::string(to_string(r.precision)) + " " + std::string(to_string(r.engine));
        if (!compute[key] || r.ops_per_s.median > compute[key]->ops_per_s.median) compute[key] = &r;
    }
    std::map<std::string, const BandwidthRoof*> bandwidth;
    for (const auto& r : profile.bandwidth_roofs) {
        if (r.threads != threads) continue;
        if (!bandwidth[r.level] || r.bytes_per_s.median > bandwidth[r.level]->bytes_per_s.median)
            bandwidth[r.level] = &r;
    }
    std::vector<RooflinePoint> pts;
    for (const auto& p : points)
        if (std::isfinite(p.intensity) && std::isfinite(p.ops_per_s) && p.intensity > 0 && p.ops_per_s > 0)
            pts.push_back(p);

    double peak = 0, bw_min = INFINITY, bw_max = 0;
    for (const auto& [k, r] : compute) peak = std::max(peak, r->ops_per_s.median);
    for (const auto& [k, r] : bandwidth) {
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
        y_hi = std::max(y_hi, p.ops_per_s * 2);
    }
    if (peak > 0) y_hi = std::max(y_hi, peak * 2);
    if (bw_min < INFINITY) y_lo = std::min(y_lo, bw_min * x_lo);
    if (!(y_hi > 0)) y_hi = 1e12;
    if (!(y_lo < y_hi)) y_lo = y_hi / 1e6;
    const double lx0 = std::floor(std::log10(x_lo)), lx1 = std::ceil(std::log10(x_hi));
    const double ly0 = std::floor(std::log10(y_lo)), ly1 = std::ceil(std::log10(y_hi));

    const double left = 80, right = 170, top = 40, bottom = 50;
    const double pw = o.width - left - right, ph = o.height - top - bottom;
    auto X = [&](double x) { return left + (std::log10(x) - lx0) / (lx1 - lx0) * pw; };
    auto Y = [&](double y) { return top + ph - (std::log10(y) - ly0) / (ly1 - ly0) * ph; };

    std::ostringstream s;
    s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << o.width << "\" height=\"" << o.height
      << "\" viewBox=\"0 0 " << o.width << " " << o.height << "\" font-family=\"sans-serif\" font-size=\"11\">\n";
    s << "<title>" << xml_escape(o.title) << "</title>\n";
    s << "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
    s << "<text x=\"" << left << "\" y=\"22\" font-size=\"14\" font-weight=\"bold\">" << xml_escape(o.title)
      << (threads ? " (" + std::to_string(threads) + (threads == 1 ? " thread)" : " threads)") : "") << "</text>\n";
    // Grid and decade labels.
    for (double e = lx0; e <= lx1; e += 1) {
        const double x = X(std::pow(10, e));
        s << "<line x1=\"" << num(x) << "\" y1=\"" << top << "\" x2=\"" << num(x) << "\" y2=\"" << top + ph
          << "\" stroke=\"#e9ecef\"/>\n";
        s << "<text x=\"" << num(x) << "\" y=\"" << top + ph + 16 << "\" text-anchor=\"middle\">"
          << xml_escape(si(std::pow(10, e), "", 3)) << "</text>\n";
    }
    for (double e = ly0; e <= ly1; e += 1) {
        const double y = Y(std::pow(10, e));
        s << "<line x1=\"" << left << "\" y1=\"" << num(y) << "\" x2=\"" << left + pw << "\" y2=\"" << num(y)
          << "\" stroke=\"#e9ecef\"/>\n";
        s << "<text x=\"" << left - 6 << "\" y=\"" << num(y + 4) << "\" text-anchor=\"end\">"
          << xml_escape(si(std::pow(10, e), "op/s", 3)) << "</text>\n";
    }
    s << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << num(pw) << "\" height=\"" << num(ph)
      << "\" fill=\"none\" stroke=\"#495057\"/>\n";
    s << "<text x=\"" << num(left + pw / 2) << "\" y=\"" << o.height - 12
      << "\" text-anchor=\"middle\">arithmetic intensity (operations per byte)</text>\n";
    s << "<text transform=\"translate(16," << num(top + ph / 2)
      << ") rotate(-90)\" text-anchor=\"middle\">achieved rate (operations per second)</text>\n";

    // Bandwidth roofs: rate = intensity x bandwidth, up to the highest compute roof.
    int label_row = 0;
    for (const auto& [level, r] : bandwidth) {
        const double bw = r->bytes_per_s.median;
        const double x_end = peak > 0 ? std::min(x_hi, peak / bw) : x_hi;
        const double x_start = std::max(std::pow(10, lx0), std::pow(10, ly0) / bw);
        if (x_start >= x_end) continue;
        const auto it = level_colours().find(level);
        const std::string colour = it != level_colours().end() ? it->second : "#868e96";
        s << "<line x1=\"" << num(X(x_start)) << "\" y1=\"" << num(Y(x_start * bw)) << "\" x2=\"" << num(X(x_end))
          << "\" y2=\"" << num(Y(x_end * bw)) << "\" stroke=\"" << colour << "\" stroke-width=\"2\"/>\n";
        s << "<text x=\"" << num(left + pw + 8) << "\" y=\"" << top + 12 + 14 * label_row++ << "\" fill=\""
          << colour << "\">" << xml_escape(level + " " + si(bw, "B/s")) << "</text>\n";
    }
    // Compute roofs: flat from the fastest bandwidth roof's ridge point on.
    for (const auto& [key, r] : compute) {
        const double rate = r->ops_per_s.median;
        const double x_start = bw_max > 0 ? std::max(std::pow(10, lx0), rate / bw_max) : std::pow(10, lx0);
        s << "<line x1=\"" << num(X(x_start)) << "\" y1=\"" << num(Y(rate)) << "\" x2=\"" << num(left + pw)
          << "\" y2=\"" << num(Y(rate)) << "\" stroke=\"#343a40\" stroke-width=\"2\" stroke-dasharray=\""
          << (r->engine == Engine::matrix ? "6 3" : r->engine == Engine::scalar ? "2 3" : "none") << "\"/>\n";
        s << "<text x=\"" << num(left + pw + 8) << "\" y=\"" << top + 12 + 14 * label_row++ << "\">"
          << xml_escape(key + " " + si(rate, "op/s")) << "</text>\n";
    }
    if (compute.empty() && bandwidth.empty())
        s << "<text x=\"" << num(left + pw / 2) << "\" y=\"" << num(top + ph / 2)
          << "\" text-anchor=\"middle\" fill=\"#868e96\">no roofs measured at this thread count</text>\n";
    for (const auto& p : pts) {
        s << "<circle cx=\"" << num(X(p.intensity)) << "\" cy=\"" << num(Y(p.ops_per_s))
          << "\" r=\"5\" fill=\"#f08c00\" stroke=\"#000000\"><title>" << xml_escape(p.label) << ": "
          << xml_escape(si(p.ops_per_s, "op/s")) << " at " << fixed(p.intensity, 3) << " op/B</title></circle>\n";
        s << "<text x=\"" << num(X(p.intensity) + 8) << "\" y=\"" << num(Y(p.ops_per_s) - 6) << "\">"
          << xml_escape(p.label) << "</text>\n";
    }
    s << "</svg>\n";
    return s.str();
}

}  // namespace ceiling::output
