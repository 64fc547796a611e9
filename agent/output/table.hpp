#pragma once
// A plain-text table for terminals: columns sized to their widest cell, numbers right-
// aligned, optional group headings between rows.

#include <ostream>
#include <string>
#include <vector>

namespace ceiling::output {

class TextTable {
public:
    enum class Align { left, right };
    TextTable& column(std::string heading, Align align = Align::left);
    TextTable& row(std::vector<std::string> cells);  // throws if the width differs
    TextTable& heading(std::string text);            // a line of its own between rows
    void render(std::ostream& out) const;
    // The same table as an HTML <table> (cells escaped; right-aligned columns class "n";
    // group headings as rows spanning every column).
    void render_html(std::ostream& out, const std::string& css_class) const;
    bool empty() const { return rows_.empty(); }

private:
    struct Column {
        std::string heading;
        Align align;
    };
    struct Row {
        bool is_heading = false;
        std::vector<std::string> cells;
    };
    std::vector<Column> columns_;
    std::vector<Row> rows_;
};

}  // namespace ceiling::output
