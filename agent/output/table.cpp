#include "agent/output/table.hpp"

#include <algorithm>
#include <stdexcept>

#include "agent/output/roofline_svg.hpp"

namespace ceiling::output {

namespace {
// Display width of UTF-8 text: count code points, not bytes.
std::size_t width(const std::string& s) {
    return static_cast<std::size_t>(
        std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}
}  // namespace

TextTable& TextTable::column(std::string heading, Align align) {
    columns_.push_back({std::move(heading), align});
    return *this;
}

TextTable& TextTable::row(std::vector<std::string> cells) {
    if (cells.size() != columns_.size()) throw std::logic_error("table row width differs from columns");
    rows_.push_back({false, std::move(cells)});
    return *this;
}

TextTable& TextTable::heading(std::string text) {
    rows_.push_back({true, {std::move(text)}});
    return *this;
}

void TextTable::render(std::ostream& out) const {
    std::vector<std::size_t> w(columns_.size());
    for (std::size_t c = 0; c < columns_.size(); ++c) w[c] = width(columns_[c].heading);
    for (const auto& r : rows_)
        if (!r.is_heading)
            for (std::size_t c = 0; c < r.cells.size(); ++c) w[c] = std::max(w[c], width(r.cells[c]));
    auto cell = [&](const std::string& s, std::size_t c) {
        const std::string pad(w[c] - width(s), ' ');
        return columns_[c].align == Align::right ? pad + s : s + pad;
    };
    auto line = [&](const std::vector<std::string>& cells) {
        std::string l;
        for (std::size_t c = 0; c < cells.size(); ++c) l += (c ? "  " : "") + cell(cells[c], c);
        while (!l.empty() && l.back() == ' ') l.pop_back();
        out << l << '\n';
    };
    std::vector<std::string> head;
    for (const auto& c : columns_) head.push_back(c.heading);
    line(head);
    for (const auto& r : rows_) {
        if (r.is_heading)
            out << r.cells[0] << '\n';
        else
            line(r.cells);
    }
}

void TextTable::render_html(std::ostream& out, const std::string& css_class) const {
    out << "<table class=\"" << xml_escape(css_class) << "\"><tr>";
    for (const auto& c : columns_) out << "<th>" << xml_escape(c.heading) << "</th>";
    out << "</tr>\n";
    for (const auto& r : rows_) {
        if (r.is_heading) {
            out << "<tr class=\"group\"><th colspan=\"" << columns_.size() << "\">" << xml_escape(r.cells[0])
                << "</th></tr>\n";
            continue;
        }
        out << "<tr>";
        for (std::size_t c = 0; c < r.cells.size(); ++c) {
            std::string text = r.cells[c];
            text.erase(0, text.find_first_not_of(' '));
            out << (columns_[c].align == Align::right ? "<td class=\"n\">" : "<td>") << xml_escape(text) << "</td>";
        }
        out << "</tr>\n";
    }
    out << "</table>\n";
}

}  // namespace ceiling::output
