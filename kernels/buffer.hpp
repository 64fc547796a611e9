#pragma once
// Large aligned buffers for bandwidth and latency kernels: 2 MiB aligned and advised to
// use transparent huge pages, so TLB misses do not masquerade as memory latency.

#include <cstddef>
#include <memory>

namespace ceiling::kernels {

class Buffer {
public:
    Buffer() = default;
    // Throws std::bad_alloc when the memory cannot be had. Pages are not touched.
    explicit Buffer(std::size_t bytes);
    std::byte* data() const { return data_.get(); }
    float* floats() const { return reinterpret_cast<float*>(data_.get()); }
    std::size_t bytes() const { return bytes_; }

private:
    struct Free {
        void operator()(std::byte* p) const;
    };
    std::unique_ptr<std::byte, Free> data_;
    std::size_t bytes_ = 0;
};

}  // namespace ceiling::kernels
