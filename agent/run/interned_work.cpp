#include "agent/run/interned_work.hpp"

#include <map>
#include <mutex>
#include <tuple>

namespace ceiling::measure {

namespace {

// Every field, so equal works share one copy.
using WorkKey = std::tuple<Precision, Engine, Device, double, double, double, bool, double>;
WorkKey key_of(const Work& w) {
    return {w.precision, w.engine,           w.device,
            w.ops,       w.compulsory_bytes, w.working_set_bytes,
            w.written_bytes.has_value(), w.written_bytes.value_or(0.0)};
}

// Node-based, so a Work's address never changes; never destroyed (as Interned's pool).
struct Pool {
    std::mutex mutex;
    std::map<WorkKey, Work> works;
};

Pool& pool() {
    static Pool* p = new Pool;
    return *p;
}

}  // namespace

InternedWork::InternedWork(const Work& w) {
    Pool& p = pool();
    const std::lock_guard lock(p.mutex);
    p_ = &p.works.try_emplace(key_of(w), w).first->second;
}

}  // namespace ceiling::measure
