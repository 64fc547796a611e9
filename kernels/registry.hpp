#pragma once
// The reference kernels `ceiling suite` runs (GEMM, GEMV, convolution, NMS, resize), as a
// registry of cases: one kernel / problem / variant / shape each, with its analytic work,
// its memory needs, and a setup that allocates, fills with random data from a fixed seed
// and returns something to run and to check against a simple reference.
//
// The work is described with kernels-local types: kernels/ may not include diagnosis/.
// Their spellings equal those of ceiling::Precision / Engine / Device in diagnosis/work.hpp,
// so the agent converts by name (parse_precision(to_string(w.precision)) ...), and a unit
// test keeps the two tables in step.

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace ceiling::kernels {

enum class WorkPrecision { fp64, fp32, fp16, bf16, tf32, int8 };
inline constexpr std::array<std::string_view, 6> work_precision_names = {"fp64", "fp32", "fp16",
                                                                         "bf16", "tf32", "int8"};
// vector: SIMD units; matrix: AMX tiles (compare with the matrix roof, not the FMA roof).
enum class WorkEngine { scalar, vector, matrix };
inline constexpr std::array<std::string_view, 3> work_engine_names = {"scalar", "vector",
                                                                      "matrix"};
enum class WorkDevice { cpu, gpu };
inline constexpr std::array<std::string_view, 2> work_device_names = {"cpu", "gpu"};

std::string_view to_string(WorkPrecision p);
std::string_view to_string(WorkEngine e);
std::string_view to_string(WorkDevice d);

// What one execution of a case does, known analytically. ops counts a multiply-add as 2.
// compulsory_bytes: each input read once, each output written once (no write-allocate);
// working_set_bytes: everything one execution touches, which decides the memory level;
// written_bytes: the outputs' share of compulsory_bytes, which decides the stream kernel
// whose bandwidth roof judges the case (a read-only stream runs faster than one with stores).
struct KernelWork {
    WorkPrecision precision = WorkPrecision::fp32;
    WorkEngine engine = WorkEngine::vector;
    WorkDevice device = WorkDevice::cpu;
    double ops = 0;
    double compulsory_bytes = 0;
    double working_set_bytes = 0;
    std::optional<double> written_bytes;
};

// The analytic work of a bilinear resize, whatever the method and the device: each output
// value is a weighted sum of 4 source taps, a multiply-add each: 8 operations. The CPU and
// GPU suites count this, and so does the PyTorch formula for upsample_bilinear2d
// (agent/inject/python/ceiling_torch/formulas.py, UPSAMPLE_TAPS), so the three compare.
inline constexpr double bilinear_ops_per_output = 2 * 4;

// naive: the textbook loops, one thread. optimized: ours, every trick that fits the bound,
// all threads. library: the established implementation (OpenBLAS, oneDNN, OpenCV).
enum class Variant { naive, optimized, library };
inline constexpr std::array<std::string_view, 3> variant_names = {"naive", "optimized",
                                                                  "library"};
std::string_view to_string(Variant v);
std::optional<Variant> parse_variant(std::string_view s);

struct SetupOptions {
    // Threads for multi-threaded variants; 0 = every CPU this process may use. Naive
    // variants always run on one.
    int threads = 0;
    // A case whose working set reaches this size is meant to be served by DRAM: setup
    // then makes enough copies of its buffers (used in turn by run()) that a rerun finds
    // none of its data in cache. 32 MiB is the effective L3 of the development VM; the
    // suite passes where the profile's last cache plateau ended.
    std::size_t last_level_cache_bytes = std::size_t{32} << 20;
    // The most of a case's data a cache may still hold (the nominal last-level cache, where
    // it is larger than the plateau): the copies touch 4 x this between two uses of one.
    // 0: last_level_cache_bytes.
    std::size_t largest_cache_bytes = 0;
    // Memory setup may use; absent = MemAvailable of /proc/meminfo.
    std::optional<std::size_t> available_memory_bytes;
};

// The outcome of comparing one run's output with the reference. max_error and tolerance
// are in the unit `detail` names (e.g. "|c - ref| / sum|a*b|", "levels of 255", "boxes").
struct Verification {
    bool ok = false;
    double max_error = 0;
    double tolerance = 0;
    std::string detail;
};

// A case that cannot be set up here (does not fit in memory, needs an ISA, permission or
// library this machine or build lacks). The message is one line saying why.
class KernelUnavailable : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// A case set up and ready: buffers allocated and filled, nothing run yet.
class PreparedKernel {
public:
    PreparedKernel(int buffer_sets, int threads);
    virtual ~PreparedKernel() = default;
    PreparedKernel(const PreparedKernel&) = delete;
    PreparedKernel& operator=(const PreparedKernel&) = delete;

    // One execution, on the next buffer set in turn (rotation defeats the caches for
    // DRAM-sized cases; cache-sized cases have one set). Time this call.
    void run();
    // Compares the output of the latest run() with the reference; not ok before any run.
    Verification verify() const;

    int threads() const { return threads_; }
    int buffer_sets() const { return sets_; }
    // What setup learnt about the implementation that the case could not know beforehand
    // (e.g. the oneDNN primitive chosen: "brg:avx512_core_amx"); may be empty.
    const std::string& detail() const { return detail_; }
    void set_detail(std::string d) { detail_ = std::move(d); }

protected:
    virtual void run_set(int set) = 0;
    virtual Verification verify_set(int set) const = 0;

private:
    int sets_;
    int threads_;
    int next_ = 0;
    int last_ = -1;
    std::string detail_;
};

// One kernel / problem / variant / shape.
struct KernelCase {
    std::string kernel;   // family: "gemm", "gemv", "conv", "nms", "resize"
    std::string problem;  // what it computes: "fp32", "bf16", "int8", "depthwise", "greedy", ...
    Variant variant = Variant::naive;
    std::string shape;    // dimensions as the family writes them, e.g. "2048x2048x2048"
    // Cases that belong together in a sweep (e.g. "batch" for the GEMM batch sweep); empty
    // for a single case.
    std::string series;
    // How it is computed: ISA and blocking of ours, or library, version and the core it
    // chose (OpenBLAS's openblas_get_corename()).
    std::string implementation;
    // Non-empty when the implementation is known to be handicapped here, with the fix
    // (e.g. OpenBLAS running its Prescott kernels on an AVX-512 CPU).
    std::string advice;
    // Why this case cannot run here (missing ISA, AMX permission, library left out at
    // build time); empty when it can.
    std::string unavailable;
    KernelWork work;
    bool multithreaded = false;  // uses SetupOptions::threads; otherwise one thread
    bool in_default = false;     // part of the default `ceiling suite`
    bool in_quick = false;       // part of `ceiling suite --quick`
    std::size_t bytes_per_set = 0;  // allocated per buffer set (inputs and outputs)
    std::size_t fixed_bytes = 0;    // allocated once (reference data, shared tables)
    std::size_t bytes_per_thread = 0;  // allocated per thread (packing buffers, workspaces)
    // Allocates `sets` buffer sets and fills them; called by prepare() after the checks.
    std::function<std::unique_ptr<PreparedKernel>(const SetupOptions&, int sets)> setup;

    std::string name() const;  // "kernel/problem/variant/shape"
};

// Every kernel family's name, in suite order.
std::span<const std::string_view> kernel_names();
// Problems of one family ("fp32", "bf16" for gemm); empty for an unknown family.
std::vector<std::string_view> problem_names(std::string_view kernel);

// Every case at its standard shapes (default, quick and extra ones), grouped by kernel in
// suite order. Cases that cannot run here are listed with `unavailable` set.
std::vector<KernelCase> standard_cases();

// One case at any shape the family accepts (e.g. gemm "17x33x65", resize "1920x1080-1x1").
// Throws std::invalid_argument, naming the valid kernels, problems, variants or shape form.
KernelCase make_case(std::string_view kernel, std::string_view problem, Variant variant,
                     std::string_view shape);

// Buffer sets a case with this working set gets: 1 below the last-level cache, else enough
// that at least 4x the largest cache (largest_cache_bytes, when larger) is touched before a
// set is reused (ceil(4 * cache / ws)).
int rotation_sets(double working_set_bytes, std::size_t last_level_cache_bytes,
                  std::size_t largest_cache_bytes = 0);
int rotation_sets(double working_set_bytes, const SetupOptions& options);
// Bytes prepare() would allocate: fixed + sets x per set + threads x per thread.
std::size_t required_bytes(const KernelCase& c, const SetupOptions& options);
// Empty when the case can be set up within the available memory, else one line saying
// how much it needs and how much there is. Allocates nothing.
std::string check_fits(const KernelCase& c, const SetupOptions& options);

// Checks availability and memory first (throws KernelUnavailable, allocating nothing),
// then allocates and fills the buffer sets.
std::unique_ptr<PreparedKernel> prepare(const KernelCase& c, const SetupOptions& options = {});

// Threads `options` asks for: threads, or every CPU when 0.
int resolve_threads(const SetupOptions& options);

}  // namespace ceiling::kernels
