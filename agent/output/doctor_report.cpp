#include "agent/output/doctor_report.hpp"

#include "agent/output/table.hpp"

namespace ceiling::output {

void render_doctor_report(const DoctorReport& r, std::ostream& out) {
    out << "ceiling doctor: what this machine lets ceiling measure\n\n";
    std::string where = r.cpu;
    if (!r.kernel.empty()) where += ", Linux " + r.kernel;
    if (r.virtual_machine)
        where += ", virtual machine" + (r.hypervisor.empty() ? "" : " (" + r.hypervisor + ")");
    out << "host: " << r.host << " (" << where << ")\n\n";

    TextTable t;
    t.column("").column("What").column("Details (and how to enable)");
    for (const auto& i : r.items) {
        t.row({i.available ? "yes" : "no", i.title, i.detail});
        if (!i.available && !i.fix.empty()) t.row({"", "", "fix: " + i.fix});
    }
    t.render(out);
    int available = 0;
    for (const auto& i : r.items) available += i.available ? 1 : 0;
    out << "\n" << available << " of " << r.items.size() << " available.\n";
}

}  // namespace ceiling::output
