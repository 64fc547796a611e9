#include "collectors/cupti/cupti_errors.hpp"

#include <array>

namespace ceiling::collectors::gpu {
namespace {

constexpr std::string_view counter_permission_fix =
    "GPU performance counters are for administrators by default. As root: load the nvidia "
    "driver with NVreg_RestrictProfilingToAdminUsers=0 (echo 'options nvidia "
    "NVreg_RestrictProfilingToAdminUsers=0' > /etc/modprobe.d/nvidia-profiling.conf, then "
    "reload the driver or reboot), or run ceiling as root; in a container the runtime must also "
    "grant CAP_SYS_ADMIN (docker run --cap-add SYS_ADMIN). Activity tracing (kernel times, "
    "copies) works without it";

constexpr std::array<ErrorExplanation, 20> cupti_table = {{
    {1, "CUPTI_ERROR_INVALID_PARAMETER", "CUPTI rejected a parameter (a ceiling bug: please report it)", ""},
    {2, "CUPTI_ERROR_INVALID_DEVICE", "the device is not one CUPTI can profile", ""},
    {3, "CUPTI_ERROR_INVALID_CONTEXT", "no CUDA context is current", ""},
    {11, "CUPTI_ERROR_API_NOT_IMPLEMENTED", "this CUPTI does not implement the call",
     "use a CUPTI from the same CUDA toolkit as ceiling was built with"},
    {14, "CUPTI_ERROR_NOT_COMPATIBLE", "CUPTI and the driver do not match",
     "update the NVIDIA driver to one that supports this CUDA version"},
    {15, "CUPTI_ERROR_NOT_INITIALIZED", "CUPTI could not initialise: no usable NVIDIA driver",
     "install the NVIDIA driver (libcuda.so.1) and check that nvidia-smi lists the GPU"},
    {17, "CUPTI_ERROR_INVALID_METRIC_NAME", "a metric is not offered on this GPU", ""},
    {26, "CUPTI_ERROR_HARDWARE_BUSY", "the performance counters are in use by another profiler",
     "stop the other profiler (Nsight, DCGM profiling: dcgmi profile --pause) and try again"},
    {27, "CUPTI_ERROR_NOT_SUPPORTED", "this GPU or driver does not support the operation", ""},
    {33, "CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED", "profiling is not supported on this virtual GPU",
     "ask the hypervisor administrator to enable profiling for the vGPU"},
    {35, "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES",
     "GPU performance counters are not permitted for this user (ERR_NVGPUCTRPERM)", counter_permission_fix},
    {36, "CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED",
     "the legacy event/metric API is already in use in this process", "do not mix profilers in one process"},
    {39, "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED",
     "another CUPTI client is already attached to this process (Nsight Systems or Compute, the "
     "PyTorch profiler/kineto, DCGM, another CUDA_INJECTION64_PATH library)",
     "run without the other profiler; only one CUPTI subscriber can exist per process"},
    {40, "CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES",
     "GPU performance counters are not permitted on this virtual GPU",
     "the hypervisor administrator must enable profiling (vGPU 'enable_profiling')"},
    {41, "CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED", "profiling is off in confidential-computing mode", ""},
    {42, "CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED", "CUPTI does not support CMP devices", ""},
    {43, "CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED", "counters of a MIG instance cannot be read this way",
     "profile on a full GPU, or use a driver/CUPTI that supports MIG profiling"},
    {44, "CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED", "CUPTI does not support SLI devices", ""},
    {45, "CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED", "this operation is not supported under WSL", ""},
    {999, "CUPTI_ERROR_UNKNOWN", "CUPTI failed for an unknown reason", ""},
}};

constexpr std::array<ErrorExplanation, 10> driver_table = {{
    {3, "CUDA_ERROR_NOT_INITIALIZED", "the CUDA driver was not initialised", ""},
    {34, "CUDA_ERROR_STUB_LIBRARY", "the CUDA toolkit's stub libcuda.so was loaded instead of the driver",
     "install the NVIDIA driver, or remove the toolkit's stubs/ directory from LD_LIBRARY_PATH"},
    {36, "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER", "the NVIDIA driver is older than this CUDA version needs",
     "update the NVIDIA driver"},
    {46, "CUDA_ERROR_DEVICE_UNAVAILABLE",
     "every CUDA device is busy or unavailable (exclusive-process mode, or in use)", ""},
    {100, "CUDA_ERROR_NO_DEVICE", "no CUDA device is visible",
     "check nvidia-smi, CUDA_VISIBLE_DEVICES, and (in a container) that the GPU was passed in (--gpus all)"},
    {101, "CUDA_ERROR_INVALID_DEVICE", "the device ordinal is not valid", "check CUDA_VISIBLE_DEVICES"},
    {304, "CUDA_ERROR_OPERATING_SYSTEM", "the operating system refused a CUDA driver call", ""},
    {801, "CUDA_ERROR_NOT_SUPPORTED", "the operation is not supported on this device", ""},
    {803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", "the driver library and the loaded kernel module differ in version",
     "reboot, or reload the nvidia kernel module, after a driver update"},
    {999, "CUDA_ERROR_UNKNOWN", "the CUDA driver failed for an unknown reason (often a driver/kernel module mismatch)",
     "check dmesg and that nvidia-smi works"},
}};

Capability explain(std::span<const ErrorExplanation> table, const char* family, int code, std::string_view what) {
    for (const auto& e : table)
        if (e.code == code)
            return Capability::no(std::string(what) + " failed: " + std::string(e.meaning) + " (" +
                                      std::string(e.name) + ")",
                                  std::string(e.fix));
    return Capability::no(std::string(what) + " failed: " + family + " error " + std::to_string(code));
}

}  // namespace

std::span<const ErrorExplanation> cupti_errors() { return cupti_table; }
std::span<const ErrorExplanation> cuda_driver_errors() { return driver_table; }

Capability explain_cupti_error(int code, std::string_view what) { return explain(cupti_table, "CUPTI", code, what); }
Capability explain_cuda_driver_error(int code, std::string_view what) {
    return explain(driver_table, "CUDA driver", code, what);
}

}  // namespace ceiling::collectors::gpu
