// `ceiling run --torch` on real PyTorch programs (tests/programs/torch/): declared FLOPs of
// published models, depthwise against pointwise convolutions, a pipeline that is not the
// model, the instrumentation's cost, sitecustomize chaining. Skips, with the reason, where no
// Python with torch and torchvision is installed or ceiling was built without NVTX headers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "agent/run/torch_run.hpp"
#include "agent/judge/op_types.hpp"
#include "agent/output/op_summary.hpp"
#include "diagnosis/roofline.hpp"
#include "kernels/registry.hpp"
#include "tests/integration/run_support.hpp"

namespace ceiling::testing {
namespace {

namespace fs = std::filesystem;

const fs::path programs = fs::path(CEILING_TEST_DATA) / ".." / "programs" / "torch";
const fs::path instrumentation = fs::path(CEILING_BINARY).parent_path() / "torch";
const std::string profile = std::string(CEILING_TEST_DATA) + "/profile_vm_quick.json";

// Every case runs on both torches users meet: Debian's 1.13 (/usr/bin/python3) and PyPI's
// 2.x (the venv scripts/setup installs). $CEILING_TEST_PYTHON replaces Debian's.
struct TorchPython {
    const char* name;
    std::string path;
};

// ctest's names show the Python's name, not the struct's bytes.
void PrintTo(const TorchPython& p, std::ostream* os) { *os << p.name << " (" << p.path << ")"; }

std::string debian_python() {
    if (const char* p = std::getenv("CEILING_TEST_PYTHON"); p && *p) return p;
    return "/usr/bin/python3";
}

const std::vector<TorchPython>& torch_pythons() {
    static const std::vector<TorchPython> all = {{"debian", debian_python()},
                                                 {"pypi", CEILING_TORCH2_PYTHON}};
    return all;
}

// The torch version a Python imports with torchvision and PIL; empty where it cannot.
std::string torch_version(const std::string& python) {
    const auto r = run_process({python, "-c", "import torch, torchvision, PIL; print(torch.__version__)"});
    if (r.exit_code != 0) return "";
    std::string v = r.out;
    while (!v.empty() && (v.back() == '\n' || v.back() == '\r')) v.pop_back();
    return v;
}

class TorchRun : public ::testing::TestWithParam<TorchPython> {
protected:
    // The case's Python, once its torch is known to import; skips with the reason otherwise.
    const std::string& torch_python() const { return GetParam().path; }
};

#define CEILING_NEED_TORCH()                                                                    \
    do {                                                                                        \
        if (!fs::exists(instrumentation / "sitecustomize.py"))                                  \
            GTEST_SKIP() << "built without NVTX headers: no PyTorch instrumentation";           \
        static std::map<std::string, std::string> versions;                                     \
        if (!versions.count(torch_python())) versions[torch_python()] = torch_version(torch_python()); \
        if (versions[torch_python()].empty())                                                   \
            GTEST_SKIP() << torch_python() << " has no torch, torchvision and PIL ("            \
                         << (std::string(GetParam().name) == "debian"                           \
                                 ? "Debian: apt-get install python3-torch python3-torchvision " \
                                   "python3-pil"                                                \
                                 : "PyPI's torch 2.x: run scripts/setup")                       \
                         << ")";                                                                \
        RecordProperty("torch", versions[torch_python()]);                                      \
    } while (0)

const RecordedRegion* named(const RunRecord& r, const std::string& name) {
    for (const auto& g : r.regions)
        if (g.name == name) return &g;
    return nullptr;
}

TEST_P(TorchRun, FormulasMatchTorchsOwnShapes) {
    CEILING_NEED_TORCH();
    const auto r = run_process({torch_python(), (programs / "formula_checks.py").string()},
                               {"PYTHONPATH=" + instrumentation.string()});
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find(", 0 failed"), std::string::npos) << r.out;
}

// A training step whole: AdamW's step a model range with Adam's work per element on each
// optimizer path the torch has, forward and backward products by hand, no profiler-marker
// ranges; in this process and in a record of `ceiling run --torch`.
TEST_P(TorchRun, TrainingStepIsWholeInTheModel) {
    CEILING_NEED_TORCH();
    const std::string script = (programs / "training_checks.py").string();
    const std::string path = "PYTHONPATH=" + instrumentation.string();
    for (const std::vector<std::string>& extra :
         {std::vector<std::string>{}, std::vector<std::string>{"--ceiling", CEILING_BINARY}}) {
        std::vector<std::string> argv = {torch_python(), script};
        argv.insert(argv.end(), extra.begin(), extra.end());
        const auto r = run_process(argv, {path});
        EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
        EXPECT_NE(r.out.find(", 0 failed"), std::string::npos) << r.out;
    }
}

// The model zoo (torchvision CNNs, ViT-B/16, an encoder layer, an SDPA decoder block's
// prefill and KV-cache decode, training steps): ceiling's matrix-product FLOPs within 1 % of
// an independent count (FlopCounterMode where it sees everything, by hand where it does not).
TEST_P(TorchRun, ModelZooMatchesIndependentCounts) {
    CEILING_NEED_TORCH();
    const auto r = run_process({torch_python(), (programs / "model_zoo.py").string()},
                               {"PYTHONPATH=" + instrumentation.string()});
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find(" checks, 0 failed"), std::string::npos) << r.out;
}

// One forward each at 224x224, batch 1: the models' declared FLOPs within 5% of twice their
// published multiply-adds, and equal to the sum of their op ranges' declared work.
TEST_P(TorchRun, DeclaredFlopsOfPublishedModels) {
    CEILING_NEED_TORCH();
    TempDir dir;
    const auto r = ceiling_run(dir / "rec.json", {"--torch", "-q"},
                               {torch_python(), (programs / "flops_models.py").string(),
                                "mobilenet_v2", "resnet18", "resnet50"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const RunRecord rec = read_record(dir / "rec.json");
    const std::pair<const char*, double> published[] = {
        {"MobileNetV2 (model)", 300e6}, {"ResNet (model)", 1.8e9}, {"ResNet#2 (model)", 4.1e9}};
    for (const auto& [name, macs] : published) {
        const RecordedRegion* m = named(rec, name);
        ASSERT_TRUE(m) << name;
        ASSERT_TRUE(m->measurement.work) << name;
        EXPECT_NEAR(m->measurement.work->ops / (2 * macs), 1.0, 0.05) << name;
        double ops = 0;
        std::size_t unformulated = 0;
        for (const auto& g : rec.regions) {
            if (g.path.rfind(m->path + "/", 0) != 0 || !g.labels.count("op_class")) continue;
            if (g.measurement.work) ops += g.measurement.work->ops * static_cast<double>(g.instances);
            else ++unformulated;
        }
        EXPECT_DOUBLE_EQ(ops, m->measurement.work->ops) << name;
        EXPECT_EQ(unformulated, 0u) << name << ": every op of these models has a formula";
        EXPECT_TRUE(m->model);
    }
    // The module tree: each op under the module that ran it.
    bool nested = false;
    for (const auto& g : rec.regions)
        nested = nested || (g.name == "aten.convolution [conv depthwise]" &&
                            g.parent.find("/features.2 (InvertedResidual)/features.2.conv (Sequential)/") !=
                                std::string::npos);
    EXPECT_TRUE(nested);
}

// MobileNetV2, five calls: depthwise convolutions below pointwise ones in intensity and in
// fraction of the compute roof (each op at its median of three instrumented calls); the cost
// of the instrumentation printed.
TEST_P(TorchRun, DepthwiseBelowPointwiseAndCostShown) {
    CEILING_NEED_TORCH();
    TempDir dir;
    const auto r = ceiling_run(dir / "rec.json", {"--torch", "--profile", profile},
                               {torch_python(), (programs / "flops_models.py").string(), "--calls", "5",
                                "mobilenet_v2"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const RunRecord rec = read_record(dir / "rec.json");
    const auto s = judge::summarise_ops(rec);
    const OpTypeRow *dw = nullptr, *pw = nullptr;
    for (const auto& t : s.types) {
        if (t.name == "conv depthwise") dw = &t;
        if (t.name == "conv pointwise") pw = &t;
    }
    ASSERT_TRUE(dw && pw) << r.err;
    ASSERT_TRUE(dw->ops && pw->ops && dw->bytes && pw->bytes);
    EXPECT_LT(*dw->ops / *dw->bytes, *pw->ops / *pw->bytes);
    auto compute = [](const OpTypeRow& t) {
        for (const auto& c : t.judged->roofs)
            if (c.kind == RoofKind::compute && c.fraction) return *c.fraction;
        return std::nan("");
    };
    ASSERT_TRUE(dw->judged && pw->judged);
    // Which op type ran closer to its roof is only comparable when they ran alone: under
    // contention (the run's own finding) a starved type reads as slow whatever its kind.
    const bool contended =
        rec.diagnosis && std::any_of(rec.diagnosis->findings.begin(), rec.diagnosis->findings.end(),
                                     [](const Finding& f) { return f.kind == FindingKind::contention; });
    if (!contended) {
        EXPECT_LT(compute(*dw), compute(*pw)) << r.err;
    }
    // The suite's depthwise kernel and the model's depthwise ops land in the same region of
    // the roofline: both below the DRAM ridge (bandwidth side) of the profile they are judged by.
    const Roofline roofline = make_roofline(*rec.machine_profile, Precision::fp32, Engine::vector, 1);
    ASSERT_TRUE(roofline.level("DRAM") && roofline.level("DRAM")->ridge_ops_per_byte);
    const double ridge = *roofline.level("DRAM")->ridge_ops_per_byte;
    int suite_cases = 0;
    for (const auto& k : kernels::standard_cases()) {
        if (k.kernel != "conv" || k.problem != "depthwise") continue;
        ++suite_cases;
        EXPECT_LT(k.work.ops / k.work.compulsory_bytes, ridge) << k.name();
    }
    EXPECT_GT(suite_cases, 0);
    EXPECT_LT(*dw->ops / *dw->bytes, ridge);
    // Calls 1, 3, 5 instrumented, 2 and 4 bare: the cost is measured and printed, and the op
    // times either add up to the bare call or the output says why not.
    ASSERT_EQ(s.costs.size(), 1u);
    ASSERT_TRUE(s.costs[0].uninstrumented_s && s.costs[0].instrumented_s && s.costs[0].op_time_s);
    EXPECT_NE(r.err.find("instrumentation (MobileNetV2 (model)): call "), std::string::npos) << r.err;
    const double ratio = *s.costs[0].op_time_s / *s.costs[0].uninstrumented_s;
    const bool explained = r.err.find("more, because") != std::string::npos ||
                           r.err.find("less, because") != std::string::npos;
    EXPECT_TRUE(std::abs(ratio - 1) <= op_sum_tolerance || explained) << r.err;
    EXPECT_NE(r.err.find("PyTorch ops by type"), std::string::npos);
    EXPECT_EQ(r.err.find("aten.convolution [conv"), std::string::npos)
        << "ops inside the model are summarised, not listed one by one";
}

// Resize with PIL and NMS over 20 000 boxes around a small CNN, nothing annotated.
TEST_P(TorchRun, PipelineIsNotTheModelAndNamesItsStages) {
    CEILING_NEED_TORCH();
    TempDir dir;
    const auto r = ceiling_run(dir / "rec.json", {"--torch", "--profile", profile},
                               {torch_python(), (programs / "pipeline.py").string(), "3"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const RunRecord rec = read_record(dir / "rec.json");
    ASSERT_TRUE(rec.diagnosis && rec.diagnosis->bound) << r.err;
    EXPECT_EQ(*rec.diagnosis->bound, Bound::not_the_model) << r.err;
    ASSERT_TRUE(rec.diagnosis->model_share);
    std::string named_regions;
    for (const auto& t : rec.diagnosis->model_share->top_non_model)
        named_regions += t.name + " " + std::to_string(t.total_s) + " s\n";
    EXPECT_NE(named_regions.find("torchvision.nms"), std::string::npos) << named_regions;
    EXPECT_NE(named_regions.find("PIL.Image.Image.resize()"), std::string::npos)
        << named_regions << r.err;
    EXPECT_NE(r.err.find("not model: torch::torchvision.nms"), std::string::npos) << r.err;
}

TEST_P(TorchRun, ChainsToTheSitecustomizeItHidesAndTellsWhenTorchIsAbsent) {
    CEILING_NEED_TORCH();
    TempDir dir;
    fs::create_directories(dir / "site");
    std::ofstream(dir / "site" / "sitecustomize.py") << "import os\nos.environ['CHAINED'] = 'yes'\n";
    const auto r = ceiling_run(dir / "rec.json", {"--torch", "-q"},
                               {torch_python(), "-c", "import os; print(os.environ.get('CHAINED'))"},
                               {"PYTHONPATH=" + (dir / "site").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "yes\n");
    const RunRecord rec = read_record(dir / "rec.json");
    bool said = false;
    for (const auto& n : rec.notes) said = said || n.find("never imported torch") != std::string::npos;
    EXPECT_TRUE(said);
}

// The library the instrumentation records through has two faces: a CPython extension module
// (where ceiling was built with Python's headers; a range then costs ~0.1 us, not ctypes'
// ~0.7) and ctypes' plain functions. Both land in the run's capture, in the same domain.
// Needs no torch: the ranges are opened by hand.
TEST(TorchNvtx, TheExtensionModuleAndCtypesBothRecord) {
    if (!fs::exists(instrumentation / "sitecustomize.py"))
        GTEST_SKIP() << "built without NVTX headers: no PyTorch instrumentation";
    TempDir dir;
    const std::string script =
        "import os\n"
        "from ceiling_torch import nvtx\n"
        "print(nvtx.via)\n"
        "nvtx.push(b'through nvtx.via (model)'); nvtx.pop()\n"
        "init, push, pop, mark = nvtx._as_ctypes(os.environ['CEILING_TORCH_NVTX_LIB'])\n"
        "push(b'through ctypes (model)'); pop()\n";
    const auto r = ceiling_run(dir / "rec.json", {"--torch", "-q"}, {debian_python(), "-c", script});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, CEILING_TORCH_PYTHON_MODULE ? "extension module\n" : "ctypes\n");
    const RunRecord rec = read_record(dir / "rec.json");
    std::set<std::string> names;
    for (const auto& region : rec.regions)
        if (region.domain == "torch") names.insert(region.name);
    EXPECT_TRUE(names.count("through nvtx.via (model)")) << r.err;
    EXPECT_TRUE(names.count("through ctypes (model)")) << r.err;
}

// The dispatch mode's body in C (the extension module's) and in Python (ctypes' face) give
// every call the same key and the same range: a model with lists, keyword arguments and
// ops outside any module, run once by each.
TEST_P(TorchRun, TheDispatchBodyInCAndInPythonGiveTheSameRanges) {
    CEILING_NEED_TORCH();
    if (!CEILING_TORCH_PYTHON_MODULE) GTEST_SKIP() << "built without Python's headers: no C body";
    TempDir dir;
    const std::string script =
        "import torch\n"
        "from ceiling_torch import modules\n"
        "model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8),\n"
        "    torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(512, 10)).eval()\n"
        "x = torch.randn(2, 3, 8, 8)\n"
        "def ranges():\n"
        "    modules._messages.clear()\n"
        "    with torch.no_grad():\n"
        "        model(x); model(x)\n"  // the second call runs uninstrumented
        "        torch.nn.functional.interpolate(x, scale_factor=2.0, mode='bilinear')\n"
        "        torch.cat([x, x], dim=1).sum(dim=(2, 3), keepdim=True)\n"
        "    return sorted(modules._messages.items(), key=repr)\n"
        "print('C' if '__torch_dispatch__' in vars(modules._mode) else 'Python')\n"
        "in_c = ranges()\n"
        "del modules._mode.__torch_dispatch__\n"
        "in_python = ranges()\n"
        "print(len(in_c), in_c == in_python)\n"
        "if in_c != in_python: print(set(in_c) ^ set(in_python))\n";
    // The mode's bodies: the op observer, where it is built, takes the ops without it.
    const auto r = ceiling_run(dir / "rec.json", {"--torch", "-q"}, {torch_python(), "-c", script},
                               {"CEILING_TORCH_OPS=mode"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::istringstream out(r.out);
    std::string body, same;
    std::size_t ranges = 0;
    out >> body >> ranges >> same;
    EXPECT_EQ(body, "C") << r.out;
    EXPECT_GE(ranges, 8u) << r.out;
    EXPECT_EQ(same, "True") << r.out;
}

// The op observer (C++ on torch's RecordFunction, built per torch version) takes the ops the
// dispatch mode takes, with the same declared work: CNNs, a ViT, an encoder layer, a decoder
// block with its KV cache, training steps (observer_checks.py). On PyPI's torch it must be
// built (the fixture torch_observer_build builds it before these tests); elsewhere, where
// its build failed (Debian's torch ships no C++ headers), the test says why.
TEST_P(TorchRun, TheObserverTakesTheModesOps) {
    CEILING_NEED_TORCH();
    const auto r = run_process({torch_python(), (programs / "observer_checks.py").string()},
                               {"PYTHONPATH=" + instrumentation.string()});
    if (r.exit_code == 2 && std::string(GetParam().name) != "pypi") GTEST_SKIP() << r.out;
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find(" checks, 0 failed"), std::string::npos) << r.out;
}

// A run whose torch has no observer built takes its ops through the dispatch mode, says so,
// and ceiling builds the observer after the run (outside the program's time), once: the
// next run uses it or, where the build failed, says why without trying again. In a cache
// of its own; on Debian's torch (its build fails at once where it has no C++ headers; PyPI's
// takes a minute, which the fixture torch_observer_build spends once).
TEST_P(TorchRun, TheObserverIsBuiltOnceAfterARunThatHadNone) {
    CEILING_NEED_TORCH();
    if (std::string(GetParam().name) == "pypi") GTEST_SKIP() << "a minute's build: torch_observer_build does it";
    TempDir dir;
    const std::vector<std::string> env = {"XDG_CACHE_HOME=" + dir.path().string()};
    const std::vector<std::string> program = {torch_python(), "-c", "import torch; torch.ones(2).sum()"};
    const auto first = ceiling_run(dir / "first.json", {"--torch"}, program, env);
    ASSERT_EQ(first.exit_code, 0) << first.err;
    EXPECT_NE(first.err.find("building the PyTorch op observer for " + torch_python()), std::string::npos)
        << first.err;
    const auto notes_of = [](const RunRecord& rec) {
        std::string all;
        for (const auto& n : rec.notes) all += n + "\n";
        return all;
    };
    EXPECT_NE(notes_of(read_record(dir / "first.json")).find("ops through the dispatch mode (not built"),
              std::string::npos);
    const auto second = ceiling_run(dir / "second.json", {"--torch"}, program, env);
    ASSERT_EQ(second.exit_code, 0) << second.err;
    EXPECT_EQ(second.err.find("building the PyTorch op observer"), std::string::npos) << second.err;
    const std::string notes = notes_of(read_record(dir / "second.json"));
    const bool built = first.err.find("ceiling: built, in ") != std::string::npos;
    if (built)
        EXPECT_EQ(notes.find("dispatch mode"), std::string::npos) << notes;
    else
        EXPECT_NE(notes.find("ops through the dispatch mode (its build for this torch failed: "), std::string::npos)
            << notes << first.err;
}

INSTANTIATE_TEST_SUITE_P(Torch, TorchRun, ::testing::ValuesIn(torch_pythons()),
                         [](const ::testing::TestParamInfo<TorchPython>& p) { return std::string(p.param.name); });

}  // namespace
}  // namespace ceiling::testing
