#include "diagnosis/thresholds.hpp"

#include <array>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "diagnosis/units.hpp"

namespace ceiling {
namespace {

using T = Thresholds;
const std::array<ThresholdField, 37> fields = {{
    {"far", &T::far, "fraction of a roof below which a kernel is far from it"},
    {"near_roof", &T::near_roof, "fraction of a roof at or above which it is the bound"},
    {"done", &T::done, "fraction of a roof at or above which a kernel is done"},
    {"above_roof_tolerance", &T::above_roof_tolerance,
     "margin above a roof still read as at the roof (noise)"},
    {"unstable_spread", &T::unstable_spread,
     "relative spread (p90 - p10) / median above which a distribution is unstable"},
    {"model_share", &T::model_share,
     "share of wall time in model regions below which it is not the model"},
    {"capacity", &T::capacity, "footprint / capacity at or above which it is capacity bound"},
    {"cpu_utilisation", &T::cpu_utilisation,
     "busy CPU / (wall x cores used) below which the cores are idle (waiting or queueing)"},
    {"voluntary_switch_share", &T::voluntary_switch_share,
     "voluntary / all context switches at or above which idle cores mean waiting, below which "
     "queueing for a CPU"},
    {"thread_concurrency", &T::thread_concurrency,
     "busy cores over the threads that shared its CPU time (at most the CPUs it could use) "
     "below which its threads took turns rather than ran at once"},
    {"involuntary_switches_per_cpu_s", &T::involuntary_switches_per_cpu_s,
     "involuntary context switches per second of its CPU time, less ceiling's own wakeups "
     "in its share of the runnable threads, at or above which (most switches being involuntary) it "
     "was preempted "
     "by other work (contention)"},
    {"steal_share", &T::steal_share,
     "share of the host's CPU time stolen by the hypervisor at or above which it is contention"},
    {"run_queue_per_cpu", &T::run_queue_per_cpu,
     "runnable threads per CPU on the host at or above which the CPUs were oversubscribed"},
    {"held_cores_ratio", &T::held_cores_ratio,
     "a region's peak busy cores (held at once) over its mean busy cores at or above which it "
     "is judged against the cores it held, the idle part read as distance from the roof"},
    {"others_run_queue_per_cpu", &T::others_run_queue_per_cpu,
     "other work's runnable threads per CPU (the host's less the program's) below which an "
     "oversubscribed run queue and its preemptions are the program's own threads, not "
     "contention"},
    {"fault_churn_ratio", &T::fault_churn_ratio,
     "page faults per page of the peak footprint at or above which memory is touched afresh "
     "over and over"},
    {"system_time_share", &T::system_time_share,
     "system / (user + system) CPU time at or above which the kernel dominates"},
    {"kernel_time_share", &T::kernel_time_share,
     "system / (user + system) CPU time at or above which, its cores busy, the kernel bounds "
     "it (not the model, kernel bound)"},
    {"io_calls_per_s", &T::io_calls_per_s,
     "read and write calls per second of wall time at or above which, small, their number is "
     "said"},
    {"small_io_call_bytes", &T::small_io_call_bytes,
     "mean bytes per read or write call below which the calls are small (unbuffered)"},
    {"io_calls_min", &T::io_calls_min,
     "read and write calls per run below which their rate is not judged"},
    {"page_faults_min", &T::page_faults_min,
     "page faults per run below which their rate is not judged (a short program's start-up)"},
    {"system_time_min_s", &T::system_time_min_s,
     "seconds in the kernel per run below which its share is not judged (a process's start-up)"},
    {"context_switches_per_s", &T::context_switches_per_s,
     "context switches per second of wall time"},
    {"page_faults_per_s", &T::page_faults_per_s, "page faults per second of wall time"},
    {"major_page_faults_per_s", &T::major_page_faults_per_s, "major (disk) page faults per second"},
    {"tasks_started_per_s", &T::tasks_started_per_s,
     "threads and processes started on the host per second of wall time"},
    {"tasks_started_min", &T::tasks_started_min,
     "threads and processes started per run below which their rate is not judged"},
    {"major_page_faults_min", &T::major_page_faults_min,
     "major page faults per run below which their rate is not judged (a few libraries paged in)"},
    {"storage_wait_threads", &T::storage_wait_threads,
     "threads blocked on storage (flushes, file I/O) on average over the wall time, of a "
     "program whose own code (user time) left its cores idle, at or above which it is I/O "
     "bound (it waits on storage)"},
    {"tiny_op_s", &T::tiny_op_s,
     "seconds per op of a call made of ops (a PyTorch model's), less ceiling's recording, "
     "below which its ops are tiny (a framework's per-op cost is most of their time)"},
    {"queued_threads", &T::queued_threads,
     "threads of a region's process queued for a CPU on average while it was open (and at "
     "least its busy cores), at or above which it waited for a CPU"},
    {"outside_wait_threads", &T::outside_wait_threads,
     "threads blocked in sleeps, on sockets or in event loops on average over the wall time, of "
     "a program whose own code (user time) left its cores idle, at or above which it waits on "
     "something outside its work (not the model)"},
    {"device_wait_share", &T::device_wait_share, "share of wall time waiting for a device"},
    {"device_copy_share", &T::device_copy_share, "share of wall time copying to or from a device"},
    {"cpu_quota_throttled_share", &T::cpu_quota_throttled_share,
     "share of the control group's CPU-quota periods in which it ran out of quota, at or above "
     "which the quota (a container's CPU limit) bounds the process"},
    {"stop_margin", &T::stop_margin,
     "smallest budget margin (budget - actual) / budget at which optimising stops"},
}};

std::string num(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

// Fields that are fractions of something and so lie in (0, 1].
constexpr std::array<double T::*, 12> shares = {
    &T::model_share,       &T::thread_concurrency,        &T::capacity,
    &T::cpu_utilisation,   &T::system_time_share,         &T::device_wait_share,
    &T::device_copy_share, &T::voluntary_switch_share,    &T::steal_share,
    &T::stop_margin,       &T::cpu_quota_throttled_share, &T::kernel_time_share};
constexpr std::array<double T::*, 17> rates = {&T::queued_threads,
                                               &T::tiny_op_s,
                                               &T::tasks_started_per_s,
                                               &T::tasks_started_min,
                                               &T::io_calls_per_s,
                                               &T::small_io_call_bytes,
                                               &T::held_cores_ratio,
                                               &T::storage_wait_threads,
                                               &T::outside_wait_threads,
                                               &T::context_switches_per_s,
                                               &T::page_faults_per_s,
                                               &T::major_page_faults_per_s,
                                               &T::involuntary_switches_per_cpu_s,
                                               &T::run_queue_per_cpu,
                                               &T::others_run_queue_per_cpu,
                                               &T::fault_churn_ratio,
                                               &T::major_page_faults_min};

std::string_view name_of(double T::*m) {
    for (const auto& f : fields)
        if (f.member == m) return f.name;
    return "?";
}

}  // namespace

std::span<const ThresholdField> threshold_fields() { return fields; }

void validate(const Thresholds& t) {
    for (const auto& f : fields) {
        if (!std::isfinite(t.*f.member)) {
            throw std::invalid_argument("threshold " + std::string(f.name) +
                                        " is not a finite number");
        }
    }
    // The roof fractions are checked as one chain, so the message shows the whole order.
    if (!(t.far > 0 && t.far < t.near_roof && t.near_roof <= t.done && t.done <= 1)) {
        throw std::invalid_argument(
            "thresholds out of order: need 0 < far < near_roof <= done <= 1, got far " +
            num(t.far) + ", near_roof " + num(t.near_roof) + ", done " + num(t.done));
    }
    if (!(t.above_roof_tolerance >= 0 && t.above_roof_tolerance < 1)) {
        throw std::invalid_argument("threshold above_roof_tolerance must lie in [0, 1), got " +
                                    num(t.above_roof_tolerance));
    }
    if (!(t.unstable_spread > 0)) {
        throw std::invalid_argument("threshold unstable_spread must be positive, got " +
                                    num(t.unstable_spread));
    }
    for (auto m : shares) {
        if (!(t.*m > 0 && t.*m <= 1)) {
            throw std::invalid_argument("threshold " + std::string(name_of(m)) +
                                        " must lie in (0, 1], got " + num(t.*m));
        }
    }
    for (auto m : rates) {
        if (!(t.*m > 0)) {
            throw std::invalid_argument("threshold " + std::string(name_of(m)) +
                                        " must be positive, got " + num(t.*m));
        }
    }
}

void set_threshold(Thresholds& t, std::string_view name, double value) {
    for (const auto& f : fields) {
        if (f.name == name) {
            t.*f.member = value;
            return;
        }
    }
    std::string known;
    for (const auto& f : fields) known += (known.empty() ? "" : ", ") + std::string(f.name);
    throw std::invalid_argument("unknown threshold '" + std::string(name) + "' (known: " + known +
                                ")");
}

void apply_threshold_assignment(Thresholds& t, std::string_view assignment) {
    const auto eq = assignment.find('=');
    if (eq == std::string_view::npos || eq == 0) {
        throw std::invalid_argument("threshold '" + std::string(assignment) +
                                    "': expected NAME=VALUE");
    }
    const auto value = assignment.substr(eq + 1);
    double v = 0;
    try {
        v = parse_count(value);
    } catch (const std::invalid_argument& e) {
        throw std::invalid_argument("threshold " + std::string(assignment.substr(0, eq)) + ": " +
                                    e.what());
    }
    set_threshold(t, assignment.substr(0, eq), v);
}

Thresholds parse_thresholds(const std::string& json_text, const Thresholds& base) {
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(json_text);
    } catch (const nlohmann::json::exception& e) {  // also out_of_range: a number beyond double
        throw std::invalid_argument(std::string("not valid JSON: ") + e.what());
    }
    Thresholds t = base;
    if (!j.is_object()) throw std::invalid_argument("thresholds must be a JSON object");
    for (const auto& [key, value] : j.items()) {
        if (!value.is_number())
            throw std::invalid_argument("threshold " + key + " must be a number");
        set_threshold(t, key, value.get<double>());
    }
    validate(t);
    return t;
}

void to_json(nlohmann::json& j, const Thresholds& t) {
    j = nlohmann::json::object();
    for (const auto& f : fields) j[std::string(f.name)] = t.*f.member;
}

void from_json(const nlohmann::json& j, Thresholds& t) { t = parse_thresholds(j.dump()); }

}  // namespace ceiling
