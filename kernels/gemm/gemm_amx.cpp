// Compiled with AVX-512 and AMX enabled (kernels/CMakeLists.txt); called only after
// amx_bf16_supported() and request_amx_permission(). Nothing here but the tile loop:
// shared inline code compiled with these flags could be picked by the linker for callers
// on machines without them.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "kernels/common/bf16.hpp"

namespace ceiling::kernels {
namespace {

// Palette 1, all eight tiles 16 rows x 64 bytes (byte 0 palette, 16-31 colsb, 48-55 rows).
struct alignas(64) TileConfig {
    std::uint8_t palette = 1;
    std::uint8_t start_row = 0;
    std::uint8_t reserved[14] = {};
    std::uint16_t colsb[16] = {64, 64, 64, 64, 64, 64, 64, 64};
    std::uint8_t rows[16] = {16, 16, 16, 16, 16, 16, 16, 16};
};
static_assert(sizeof(TileConfig) == 64);

}  // namespace

void amx_tiles_configure() {
    static const TileConfig config{};
    _tile_loadconfig(&config);
}

void amx_tiles_release() { _tile_release(); }

// One 32 x 32 block of C over k_tiles x 32 of K: C tiles 0-3, A tiles 4-5 (rows 0-15 and
// 16-31 of the block), B tiles 6-7 (columns 0-15 and 16-31). Each A and B tile feeds two
// products, so per 32 k: 4 tile loads (4 KiB) for 4 products. Every tileloadd's 16 rows
// are 64 contiguous bytes: A rows at stride lda_bytes, B tiles contiguous (1 KiB apart).
void amx_bf16_block_32x32(const Bf16* a, std::ptrdiff_t lda_bytes, const Bf16* b0,
                          const Bf16* b1, int k_tiles, float* c, std::ptrdiff_t ldc_bytes) {
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    const auto* a0 = reinterpret_cast<const char*>(a);
    const auto* a1 = a0 + 16 * lda_bytes;
    const auto* p0 = reinterpret_cast<const char*>(b0);
    const auto* p1 = reinterpret_cast<const char*>(b1);
    for (int t = 0; t < k_tiles; ++t) {
        _tile_loadd(4, a0 + 64 * t, lda_bytes);
        _tile_loadd(6, p0 + 1024 * t, 64);
        _tile_loadd(7, p1 + 1024 * t, 64);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_loadd(5, a1 + 64 * t, lda_bytes);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
    }
    auto* c0 = reinterpret_cast<char*>(c);
    _tile_stored(0, c0, ldc_bytes);
    _tile_stored(1, c0 + 64, ldc_bytes);
    _tile_stored(2, c0 + 16 * ldc_bytes, ldc_bytes);
    _tile_stored(3, c0 + 16 * ldc_bytes + 64, ldc_bytes);
}

}  // namespace ceiling::kernels
