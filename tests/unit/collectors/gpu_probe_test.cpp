// The GPU probe and the error table: what `ceiling doctor` says with no driver, no device,
// counters restricted to administrators, another CUPTI subscriber. The driver is a fake
// DriverApi and /proc a temporary tree.

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include "collectors/cupti/cupti_errors.hpp"
#include "collectors/cupti/gpu_probe.hpp"

namespace ceiling::collectors::gpu {
namespace {

namespace fs = std::filesystem;

class FakeRoot {
public:
    FakeRoot() : dir_(fs::temp_directory_path() / ("ceiling-gpu-probe-" + std::to_string(::getpid()) + "-" +
                                                    std::to_string(counter_++))) {
        fs::create_directories(dir_);
    }
    ~FakeRoot() { fs::remove_all(dir_); }
    void write(const std::string& path, const std::string& text) {
        const auto p = dir_ / path.substr(1);
        fs::create_directories(p.parent_path());
        std::ofstream(p) << text;
    }
    FsRoot root() const { return FsRoot(dir_); }

private:
    static inline int counter_ = 0;
    fs::path dir_;
};

// A driver with one H200.
int ok_init(unsigned) { return 0; }
int version_13(int* v) {
    *v = 13000;
    return 0;
}
int one_device(int* n) {
    *n = 1;
    return 0;
}
int no_devices(int* n) {
    *n = 0;
    return 0;
}
int get_device(int* d, int i) {
    *d = i;
    return 0;
}
int device_name(char* name, int len, int) {
    std::strncpy(name, "NVIDIA H200", static_cast<std::size_t>(len));
    return 0;
}
int attribute(int* v, int attr, int) {
    *v = attr == 75 ? 9 : attr == 76 ? 0 : attr == 16 ? 132 : 0;
    return 0;
}
int total_mem(std::size_t* b, int) {
    *b = 150'754'820'096ull;
    return 0;
}
int init_no_device(unsigned) { return 100; }  // CUDA_ERROR_NO_DEVICE

DriverApi h200_driver() {
    DriverApi d;
    d.init = ok_init;
    d.driver_get_version = version_13;
    d.device_get_count = one_device;
    d.device_get = get_device;
    d.device_get_name = device_name;
    d.device_get_attribute = attribute;
    d.device_total_mem = total_mem;
    return d;
}

const char* status_without_caps = "Name:\tceiling\nCapEff:\t0000000000000000\n";
const char* status_root = "Name:\tceiling\nCapEff:\t000001ffffffffff\n";

TEST(GpuProbe, NoDriverSaysSoAndHowToFix) {
    DriverApi none;
    none.load_error = "no NVIDIA driver: libcuda.so.1 not found";
    FakeRoot fake;
    const auto p = probe_gpu(none, fake.root());
    EXPECT_FALSE(p.driver.available);
    EXPECT_NE(p.driver.reason.find("no NVIDIA driver"), std::string::npos);
    EXPECT_FALSE(p.driver.fix.empty());
    EXPECT_FALSE(p.devices.available);
    EXPECT_FALSE(p.activity.available);
    EXPECT_FALSE(p.counters.available);
    EXPECT_TRUE(p.device_list.empty());
}

TEST(GpuProbe, DriverWithoutDevice) {
    auto d = h200_driver();
    d.init = init_no_device;
    FakeRoot fake;
    const auto p = probe_gpu(d, fake.root());
    EXPECT_FALSE(p.driver.available);
    EXPECT_NE(p.driver.reason.find("CUDA_ERROR_NO_DEVICE"), std::string::npos);
    EXPECT_EQ(p.devices.reason, "no CUDA device");
    EXPECT_FALSE(p.activity.available);

    auto zero = h200_driver();
    zero.device_get_count = no_devices;
    const auto q = probe_gpu(zero, fake.root());
    EXPECT_TRUE(q.driver.available);
    EXPECT_FALSE(q.devices.available);
}

TEST(GpuProbe, DevicesAndDriverVersion) {
    FakeRoot fake;
    fake.write("/proc/driver/nvidia/version",
               "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.03  Thu Oct 2 2025\n");
    fake.write("/proc/self/status", status_root);
    const auto p = probe_gpu(h200_driver(), fake.root());
    EXPECT_TRUE(p.driver.available);
    EXPECT_EQ(p.driver_version, "580.159.03");
    EXPECT_EQ(p.driver.reason, "driver 580.159.03, CUDA 13.0");
    ASSERT_EQ(p.device_list.size(), 1u);
    EXPECT_EQ(p.device_list[0].name, "NVIDIA H200");
    EXPECT_EQ(p.device_list[0].compute_capability_major, 9);
    EXPECT_EQ(p.device_list[0].multiprocessors, 132);
    EXPECT_EQ(p.devices.reason, "1 device");
    EXPECT_EQ(p.cupti.available, built_with_cupti());
    EXPECT_EQ(p.activity.available, built_with_cupti());
}

TEST(GpuProbe, CountersRestrictedToAdministrators) {
    if (!built_with_cupti()) GTEST_SKIP() << "not built with CUPTI: counters are unavailable for that reason first";
    FakeRoot fake;
    fake.write("/proc/driver/nvidia/params", "ResmanDebugLevel: 4294967295\nRmProfilingAdminOnly: 1\n");
    fake.write("/proc/self/status", status_without_caps);
    const auto p = probe_gpu(h200_driver(), fake.root());
    EXPECT_FALSE(p.counters.available);
    EXPECT_NE(p.counters.reason.find("ERR_NVGPUCTRPERM"), std::string::npos);
    EXPECT_NE(p.counters.fix.find("NVreg_RestrictProfilingToAdminUsers=0"), std::string::npos);
    EXPECT_NE(p.counters.fix.find("CAP_SYS_ADMIN"), std::string::npos);

    FakeRoot root_user;
    root_user.write("/proc/driver/nvidia/params", "RmProfilingAdminOnly: 1\n");
    root_user.write("/proc/self/status", status_root);
    EXPECT_TRUE(probe_gpu(h200_driver(), root_user.root()).counters.available);

    FakeRoot open;
    open.write("/proc/driver/nvidia/params", "RmProfilingAdminOnly: 0\n");
    open.write("/proc/self/status", status_without_caps);
    const auto q = probe_gpu(h200_driver(), open.root());
    EXPECT_TRUE(q.counters.available);
    EXPECT_NE(q.counters.reason.find("RmProfilingAdminOnly=0"), std::string::npos);
}

TEST(GpuProbe, CudaVersionString) {
    EXPECT_EQ(cuda_version_string(13000), "13.0");
    EXPECT_EQ(cuda_version_string(12080), "12.8");
}

TEST(CuptiErrors, MessagesUsersMeet) {
    const auto perm = explain_cupti_error(cupti_insufficient_privileges, "cuptiRangeProfilerStart");
    EXPECT_FALSE(perm.available);
    EXPECT_EQ(perm.reason.rfind("cuptiRangeProfilerStart failed: ", 0), 0u);
    EXPECT_NE(perm.reason.find("CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"), std::string::npos);
    EXPECT_NE(perm.fix.find("NVreg_RestrictProfilingToAdminUsers"), std::string::npos);

    const auto other = explain_cupti_error(cupti_multiple_subscribers, "cuptiSubscribe");
    EXPECT_NE(other.reason.find("another CUPTI client"), std::string::npos);
    EXPECT_FALSE(other.fix.empty());

    EXPECT_NE(explain_cuda_driver_error(cuda_error_no_device, "cuInit").reason.find("no CUDA device"),
              std::string::npos);
    EXPECT_NE(explain_cuda_driver_error(34, "cuInit").reason.find("stub"), std::string::npos);
    // Unknown codes still say which call and which code.
    EXPECT_EQ(explain_cupti_error(12345, "cuptiX").reason, "cuptiX failed: CUPTI error 12345");
}

TEST(CuptiErrors, TablesHaveUniqueCodesAndNames) {
    for (auto table : {cupti_errors(), cuda_driver_errors()}) {
        std::set<int> codes;
        std::set<std::string_view> names;
        for (const auto& e : table) {
            EXPECT_TRUE(codes.insert(e.code).second) << e.name;
            EXPECT_TRUE(names.insert(e.name).second) << e.name;
            EXPECT_FALSE(e.meaning.empty()) << e.name;
        }
    }
}

// `ceiling run` asks the kernel module's /proc entries, not the driver, why a program left no
// GPU activity: no module, a module listing no GPU, a module listing two.
TEST(GpuPresence, ComesFromTheKernelModulesProcEntriesAlone) {
    FakeRoot none;
    EXPECT_FALSE(gpu_presence(none.root()).kernel_module);
    EXPECT_EQ(gpu_presence(none.root()).gpus, 0);

    FakeRoot module_only;
    module_only.write("/proc/driver/nvidia/version", "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.03\n");
    EXPECT_TRUE(gpu_presence(module_only.root()).kernel_module);
    EXPECT_EQ(gpu_presence(module_only.root()).gpus, 0);

    FakeRoot two;
    two.write("/proc/driver/nvidia/version", "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.03\n");
    two.write("/proc/driver/nvidia/gpus/0000:18:00.0/information", "Model: NVIDIA H200\n");
    two.write("/proc/driver/nvidia/gpus/0000:2a:00.0/information", "Model: NVIDIA H200\n");
    EXPECT_TRUE(gpu_presence(two.root()).kernel_module);
    EXPECT_EQ(gpu_presence(two.root()).gpus, 2);
}

}  // namespace
}  // namespace ceiling::collectors::gpu
