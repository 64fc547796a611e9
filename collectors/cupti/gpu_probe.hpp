#pragma once
// What this machine lets ceiling measure on NVIDIA GPUs: the driver, the devices, the CUPTI
// ceiling was built with, and whether performance counters are permitted. Cheap and side-
// effect free (no context is created), for `ceiling doctor` and for the measuring loops to
// decide what to try. The driver is reached through dlopen("libcuda.so.1"), so the answer is
// "no NVIDIA driver" on a machine without one rather than a binary that fails to start.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "collectors/capability.hpp"
#include "collectors/fs_root.hpp"

namespace ceiling::collectors::gpu {

// The CUDA driver entry points the probe uses (the seam tests replace). Codes are CUresult;
// a device is the int CUdevice.
struct DriverApi {
    int (*init)(unsigned flags) = nullptr;
    int (*driver_get_version)(int* version) = nullptr;
    int (*device_get_count)(int* count) = nullptr;
    int (*device_get)(int* device, int ordinal) = nullptr;
    int (*device_get_name)(char* name, int length, int device) = nullptr;
    int (*device_get_attribute)(int* value, int attribute, int device) = nullptr;
    int (*device_total_mem)(std::size_t* bytes, int device) = nullptr;
    std::string load_error;  // why libcuda.so.1 could not be used; empty when it could

    bool loaded() const { return load_error.empty(); }
};

// libcuda.so.1 loaded once per process (never unloaded).
const DriverApi& system_driver_api();

struct GpuDeviceSummary {
    int index = 0;
    std::string name;
    int compute_capability_major = 0;
    int compute_capability_minor = 0;
    int multiprocessors = 0;
    std::uint64_t memory_bytes = 0;
};

struct GpuProbe {
    Capability driver;   // detail: "driver 580.159.03, CUDA 13.0"
    std::optional<int> driver_cuda_version;  // cuDriverGetVersion: 13000 = CUDA 13.0
    std::string driver_version;              // /proc/driver/nvidia/version, when readable
    Capability devices;  // detail: "1 device"
    std::vector<GpuDeviceSummary> device_list;
    Capability cupti;    // built with CUPTI, and its API version
    std::optional<unsigned> cupti_version;
    Capability activity;  // kernel/copy tracing possible
    Capability counters;  // performance counters permitted for this process
};

GpuProbe probe_gpu(const DriverApi& driver = system_driver_api(), const FsRoot& root = FsRoot::system());

// Whether the NVIDIA kernel module is loaded and how many GPUs it lists, from its /proc
// entries alone: no library loaded, CUDA not initialised. For `ceiling run` to say why a
// program left no GPU activity: probe_gpu's cuInit takes 0.1-2 s on a GPU host, which
// every run of a CPU-only program would pay after the program ended.
struct GpuPresence {
    bool kernel_module = false;  // /proc/driver/nvidia/version
    int gpus = 0;                // entries of /proc/driver/nvidia/gpus (one per PCI device)
};
GpuPresence gpu_presence(const FsRoot& root = FsRoot::system());

// Whether this build holds the CUPTI collector, and CUPTI's API version (cuptiGetVersion).
bool built_with_cupti();
std::optional<unsigned> cupti_api_version();

// "13.0" from 13000.
std::string cuda_version_string(int version);

}  // namespace ceiling::collectors::gpu
