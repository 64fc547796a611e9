#include "kernels/buffer.hpp"

#include <sys/mman.h>

#include <cstdlib>
#include <new>

namespace ceiling::kernels {

constexpr std::size_t huge_page = 2u << 20;

Buffer::Buffer(std::size_t bytes) : bytes_(bytes) {
    const std::size_t rounded = (bytes + huge_page - 1) / huge_page * huge_page;
    void* p = std::aligned_alloc(huge_page, rounded == 0 ? huge_page : rounded);
    if (!p) throw std::bad_alloc();
    madvise(p, rounded, MADV_HUGEPAGE);  // advisory: fine if THP is off
    data_.reset(static_cast<std::byte*>(p));
}

void Buffer::Free::operator()(std::byte* p) const { std::free(p); }

}  // namespace ceiling::kernels
