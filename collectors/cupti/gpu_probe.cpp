#include "collectors/cupti/gpu_probe.hpp"

#include <dlfcn.h>

#include <array>
#include <sstream>

#include "collectors/cupti/cupti_errors.hpp"
#include "collectors/perf_environment.hpp"

namespace ceiling::collectors::gpu {
namespace {

// CUdevice_attribute values (cuda.h); stable across CUDA versions.
constexpr int attr_multiprocessors = 16;
constexpr int attr_cc_major = 75;
constexpr int attr_cc_minor = 76;

template <typename F>
void resolve(void* lib, const char* symbol, F& out, std::string& error) {
    out = reinterpret_cast<F>(dlsym(lib, symbol));
    if (!out && error.empty()) error = std::string("libcuda.so.1 lacks ") + symbol;
}

DriverApi load_driver() {
    DriverApi api;
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!lib) {
        const char* why = dlerror();
        api.load_error = std::string("no NVIDIA driver: libcuda.so.1 not found") + (why ? std::string(" (") + why + ")" : "");
        return api;
    }
    std::string error;
    resolve(lib, "cuInit", api.init, error);
    resolve(lib, "cuDriverGetVersion", api.driver_get_version, error);
    resolve(lib, "cuDeviceGetCount", api.device_get_count, error);
    resolve(lib, "cuDeviceGet", api.device_get, error);
    resolve(lib, "cuDeviceGetName", api.device_get_name, error);
    resolve(lib, "cuDeviceGetAttribute", api.device_get_attribute, error);
    resolve(lib, "cuDeviceTotalMem_v2", api.device_total_mem, error);
    api.load_error = error;
    return api;
}

// "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.03  ..." -> "580.159.03"
std::string kernel_module_version(const FsRoot& root) {
    const auto line = root.read_line("/proc/driver/nvidia/version");
    if (!line) return {};
    const auto pos = line->find("Kernel Module");
    if (pos == std::string::npos) return {};
    std::istringstream in(line->substr(pos + 13));
    std::string v;
    in >> v;
    return v;
}

// RmProfilingAdminOnly from the driver's parameters: 1 = counters for administrators only.
std::optional<int> profiling_admin_only(const FsRoot& root) {
    const auto text = root.read_text("/proc/driver/nvidia/params");
    if (!text) return std::nullopt;
    std::istringstream in(*text);
    std::string line;
    while (std::getline(in, line)) {
        const auto colon = line.find(':');
        if (colon == std::string::npos || trim(std::string_view(line).substr(0, colon)) != "RmProfilingAdminOnly")
            continue;
        if (auto v = parse_int(std::string_view(line).substr(colon + 1))) return static_cast<int>(*v);
    }
    return std::nullopt;
}

}  // namespace

const DriverApi& system_driver_api() {
    static const DriverApi api = load_driver();
    return api;
}

std::string cuda_version_string(int version) {
    return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

GpuPresence gpu_presence(const FsRoot& root) {
    GpuPresence p;
    p.kernel_module = root.exists("/proc/driver/nvidia/version");
    if (p.kernel_module) p.gpus = static_cast<int>(root.list("/proc/driver/nvidia/gpus").size());
    return p;
}

GpuProbe probe_gpu(const DriverApi& driver, const FsRoot& root) {
    GpuProbe p;
    p.driver_version = kernel_module_version(root);
    if (!driver.loaded()) {
        p.driver = Capability::no(driver.load_error, "install the NVIDIA driver (nvidia-smi should list the GPU)");
        p.devices = Capability::no("no NVIDIA driver");
    } else if (const int rc = driver.init(0); rc != cuda_success) {
        p.driver = explain_cuda_driver_error(rc, "cuInit");
        p.devices = rc == cuda_error_no_device ? Capability::no("no CUDA device", p.driver.fix)
                                               : Capability::no("the CUDA driver did not initialise");
    } else {
        int version = 0;
        if (driver.driver_get_version(&version) == cuda_success) p.driver_cuda_version = version;
        std::string detail = p.driver_version.empty() ? "driver" : "driver " + p.driver_version;
        if (p.driver_cuda_version) detail += ", CUDA " + cuda_version_string(*p.driver_cuda_version);
        p.driver = Capability::yes(detail);
        int count = 0;
        if (const int count_rc = driver.device_get_count(&count); count_rc != cuda_success) {
            p.devices = explain_cuda_driver_error(count_rc, "cuDeviceGetCount");
        } else if (count == 0) {
            p.devices = explain_cuda_driver_error(cuda_error_no_device, "cuDeviceGetCount");
        } else {
            for (int i = 0; i < count; ++i) {
                GpuDeviceSummary d;
                d.index = i;
                int dev = 0;
                if (driver.device_get(&dev, i) != cuda_success) continue;
                std::array<char, 256> name{};
                if (driver.device_get_name(name.data(), static_cast<int>(name.size()), dev) == cuda_success)
                    d.name = name.data();
                driver.device_get_attribute(&d.compute_capability_major, attr_cc_major, dev);
                driver.device_get_attribute(&d.compute_capability_minor, attr_cc_minor, dev);
                driver.device_get_attribute(&d.multiprocessors, attr_multiprocessors, dev);
                std::size_t bytes = 0;
                if (driver.device_total_mem(&bytes, dev) == cuda_success) d.memory_bytes = bytes;
                p.device_list.push_back(d);
            }
            p.devices = Capability::yes(std::to_string(p.device_list.size()) +
                                        (p.device_list.size() == 1 ? " device" : " devices"));
        }
    }

    if (built_with_cupti()) {
        p.cupti_version = cupti_api_version();
        p.cupti = Capability::yes(p.cupti_version ? "CUPTI API version " + std::to_string(*p.cupti_version) : "");
    } else {
        p.cupti = Capability::no("not built with CUPTI",
                                 "rebuild ceiling where the CUDA toolkit (with CUPTI) is installed");
    }

    if (!p.cupti.available)
        p.activity = Capability::no("not built with CUPTI", p.cupti.fix);
    else if (!p.devices.available)
        p.activity = Capability::no(p.devices.reason, p.devices.fix.empty() ? p.driver.fix : p.devices.fix);
    else
        p.activity = Capability::yes("kernels, copies, memsets, synchronisation");

    if (!p.activity.available) {
        p.counters = Capability::no(p.activity.reason, p.activity.fix);
    } else {
        const auto admin_only = profiling_admin_only(root);
        const auto env = read_perf_environment(root);
        if (admin_only && *admin_only == 0)
            p.counters = Capability::yes("RmProfilingAdminOnly=0: counters open to all users");
        else if (env.cap_sys_admin)
            p.counters = Capability::yes("CAP_SYS_ADMIN (root)");
        else if (admin_only)
            p.counters = explain_cupti_error(cupti_insufficient_privileges, "reading GPU counters");
        else
            p.counters = Capability::yes(
                "not verified: /proc/driver/nvidia/params unreadable; the first profiling call will tell");
    }
    return p;
}

}  // namespace ceiling::collectors::gpu
