#include "diagnosis/machine_profile.hpp"

#include <algorithm>
#include <stdexcept>

#include "diagnosis/json_support.hpp"
#include "diagnosis/quantity_domains.hpp"

namespace ceiling {

std::uint64_t HostInfo::last_level_cache_bytes() const {
    const CacheInfo* best = nullptr;
    for (const auto& c : caches)
        if (c.type != "instruction" && (!best || c.level > best->level)) best = &c;
    return best ? best->size_bytes : 0;
}

const CacheInfo* HostInfo::cache(int level) const {
    for (const auto& c : caches)
        if (c.level == level && c.type != "instruction") return &c;
    return nullptr;
}

bool HostInfo::has_isa(const std::string& feature) const {
    return std::find(isa.begin(), isa.end(), feature) != isa.end();
}

namespace {

std::string describe_cpu(const HostInfo& h) {
    return (h.cpu_model.empty() ? h.cpu_vendor : h.cpu_model) + " (family " +
           std::to_string(h.cpu_family) + " model " + std::to_string(h.cpu_model_number) + ", " +
           std::to_string(h.logical_cpus) + " logical CPUs)";
}

// The features in `a` that `b` lacks, space-separated.
std::string missing_from(const std::vector<std::string>& a, const HostInfo& b) {
    std::string out;
    for (const auto& f : a)
        if (!b.has_isa(f)) out += (out.empty() ? "" : " ") + f;
    return out;
}

}  // namespace

std::string other_machine(const HostInfo& measured, const HostInfo& here) {
    if (measured.cpu_vendor != here.cpu_vendor || measured.cpu_family != here.cpu_family ||
        measured.cpu_model_number != here.cpu_model_number ||
        measured.cpu_model != here.cpu_model || measured.logical_cpus != here.logical_cpus)
        return "measured on " + describe_cpu(measured) + "; this host has " + describe_cpu(here);
    const std::string lost = missing_from(measured.isa, here),
                      gained = missing_from(here.isa, measured);
    if (lost.empty() && gained.empty()) return {};
    return "measured on " + describe_cpu(measured) + " with other instruction sets (" +
           (lost.empty() ? "" : lost + " there only") +
           (lost.empty() || gained.empty() ? "" : "; ") +
           (gained.empty() ? "" : gained + " here only") + ")";
}

const ComputeRoof* MachineProfile::best_compute_roof(Precision p, Engine e, int threads) const {
    const ComputeRoof* best = nullptr;
    for (const auto& r : compute_roofs)
        if (r.precision == p && r.engine == e && r.threads == threads &&
            (!best || r.ops_per_s.median > best->ops_per_s.median))
            best = &r;
    return best;
}

const BandwidthRoof* MachineProfile::best_bandwidth_roof(const std::string& level,
                                                         int threads) const {
    const BandwidthRoof* best = nullptr;
    for (const auto& r : bandwidth_roofs)
        if (r.level == level && r.threads == threads &&
            (!best || r.bytes_per_s.median > best->bytes_per_s.median))
            best = &r;
    return best;
}

const ClockMeasurement* MachineProfile::clock(const std::string& width, int threads) const {
    for (const auto& c : clocks)
        if (c.width == width && c.threads == threads) return &c;
    return nullptr;
}

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(CacheInfo, level, type, size_bytes, line_bytes, shared_by_cpus,
                                   instances)
// WITH_DEFAULT: profiles saved before cores_used and the roofs' clock fields existed still
// load; those fields then read as unknown.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(HostInfo, hostname, os, cpu_vendor, cpu_model,
                                                cpu_family, cpu_model_number, cpu_stepping,
                                                microarchitecture, physical_cores, logical_cpus,
                                                threads_used, cores_used, numa_nodes, memory_bytes,
                                                hypervisor, caches, isa)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(BuildInfo, version, compiler, build_type, git_commit)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ClockMeasurement, width, threads, hz)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ComputeRoof, name, precision, engine, instruction,
                                                threads, ops_per_s, theoretical_ops_per_s, clock_hz,
                                                clock_chain, clock_density,
                                                measured_instructions_per_cycle,
                                                instructions_per_cycle, cores, theoretical_source,
                                                theoretical_from_measurement, noisy)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(SweepPoint, kernel, threads, working_set_bytes, bytes_per_s)
// far_end_bytes_per_s is optional (profiles before it kept it read 0); the rest is required.
void to_json(nlohmann::json& j, const BandwidthRoof& r) {
    j = {{"level", r.level},
         {"kernel", r.kernel},
         {"threads", r.threads},
         {"bytes_per_s", r.bytes_per_s},
         {"min_working_set_bytes", r.min_working_set_bytes},
         {"max_working_set_bytes", r.max_working_set_bytes},
         {"far_end_bytes_per_s", r.far_end_bytes_per_s},
         {"noisy", r.noisy}};
}
void from_json(const nlohmann::json& j, BandwidthRoof& r) {
    j.at("level").get_to(r.level);
    j.at("kernel").get_to(r.kernel);
    j.at("threads").get_to(r.threads);
    j.at("bytes_per_s").get_to(r.bytes_per_s);
    j.at("min_working_set_bytes").get_to(r.min_working_set_bytes);
    j.at("max_working_set_bytes").get_to(r.max_working_set_bytes);
    r.far_end_bytes_per_s = j.value("far_end_bytes_per_s", 0.0);
    j.at("noisy").get_to(r.noisy);
}
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(LatencyMeasurement, level, working_set_bytes, seconds, cycles)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(DispatchOverheads, threads, fork_join_s, empty_call_s)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Absence, what, reason)

// --- GPU (issue 7) ---
const GpuComputeRoof* GpuProfile::best_compute_roof(Precision p, Engine e) const {
    const GpuComputeRoof* best = nullptr;
    for (const auto& r : compute_roofs)
        if (r.precision == p && r.engine == e && !r.library &&
            (!best || r.ops_per_s.median > best->ops_per_s.median))
            best = &r;
    return best;
}

const GpuBandwidthRoof* GpuProfile::best_bandwidth_roof(const std::string& level) const {
    const GpuBandwidthRoof* best = nullptr;
    for (const auto& r : bandwidth_roofs)
        if (r.level == level && !r.library &&
            (!best || r.bytes_per_s.median > best->bytes_per_s.median))
            best = &r;
    return best;
}

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(GpuComputeRoof, name, precision, engine, library, method,
                                   ops_per_s, theoretical_ops_per_s, theoretical_basis, noisy)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(GpuBandwidthRoof, name, level, kernel, library, method,
                                   working_set_bytes, bytes_per_s, theoretical_bytes_per_s,
                                   theoretical_basis, noisy)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(GpuLatency, name, method, seconds)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(GpuProfile, index, name, pci_bus_id, compute_capability_major,
                                   compute_capability_minor, multiprocessors, memory_bytes,
                                   l2_bytes, sm_clock_hz, memory_clock_hz, memory_bus_bits, driver,
                                   cuda_runtime, compute_roofs, bandwidth_roofs, latencies)
// --- end GPU ---
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(StorageRoof, directory, device, file_bytes, read_bytes_per_s,
                                   write_bytes_per_s)

void to_json(nlohmann::json& j, const MachineProfile& p) {
    j = {{"schema_version", p.schema_version},
         {"created_at", p.created_at},
         {"duration_s", p.duration_s},
         {"quick", p.quick},
         {"build", p.build},
         {"host", p.host},
         {"method", p.method},
         {"clocks", p.clocks},
         {"compute_roofs", p.compute_roofs},
         {"bandwidth_roofs", p.bandwidth_roofs},
         {"latencies", p.latencies},
         {"overheads", p.overheads},
         {"absent", p.absent},
         {"gpus", p.gpus}};
    if (!p.sweep.empty()) j["sweep"] = p.sweep;
    if (p.storage) j["storage"] = *p.storage;
}

void from_json(const nlohmann::json& j, MachineProfile& p) {
    if (!j.is_object()) throw std::invalid_argument("a machine profile must be a JSON object");
    const auto version = j.find("schema_version");
    if (version == j.end() || !version->is_number_integer())
        throw std::invalid_argument("not a machine profile: no integer schema_version");
    if (version->get<int>() != machine_profile_schema_version)
        throw std::invalid_argument("machine profile schema_version " +
                                    std::to_string(version->get<int>()) + ", this ceiling reads " +
                                    std::to_string(machine_profile_schema_version) +
                                    ": run `ceiling machine` again");
    try {
        p.schema_version = version->get<int>();
        get_field(j, "created_at", p.created_at);
        get_field(j, "duration_s", p.duration_s);
        get_field(j, "quick", p.quick);
        get_field(j, "build", p.build);
        get_field(j, "host", p.host);
        get_field(j, "method", p.method);
        get_field(j, "clocks", p.clocks);
        get_field(j, "compute_roofs", p.compute_roofs);
        get_field(j, "bandwidth_roofs", p.bandwidth_roofs);
        if (j.contains("sweep")) get_field(j, "sweep", p.sweep);  // absent in a record's copy
        get_field(j, "latencies", p.latencies);
        get_field(j, "overheads", p.overheads);
        get_field(j, "absent", p.absent);
        if (j.contains("gpus")) get_field(j, "gpus", p.gpus);  // absent in profiles before issue 7
        get_optional(j, "storage", p.storage);  // absent: not measured, or an older profile
    } catch (const std::invalid_argument& e) {
        // FieldError names the member by its path ("compute_roofs[0].threads: type must be ...").
        throw std::invalid_argument(std::string("malformed machine profile: ") + e.what());
    } catch (const nlohmann::json::exception& e) {
        throw std::invalid_argument(std::string("malformed machine profile: ") + json_detail::library_words(e));
    }
}

MachineProfile parse_machine_profile(const std::string& text, ProfileParts parts) {
    nlohmann::json j;
    // Discards the top-level "sweep" while parsing (no tree built for it).
    const nlohmann::json::parser_callback_t skip_sweep =
        [](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
            return !(depth == 1 && event == nlohmann::json::parse_event_t::key && parsed == "sweep");
        };
    try {
        j = parts == ProfileParts::without_sweep ? nlohmann::json::parse(text, skip_sweep)
                                                 : nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {  // also out_of_range: a number beyond double
        throw std::invalid_argument(std::string("not valid JSON: ") + e.what());
    }
    if (j.is_object() && j.contains("kind") && j.contains("executions"))
        throw std::invalid_argument("this is a run record, not a machine profile (`ceiling report FILE` reads it)");
    if (const auto bad = find_out_of_domain(j)) throw std::invalid_argument(*bad);
    return j.get<MachineProfile>();
}

}  // namespace ceiling
