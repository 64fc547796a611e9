#pragma once
// A typed view of one kernels::Buffer (2 MiB aligned, huge pages advised): the kernels'
// inputs and outputs, so streams start on a page and a cache line.

#include <cstddef>
#include <cstring>
#include <span>

#include "kernels/buffer.hpp"

namespace ceiling::kernels {

template <typename T>
class Array {
public:
    Array() = default;
    explicit Array(std::size_t n) : buffer_(n * sizeof(T)), n_(n) {}
    T* data() { return reinterpret_cast<T*>(buffer_.data()); }
    const T* data() const { return reinterpret_cast<const T*>(buffer_.data()); }
    std::size_t size() const { return n_; }
    std::size_t bytes() const { return n_ * sizeof(T); }
    T& operator[](std::size_t i) { return data()[i]; }
    const T& operator[](std::size_t i) const { return data()[i]; }
    std::span<T> span() { return {data(), n_}; }
    std::span<const T> span() const { return {data(), n_}; }
    void copy_from(const Array& other) { std::memcpy(data(), other.data(), bytes()); }

private:
    Buffer buffer_;
    std::size_t n_ = 0;
};

}  // namespace ceiling::kernels
