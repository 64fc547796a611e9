// A region instance's declared work as one pointer to an interned, immortal Work (as
// Interned does for strings): 8 bytes an instance, not std::optional<Work>'s 64, and the
// instance stays plain bytes. One Work per distinct declared work, made where a declared
// name is first resolved. Reads as std::optional<Work> does; built from one, or a Work.
#pragma once

#include <optional>

#include "diagnosis/work.hpp"

namespace ceiling::measure {

class InternedWork {
  public:
    InternedWork() = default;
    InternedWork(std::nullopt_t) {}
    InternedWork(const Work& w);
    InternedWork(const std::optional<Work>& w) : InternedWork() {
        if (w) *this = InternedWork(*w);
    }

    bool has_value() const { return p_ != nullptr; }
    explicit operator bool() const { return has_value(); }
    const Work& operator*() const { return *p_; }
    const Work* operator->() const { return p_; }
    operator std::optional<Work>() const { return p_ ? std::optional<Work>(*p_) : std::nullopt; }

  private:
    const Work* p_ = nullptr;
};

}  // namespace ceiling::measure
