#include "collectors/collector.hpp"

namespace ceiling::collectors {

void CollectorSet::add(std::unique_ptr<Collector> c) {
    collectors_.push_back({std::move(c), true, false});
    probed_ = false;
}

std::vector<std::pair<std::string, Capability>> CollectorSet::probe() {
    std::vector<std::pair<std::string, Capability>> out;
    for (auto& e : collectors_) {
        Capability c = e.collector->probe();
        e.usable = c.available;
        out.emplace_back(std::string(e.collector->name()), std::move(c));
    }
    probed_ = true;
    return out;
}

void CollectorSet::start() {
    if (!probed_) probe();
    for (auto& e : collectors_) {
        if (!e.usable) continue;
        e.collector->start();
        e.running = true;
    }
}

Readings CollectorSet::stop() {
    Readings all;
    for (auto it = collectors_.rbegin(); it != collectors_.rend(); ++it) {
        if (!it->running) continue;
        it->running = false;
        all.append(it->collector->stop());
    }
    return all;
}

Readings CollectorSet::read() {
    Readings all;
    for (auto& e : collectors_)
        if (e.running) all.append(e.collector->read());
    return all;
}

}  // namespace ceiling::collectors
