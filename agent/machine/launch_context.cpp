#include "agent/machine/launch_context.hpp"

#include <array>
#include <charconv>
#include <cstdlib>
#include <ctime>
#include <filesystem>

#include <sys/utsname.h>
#include <unistd.h>

#include "agent/version.hpp"

namespace ceiling::measure {

namespace {
constexpr std::string_view allowlist[] = {
    // OpenMP and threading runtimes
    "OMP_NUM_THREADS", "OMP_PROC_BIND", "OMP_PLACES", "OMP_SCHEDULE", "OMP_DYNAMIC",
    "OMP_WAIT_POLICY", "OMP_MAX_ACTIVE_LEVELS", "OMP_STACKSIZE", "GOMP_SPINCOUNT", "KMP_AFFINITY",
    "KMP_BLOCKTIME", "KMP_HW_SUBSET", "TBB_NUM_THREADS", "GOMAXPROCS",
    // BLAS, LAPACK, oneDNN: thread counts and the instruction set / core type they pick
    "MKL_NUM_THREADS", "MKL_DYNAMIC", "MKL_ENABLE_INSTRUCTIONS", "MKL_CBWR", "MKL_DEBUG_CPU_TYPE",
    "OPENBLAS_NUM_THREADS", "OPENBLAS_CORETYPE", "GOTO_NUM_THREADS", "BLIS_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS", "DNNL_MAX_CPU_ISA", "ONEDNN_MAX_CPU_ISA",
    "DNNL_DEFAULT_FPMATH_MODE", "ONEDNN_DEFAULT_FPMATH_MODE",
    // Frameworks
    "TF_NUM_INTRAOP_THREADS", "TF_NUM_INTEROP_THREADS", "TF_ENABLE_ONEDNN_OPTS", "XLA_FLAGS",
    "TORCH_NUM_THREADS", "ATEN_CPU_CAPABILITY", "PYTORCH_CUDA_ALLOC_CONF", "TOKENIZERS_PARALLELISM",
    // Accelerators
    "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "CUDA_LAUNCH_BLOCKING", "CUDA_MODULE_LOADING",
    "NVIDIA_TF32_OVERRIDE", "CUBLAS_WORKSPACE_CONFIG", "HIP_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES", "NCCL_P2P_DISABLE", "NCCL_IB_DISABLE", "NCCL_ALGO", "NCCL_PROTO",
    // Allocators and loaders
    "MALLOC_ARENA_MAX", "MALLOC_CONF", "LD_PRELOAD",
    // Multi-process jobs
    "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS", "WORLD_SIZE", "LOCAL_RANK"};

struct RankVariables {
    std::string_view rank;
    std::string_view size;
};
constexpr std::array<RankVariables, 4> rank_variables = {
    {{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
     {"PMI_RANK", "PMI_SIZE"},
     {"PMIX_RANK", "PMIX_SIZE"},
     {"SLURM_PROCID", "SLURM_NTASKS"}}};

std::optional<int> to_int(const char* s) {
    if (!s || !*s) return std::nullopt;
    int v = 0;
    const auto end = s + std::char_traits<char>::length(s);
    const auto [p, ec] = std::from_chars(s, end, v);
    if (ec != std::errc() || p != end || v < 0) return std::nullopt;
    return v;
}
}  // namespace

std::span<const std::string_view> environment_allowlist() { return allowlist; }

std::optional<RankInfo> detect_rank(const std::function<const char*(const char*)>& getenv) {
    for (const auto& v : rank_variables) {
        const auto rank = to_int(getenv(std::string(v.rank).c_str()));
        if (!rank) continue;
        return RankInfo{*rank, to_int(getenv(std::string(v.size).c_str())), std::string(v.rank)};
    }
    return std::nullopt;
}

std::string iso8601_now() {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

void fill_record_context(RunRecord& r) {
    r.created_at = iso8601_now();
    char host[256] = {};
    if (gethostname(host, sizeof host - 1) == 0) r.hostname = host;
    std::error_code ec;
    r.working_directory = std::filesystem::current_path(ec).string();
    r.versions["ceiling"] = std::string(version_string());
    r.versions["git_commit"] = std::string(git_commit());
    r.versions["compiler"] = std::string(compiler_string());
    r.versions["build_type"] = std::string(build_type());
    utsname u{};
    if (uname(&u) == 0) r.versions["kernel"] = std::string(u.sysname) + " " + u.release;
    for (std::string_view name : allowlist)
        if (const char* v = std::getenv(std::string(name).c_str()))
            r.environment[std::string(name)] = v;
    if (auto rank = detect_rank([](const char* n) { return std::getenv(n); })) {
        r.rank = rank->rank;
        r.world_size = rank->world_size;
        r.rank_source = rank->source;
    }
}

std::string with_rank(const std::string& path, std::optional<int> rank) {
    if (!rank) return path;
    const std::filesystem::path p(path);
    const std::string suffix = ".rank" + std::to_string(*rank);
    if (!p.has_extension()) return path + suffix;
    return (p.parent_path() / (p.stem().string() + suffix + p.extension().string())).string();
}

std::string default_record_name(const std::string& stem, std::optional<int> rank, int n) {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    localtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
    const std::string nth = n > 1 ? "-" + std::to_string(n) : "";
    return with_rank(stem + "-" + buf + nth + ".json", rank);
}

std::string unused_record_name(const std::string& stem, std::optional<int> rank) {
    std::string name;
    std::error_code ec;
    for (int n = 1;; ++n) {
        name = default_record_name(stem, rank, n);
        if (!std::filesystem::exists(std::filesystem::symlink_status(name, ec))) return name;
    }
}

}  // namespace ceiling::measure
