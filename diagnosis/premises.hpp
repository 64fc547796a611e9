#pragma once
// What a piece of advice assumes, and whether it was measured. A move or a cause is shown
// only where its premise holds on the evidence: "break the chain" needs loads whose
// addresses may come from earlier loads (never a library's dense-tensor kernel), "lines
// written by two cores at once" needs two cores storing, "-march=native" needs code the user
// compiles. The premises are a table (premises.cpp); a test per premise checks that it gates.

#include <optional>
#include <string_view>

namespace ceiling {

enum class Premise {
    own_code,                 // the program's own compiled code: its flags are the user's to change
    loads_may_depend,         // its loads may take their addresses from earlier loads
    stores_from_two_threads,  // two or more cores stored into its data at once
};

// The evidence about a piece of work that the premises are decided on; absent: not measured.
struct Evidence {
    // A library's op (a PyTorch op, module or model: ATen's kernels on dense tensors), not the
    // program's own code.
    bool library_op = false;
    std::optional<double> busy_cores;     // cores its process kept busy while it ran
    std::optional<double> written_bytes;  // bytes it stores per instance; absent: unknown
};

// Whether the evidence licenses the premise. Unknown evidence licenses nothing that needs it.
bool licensed(Premise p, const Evidence& e);
std::string_view premise_name(Premise p);

}  // namespace ceiling
