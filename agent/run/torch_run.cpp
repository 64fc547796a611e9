#include "agent/run/torch_run.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/record_names.hpp"
#include "diagnosis/statistics.hpp"

namespace ceiling::measure {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view torch_domain = "torch";

bool ends_with(std::string_view s, std::string_view suffix) {
    return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Name endings of ceiling_torch's ranges, most specific first: (suffix, role, instrumented).
struct Ending {
    std::string_view suffix;
    std::string_view role;
    bool instrumented;
};
constexpr std::array<Ending, 5> endings = {{{" (model, uninstrumented)", "model", false},
                                            {" (model)", "model", true},
                                            {" (model step)", "model", true},
                                            {" (transform)", "transform", true},
                                            {"()", "call", true}}};

// What a region says about the instrumentation's cost: the calls of one model.
struct ModelCalls {
    std::vector<double> instrumented_s, uninstrumented_s, op_s, op_count;
    std::vector<double> first_s, first_op_s, first_op_count;  // each process's first call
};

CounterValue timing(const std::string& name, double value, const std::string& unit) {
    CounterValue c;
    c.name = name;
    c.value = value;
    c.unit = unit;
    c.source = Source::timing;
    return c;
}

// Each model call of the timed executions, with the op ranges inside instrumented ones
// (same thread, within its span). The first instrumented call of a model in a process is
// kept apart: it pays for first-touch allocations and kernel selection.
std::map<std::string, ModelCalls> model_calls(const ProgramRun& run) {
    std::map<std::string, ModelCalls> calls;
    for (const auto& x : run.executions) {
        if (x.execution.warmup || x.execution.counting) continue;
        const auto& inst = x.capture.instances;  // by (pid, tid, start, longest first)
        std::set<std::pair<int, std::string>> seen;
        for (std::size_t i = 0; i < inst.size(); ++i) {
            const RegionInstance& r = inst[i];
            if (r.domain != torch_domain) continue;
            const TorchName n = parse_torch_name(r.name);
            if (n.role != "model" || !n.alternates) continue;
            ModelCalls& c = calls[n.label];
            const double d = static_cast<double>(r.end_ns - r.start_ns) * 1e-9;
            if (!n.instrumented) {
                c.uninstrumented_s.push_back(d);
                continue;
            }
            double op_s = 0, ops = 0;
            for (std::size_t j = i + 1; j < inst.size() && inst[j].pid == r.pid &&
                                        inst[j].tid == r.tid && inst[j].start_ns < r.end_ns;
                 ++j) {
                if (inst[j].domain != torch_domain || inst[j].end_ns > r.end_ns) continue;
                if (parse_torch_name(inst[j].name).role != "op") continue;
                op_s += static_cast<double>(inst[j].end_ns - inst[j].start_ns) * 1e-9;
                ops += 1;
            }
            const bool first = seen.insert({r.pid, n.label}).second;
            (first ? c.first_s : c.instrumented_s).push_back(d);
            (first ? c.first_op_s : c.op_s).push_back(op_s);
            (first ? c.first_op_count : c.op_count).push_back(ops);
        }
    }
    return calls;
}

// The record's cost counters of one model (torch_cost_counters in op_summary.hpp reads them).
void add_cost_counters(const ModelCalls& c, RecordedRegion& region) {
    auto& out = region.measurement.counters;
    out.push_back(timing("calls_instrumented", static_cast<double>(c.instrumented_s.size()), "count"));
    out.push_back(timing("calls_uninstrumented", static_cast<double>(c.uninstrumented_s.size()), "count"));
    if (!c.first_s.empty()) {
        out.push_back(timing("first_call_s", median(c.first_s), "s"));
        out.push_back(timing("first_call_op_time_s", median(c.first_op_s), "s"));
        out.push_back(timing("op_ranges_per_call", median(c.first_op_count), "count"));
    }
    if (!c.instrumented_s.empty()) {
        out.push_back(timing("instrumented_call_s", median(c.instrumented_s), "s"));
        out.push_back(timing("op_time_per_call_s", median(c.op_s), "s"));
    }
    if (!c.uninstrumented_s.empty())
        out.push_back(timing("uninstrumented_call_s", median(c.uninstrumented_s), "s"));
}

std::string count_phrase(std::size_t n, const std::string& what) {
    return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

// Share of a model's op time in ops without a work formula at or above which its work is
// unknown rather than the sum of the others'.
constexpr double unformulated_share_max = 0.25;

// A model's or a module's work: the declared work of the op ranges it encloses, per call of it.
void add_model_work(RunRecord& record, RecordedRegion& model, const RecordedRegion* source) {
    const RecordedRegion& from = source ? *source : model;
    const std::string prefix = from.path + "/";
    double ops = 0, bytes = 0, unformulated_s = 0, op_s = 0;
    std::size_t calls = 0, unformulated = 0;
    std::set<std::string> unformulated_ops;
    std::map<Precision, double> ops_by_precision;
    for (const auto& r : record.regions) {
        if (r.path.compare(0, prefix.size(), prefix) != 0) continue;
        const auto role = r.labels.find(torch_role_label);
        if (role == r.labels.end() || role->second != "op") continue;
        const auto n = static_cast<double>(r.instances);
        double total_s = 0;
        for (double s : r.total_s_per_execution) total_s += s;
        op_s += total_s;
        calls += r.instances;
        if (!r.measurement.work) {
            if (r.labels.at(torch_op_class_label) == "no formula") {
                unformulated += r.instances;
                unformulated_s += total_s;
                unformulated_ops.insert(r.labels.at(torch_op_label));
            }
            continue;
        }
        ops += r.measurement.work->ops * n;
        bytes += r.measurement.work->compulsory_bytes * n;
        ops_by_precision[r.measurement.work->precision] += r.measurement.work->ops * n;
    }
    if (calls == 0 || from.instances == 0) return;
    const double unformulated_share = unformulated_s / std::max(op_s, 1e-12);
    const std::string unformulated_time =
        std::to_string(static_cast<int>(100 * unformulated_share)) + "% of op time";
    // Ops without a formula doing much of its time leave its work unknown: the sum of the
    // rest is no lower bound worth judging (eval-mode TransformerEncoder runs as one fused
    // _transformer_encoder_layer_fwd per layer, and read "0 FLOPs, 0 % of every roof:
    // latency bound").
    if (unformulated_share >= unformulated_share_max) {
        std::string names;
        for (const auto& u : unformulated_ops) names += (names.empty() ? "" : ", ") + u;
        model.labels[work_unknown_label] = count_phrase(unformulated, "op call") +
                                           " without a work formula (" + names + ") took " +
                                           "its " + unformulated_time +
                                           ": its work is unknown, not the sum of the rest's";
        return;
    }
    Work w;
    const auto per_call = static_cast<double>(from.instances);
    w.ops = ops / per_call;
    w.compulsory_bytes = bytes / per_call;
    const auto top = std::max_element(ops_by_precision.begin(), ops_by_precision.end(),
                                      [](const auto& a, const auto& b) { return a.second < b.second; });
    if (top != ops_by_precision.end()) w.precision = top->first;
    model.measurement.work = w;
    // Its op calls per call: what weigh_tiny_ops divides its time by.
    model.measurement.counters.push_back(
        timing(std::string(ops_per_call_counter), static_cast<double>(calls) / per_call, "count"));
    std::string how = "declared: the sum of the work its " + count_phrase(calls, "op range") +
                      " declared, per call";
    if (source) how += ", taken from its instrumented calls (" + source->name + ")";
    if (unformulated > 0)
        how += "; " + count_phrase(unformulated, "op call") + " without a formula (" +
               unformulated_time + ") are not in it";
    model.labels["work"] = how;
}

}  // namespace

TorchName parse_torch_name(const std::string& name) {
    TorchName n;
    for (const auto& e : endings) {
        if (!ends_with(name, e.suffix)) continue;
        n.role = e.role;
        n.instrumented = e.instrumented;
        n.label = name.substr(0, name.size() - e.suffix.size());
        n.alternates = e.suffix != " (model step)";
        if (e.role == "call") n.label = name;
        return n;
    }
    // "aten.convolution [conv depthwise]" (an op) or "features.3 (InvertedResidual)".
    for (const auto& [open, close, role] : {std::array<std::string_view, 3>{" [", "]", "op"},
                                            std::array<std::string_view, 3>{" (", ")", "module"}}) {
        if (!ends_with(name, close)) continue;
        auto at = name.rfind(open);
        std::size_t skip = open.size();
        if (at == std::string::npos && role == "module" && name.front() == '(') {
            at = 0;  // "(Conv2d)": a module outside its model's tree, known by its class only
            skip = 1;
        }
        if (at == std::string::npos) continue;
        n.role = role;
        n.label = name.substr(0, at);
        n.kind = name.substr(at + skip, name.size() - at - skip - close.size());
        return n;
    }
    return n;
}

std::optional<fs::path> find_torch_instrumentation() {
    if (const char* e = std::getenv("CEILING_TORCH_DIR"); e && *e) return fs::path(e);
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (ec) return std::nullopt;
    for (const fs::path& candidate : {exe.parent_path() / "torch", exe.parent_path() / "../lib/ceiling/torch"})
        if (fs::exists(candidate / "sitecustomize.py", ec)) return fs::canonical(candidate, ec);
    return std::nullopt;
}

void prepare_torch_run(RunPlan& plan, RunRecord& record) {
    const auto dir = find_torch_instrumentation();
    if (!dir)
        throw std::runtime_error(
            "--torch: the PyTorch instrumentation (torch/sitecustomize.py) is not beside the ceiling "
            "binary: this build had no NVTX headers (run scripts/setup), or set CEILING_TORCH_DIR");
    const fs::path library = *dir / "libceiling_torch_nvtx.so";
    std::error_code ec;
    if (!fs::exists(library, ec))
        throw std::runtime_error("--torch: " + library.string() + " is missing");
    const char* old = std::getenv("PYTHONPATH");
    const std::string path = dir->string() + (old && *old ? ":" + std::string(old) : "");
    ::setenv("PYTHONPATH", path.c_str(), 1);
    ::setenv("CEILING_TORCH_NVTX_LIB", library.c_str(), 1);
    if (!plan.model) {
        plan.model.emplace(torch_model_regex, std::regex::ECMAScript);
        record.options.model_regions = torch_model_regex;
    }
}

void add_torch_to_record(const ProgramRun& run, RunRecord& record) {
    bool any = false;
    std::set<std::string> unformulated;
    for (auto& r : record.regions) {
        if (r.domain != torch_domain) continue;
        const TorchName n = parse_torch_name(r.name);
        if (n.role.empty()) continue;
        any = true;
        r.labels[torch_role_label] = n.role;
        if (n.role == "op") {
            r.labels[torch_op_label] = n.label;
            r.labels[torch_op_class_label] = n.kind;
            r.labels["time"] = "includes the instrumentation inside its range (its model's cost counters)";
            if (n.kind == "no formula") unformulated.insert(n.label);
        } else if (n.role == "module") {
            r.labels["module_class"] = n.kind;
        } else if (n.role == "model" && !n.instrumented) {
            r.labels["instrumented"] = "no: run without per-op ranges, to measure their cost";
        }
    }
    // Module regions: the sum of the work their ops declared, as a model's (a module is
    // never asked for declared work: ceiling declared every op inside it).
    for (auto& r : record.regions) {
        const auto role = r.labels.find(torch_role_label);
        if (role != r.labels.end() && role->second == "module") add_model_work(record, r, nullptr);
    }
    // Model regions: their ops' work, and the cost of instrumenting them.
    const auto calls = model_calls(run);
    std::map<std::string, const RecordedRegion*> instrumented;
    for (auto& r : record.regions) {
        const auto role = r.labels.find(torch_role_label);
        if (role == r.labels.end() || role->second != "model") continue;
        const TorchName n = parse_torch_name(r.name);
        if (!n.instrumented) continue;
        add_model_work(record, r, nullptr);
        if (!n.alternates) continue;
        instrumented.emplace(n.label, &r);
        const auto c = calls.find(n.label);
        if (c == calls.end() || r.labels.count("cost")) continue;
        r.labels["cost"] = "calls alternate instrumented / uninstrumented after the first";
        add_cost_counters(c->second, r);
        if (c->second.instrumented_s.empty() || c->second.uninstrumented_s.empty()) {
            const std::size_t total = c->second.first_s.size() + c->second.instrumented_s.size() +
                                      c->second.uninstrumented_s.size();
            record.notes.push_back(
                "torch: " + n.label + " was called " + count_phrase(total, "time") +
                ": the instrumentation's cost is measured from the third call on (every second "
                "call after the first runs without per-op ranges), so its per-op times include "
                "a cost not measured here");
        }
    }
    for (auto& r : record.regions) {
        const auto role = r.labels.find(torch_role_label);
        if (role == r.labels.end() || role->second != "model") continue;
        const TorchName n = parse_torch_name(r.name);
        const auto twin = instrumented.find(n.label);
        if (!n.instrumented && twin != instrumented.end()) add_model_work(record, r, twin->second);
    }
    // What the program's interpreter said about torch (modules.install's mark).
    std::set<std::string> versions;
    for (const auto& x : run.executions)
        for (const auto& m : x.capture.marks)
            if (m.domain == torch_domain && m.name.str().starts_with("torch ")) versions.insert(m.name);
    for (const auto& v : versions) record.notes.push_back("torch: " + v.substr(6));
    if (versions.empty() && !any)
        record.notes.push_back(
            "torch: no PyTorch regions recorded: the program never imported torch under the "
            "instrumentation (is it a Python program? a PYTHONPATH reset or python -S/-I skips "
            "sitecustomize)");
    if (!unformulated.empty()) {
        std::string list;
        for (const auto& u : unformulated) list += (list.empty() ? "" : ", ") + u;
        record.notes.push_back("torch: ops without a work formula (listed, their work unknown, never 0): " + list);
    }
}

std::vector<std::string> observers_to_build(const ProgramRun& run) {
    std::set<std::string> pythons;
    for (const auto& x : run.executions)
        for (const auto& m : x.capture.marks)
            if (m.domain == torch_domain && m.name.str().starts_with(observer_build_mark))
                pythons.insert(m.name.str().substr(std::string_view(observer_build_mark).size()));
    // Only what is an interpreter: ceiling runs it, and a mark is only the program's word.
    std::vector<std::string> found;
    for (const auto& p : pythons) {
        const fs::path path(p);
        std::error_code ec;
        if (path.is_absolute() && path.filename().string().starts_with("python") &&
            fs::is_regular_file(path, ec) && ::access(p.c_str(), X_OK) == 0)
            found.push_back(p);
    }
    return found;
}

ObserverBuild build_torch_observer(const std::string& python) {
    ObserverBuild b;
    const auto dir = find_torch_instrumentation();
    if (!dir) {
        b.message = "the PyTorch instrumentation's folder is gone";
        return b;
    }
    // Its output to a file, its last line the reason; without ceiling's NVTX injection and
    // instrumentation in its environment (the build's own Python is not the program's), but
    // with the user's own PYTHONPATH, where their torch may be.
    char log_name[] = "/tmp/ceiling-observer-build-XXXXXX";
    const int log = ::mkstemp(log_name);
    if (log < 0) {
        b.message = "no temporary file for the build's output";
        return b;
    }
    ::unlink(log_name);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, log, STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, log, STDERR_FILENO);
    std::vector<std::string> env;
    const std::string ours = "PYTHONPATH=" + dir->string();  // prepare_torch_run put it first
    for (char** e = environ; *e; ++e) {
        const std::string_view v(*e);
        const auto name = v.substr(0, v.find('='));
        if (v.starts_with(ours) && (v.size() == ours.size() || v[ours.size()] == ':')) {
            const auto rest = v.substr(ours.size());
            if (rest.size() > 1) env.emplace_back("PYTHONPATH=" + std::string(rest.substr(1)));  // past ':'
        } else if (name != "CEILING_NVTX_DIR" && name != "NVTX_INJECTION64_PATH" &&
                   name != "CEILING_TORCH_NVTX_LIB") {
            env.emplace_back(v);
        }
    }
    const std::string script = (*dir / "ceiling_torch" / "observer.py").string();
    std::vector<std::string> args = {python, script, "build"};
    std::vector<char*> argv, envp;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    pid_t pid = 0;
    const int spawned = ::posix_spawn(&pid, python.c_str(), &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    int status = 0;
    if (spawned == 0)
        while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
    std::string output;
    {
        ::lseek(log, 0, SEEK_SET);
        char buffer[4096];
        for (ssize_t n; (n = ::read(log, buffer, sizeof buffer)) > 0;) output.append(buffer, static_cast<std::size_t>(n));
        ::close(log);
    }
    std::vector<std::string> lines;
    std::istringstream in(output);
    for (std::string line; std::getline(in, line);)
        if (!line.empty()) lines.push_back(line);
    b.built = spawned == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (spawned != 0)
        b.message = "cannot start " + python;
    else if (!lines.empty())
        b.message = lines.back();  // the folder built, or the reason it was not
    return b;
}

}  // namespace ceiling::measure
