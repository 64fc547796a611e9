// Machine profile JSON: round trip, refusal of another schema_version, clear errors; and
// whether a profile describes a host.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "diagnosis/machine_profile.hpp"

namespace ceiling {
namespace {

Summary s(double median) {
    Summary x;
    x.count = 5;
    x.median = x.mean = median;
    x.min = median * 0.9;
    x.max = x.p90 = x.p99 = median * 1.1;
    x.rel_spread = 0.02;
    return x;
}

MachineProfile sample() {
    MachineProfile p;
    p.created_at = "2026-11-29T21:50:49Z";
    p.duration_s = 12.5;
    p.build = {"0.1.0", "GNU 12.2.0", "RelWithDebInfo", "abc123"};
    p.host.hostname = "vm";
    p.host.cpu_vendor = "GenuineIntel";
    p.host.cpu_family = 6;
    p.host.cpu_model_number = 0xCF;
    p.host.caches = {{1, "data", 48 << 10, 64, 1, 2}, {3, "unified", 300u << 20, 64, 2, 1}};
    p.host.isa = {"avx512f", "amx_bf16"};
    p.method = {{"bandwidth_bytes", "explicit loads and stores"}};
    p.clocks = {{"512", 1, s(2.8e9)}, {"512", 2, s(2.6e9)}};
    ComputeRoof r;
    r.name = "fp32_fma512";
    r.instruction = "vfmadd231ps zmm";
    r.ops_per_s = s(177e9);
    r.theoretical_ops_per_s = 179e9;
    r.clock_hz = 2.8e9;
    ComputeRoof amx = r;
    amx.name = "bf16_amx";
    amx.precision = Precision::bf16;
    amx.engine = Engine::matrix;
    amx.ops_per_s = s(2e12);
    amx.theoretical_ops_per_s.reset();  // unknown uarch: absent, not 0
    amx.clock_hz.reset();
    p.compute_roofs = {r, amx};
    p.bandwidth_roofs = {{"DRAM", "read", 1, s(12e9), 64 << 20, 1200u << 20, false, 11e9},
                         {"DRAM", "triad", 1, s(10e9), 64 << 20, 1200u << 20, false}};
    p.sweep = {{"read", 1, 4096, s(300e9)}};
    p.latencies = {{"L1", 24 << 10, s(1.9e-9), 5.4}, {"DRAM", 1u << 30, s(1e-7), std::nullopt}};
    p.overheads.threads = 2;
    p.overheads.empty_call_s = s(2e-9);
    p.absent = {{"int8_dot256", "this CPU lacks the instructions"}};
    p.storage = StorageRoof{"/data", "nvme0n1", 256u << 20, s(2.1e9), s(1.6e9)};
    return p;
}

TEST(MachineProfile, JsonRoundTripKeepsEverything) {
    const MachineProfile p = sample();
    const nlohmann::json j = p;
    const MachineProfile q = parse_machine_profile(j.dump());
    EXPECT_EQ(nlohmann::json(q), j);
    EXPECT_EQ(q.compute_roofs[1].engine, Engine::matrix);
    EXPECT_FALSE(q.compute_roofs[1].theoretical_ops_per_s.has_value());
    EXPECT_FALSE(q.latencies[1].cycles.has_value());
    EXPECT_FALSE(q.overheads.fork_join_s.has_value());
    EXPECT_TRUE(j["compute_roofs"][1]["theoretical_ops_per_s"].is_null());
    EXPECT_EQ(j["schema_version"], machine_profile_schema_version);
    ASSERT_TRUE(q.storage);
    EXPECT_EQ(q.storage->device, "nvme0n1");
    // A profile from before the storage roof, or one that could not measure it: none.
    nlohmann::json older = j;
    older.erase("storage");
    EXPECT_FALSE(parse_machine_profile(older.dump()).storage);
}

// The rate at a plateau's far end (what a roof check repeats) is kept; a profile from before
// it was kept reads 0 there, and still loads.
TEST(MachineProfile, APlateausFarEndIsKeptAndOptional) {
    nlohmann::json j = sample();
    EXPECT_EQ(j["bandwidth_roofs"][0]["far_end_bytes_per_s"], 11e9);
    EXPECT_DOUBLE_EQ(parse_machine_profile(j.dump()).bandwidth_roofs[0].far_end_bytes_per_s, 11e9);
    j["bandwidth_roofs"][0].erase("far_end_bytes_per_s");
    EXPECT_DOUBLE_EQ(parse_machine_profile(j.dump()).bandwidth_roofs[0].far_end_bytes_per_s, 0);
    j["bandwidth_roofs"][0].erase("level");  // the rest stays required
    EXPECT_THROW(parse_machine_profile(j.dump()), std::invalid_argument);
}

// Whether a theoretical value's count came from the measurement is kept; profiles written
// before it was kept read as the table's.
TEST(MachineProfile, TheoryFromTheMeasurementIsKept) {
    MachineProfile p = sample();
    p.compute_roofs[0].theoretical_from_measurement = true;
    nlohmann::json j = p;
    EXPECT_EQ(j["compute_roofs"][0]["theoretical_from_measurement"], true);
    EXPECT_TRUE(parse_machine_profile(j.dump()).compute_roofs[0].theoretical_from_measurement);
    EXPECT_FALSE(parse_machine_profile(j.dump()).compute_roofs[1].theoretical_from_measurement);
    j["compute_roofs"][0].erase("theoretical_from_measurement");
    EXPECT_FALSE(parse_machine_profile(j.dump()).compute_roofs[0].theoretical_from_measurement);
}

// What judging reads: everything but the working-set sweep, which is skipped while parsing,
// and a profile without one is written without the key (a run record's copy).
TEST(MachineProfile, WithoutTheSweepKeepsEverythingElse) {
    const MachineProfile p = sample();
    const nlohmann::json j = p;
    ASSERT_TRUE(j.contains("sweep"));
    const MachineProfile q = parse_machine_profile(j.dump(), ProfileParts::without_sweep);
    EXPECT_TRUE(q.sweep.empty());
    nlohmann::json expected = j;
    expected.erase("sweep");
    EXPECT_EQ(nlohmann::json(q), expected);
    // Read back as it is written, with nothing missing.
    EXPECT_EQ(nlohmann::json(parse_machine_profile(nlohmann::json(q).dump())), expected);
    // Only the top-level key: a nested "sweep" elsewhere stays.
    nlohmann::json nested = j;
    nested["method"]["sweep"] = "working sets 4 KiB to 4x LLC";
    EXPECT_EQ(parse_machine_profile(nested.dump(), ProfileParts::without_sweep).method.at("sweep"),
              "working sets 4 KiB to 4x LLC");
}

TEST(MachineProfile, RefusesAnotherSchemaVersion) {
    nlohmann::json j = sample();
    j["schema_version"] = machine_profile_schema_version + 1;
    try {
        parse_machine_profile(j.dump());
        FAIL() << "accepted a newer schema";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("schema_version"), std::string::npos) << e.what();
    }
    j.erase("schema_version");
    EXPECT_THROW(parse_machine_profile(j.dump()), std::invalid_argument);
}

TEST(MachineProfile, MalformedInputIsAnErrorNamingTheProblem) {
    EXPECT_THROW(parse_machine_profile("{not json"), std::invalid_argument);
    EXPECT_THROW(parse_machine_profile("[1,2]"), std::invalid_argument);
    nlohmann::json j = sample();
    j.erase("compute_roofs");
    try {
        parse_machine_profile(j.dump());
        FAIL();
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("compute_roofs"), std::string::npos) << e.what();
    }
    j = sample();
    j["compute_roofs"][0]["precision"] = "fp128";
    EXPECT_THROW(parse_machine_profile(j.dump()), std::invalid_argument);
}

TEST(MachineProfile, LookupsPickTheBestMatchingRoof) {
    const MachineProfile p = sample();
    ASSERT_NE(p.best_compute_roof(Precision::fp32, Engine::vector, 1), nullptr);
    EXPECT_EQ(p.best_compute_roof(Precision::fp32, Engine::vector, 1)->name, "fp32_fma512");
    EXPECT_EQ(p.best_compute_roof(Precision::bf16, Engine::matrix, 1)->name, "bf16_amx");
    EXPECT_EQ(p.best_compute_roof(Precision::fp32, Engine::vector, 2), nullptr);
    EXPECT_EQ(p.best_bandwidth_roof("DRAM", 1)->kernel, "read");
    EXPECT_EQ(p.best_bandwidth_roof("L2", 1), nullptr);
    EXPECT_DOUBLE_EQ(p.clock("512", 2)->hz.median, 2.6e9);
    EXPECT_EQ(p.clock("256", 1), nullptr);
    EXPECT_EQ(p.host.last_level_cache_bytes(), 300u << 20);
    EXPECT_TRUE(p.host.has_isa("amx_bf16"));
}

// A profile describes the host with the same CPU (vendor, family, model, brand), instruction
// sets and logical CPUs; the hostname, OS, memory and stepping may differ.
TEST(MachineProfile, OtherMachineSaysWhichCpuDiffers) {
    const HostInfo measured = sample().host;
    HostInfo here = measured;
    here.hostname = "elsewhere";
    here.cpu_stepping = measured.cpu_stepping + 1;
    here.memory_bytes = 1 << 30;
    EXPECT_EQ(other_machine(measured, here), "");

    here = measured;
    here.cpu_vendor = "AuthenticAMD";
    here.cpu_family = 25;
    here.cpu_model_number = 17;
    here.cpu_model = "AMD EPYC";
    const std::string cpu = other_machine(measured, here);
    EXPECT_NE(cpu.find("family 6 model 207"), std::string::npos) << cpu;
    EXPECT_NE(cpu.find("this host has AMD EPYC (family 25 model 17"), std::string::npos) << cpu;

    here = measured;
    here.logical_cpus = measured.logical_cpus + 2;  // the VM resized: its all-core roofs differ
    EXPECT_NE(other_machine(measured, here), "");

    here = measured;
    here.isa = {"avx512f", "avx512_vnni"};  // AMX hidden by the hypervisor
    const std::string isa = other_machine(measured, here);
    EXPECT_NE(isa.find("amx_bf16 there only; avx512_vnni here only"), std::string::npos) << isa;
}

}  // namespace
}  // namespace ceiling
