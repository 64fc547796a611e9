#pragma once
// What a piece of advice assumes, and whether it was measured. A move or a cause is shown
// only where its premise holds on the evidence: "break the chain" needs loads whose
// addresses may come from earlier loads (never a library's dense-tensor kernel), "lines
// written by two cores at once" needs two cores storing, "-march=native" needs code the user
// compiles. The premises are a table (premises.cpp); a test per premise checks that it gates.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ceiling {

enum class Premise {
    // The decision row's own condition: the bound the move answers was measured. Every row's
    // first part and its change-the-problem lever assume no more.
    measured_bound,
    own_code,                 // the program's own compiled code: its flags are the user's to change
    loads_may_depend,         // its loads may take their addresses from earlier loads
    stores_from_two_threads,  // two or more cores stored into its data at once
    threads_shared,           // two or more threads worked on it: they may wait on each other
    accelerator,              // the machine has an accelerator its work could fall back from
    interpreted,              // an interpreter runs the program (Python: PyTorch, a script)
    library_op,               // a library's op (its kernel is the library's to choose)
    short_ops,                // its ops are short: a framework's fixed cost per op shows
};

// The evidence about a piece of work that the premises are decided on; absent: not measured.
struct Evidence {
    // A library's op (a PyTorch op, module or model: ATen's kernels on dense tensors), not the
    // program's own code.
    bool library_op = false;
    std::optional<double> busy_cores;     // cores its process kept busy while it ran
    std::optional<double> written_bytes;  // bytes it stores per instance; absent: unknown
    std::optional<double> threads;        // threads that worked on it; absent: unknown
    std::optional<bool> accelerator;      // the machine profile lists a GPU; absent: no profile
    std::optional<bool> interpreted;      // its program runs in an interpreter; absent: unknown
    std::optional<double> op_s;           // the typical time of one of its ops; absent: unknown
};

// Whether a program's command line runs an interpreter (python3, perl, node, ...), by the
// file name of its first word; absent for an empty command.
std::optional<bool> runs_interpreter(const std::vector<std::string>& command);

// Whether the evidence licenses the premise. Unknown evidence licenses nothing that needs it.
bool licensed(Premise p, const Evidence& e);
std::string_view premise_name(Premise p);

}  // namespace ceiling
