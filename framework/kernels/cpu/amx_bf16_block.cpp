// One 32 x 32 block of a bf16 GEMM on Intel AMX tiles (bf16_blocks.h): four float32 C tiles, two A row tiles and two
// B column panels; one TDPBF16PS does a 16 x 16 x 32 product, 16 times the work of a 512-bit float32 FMA.
#include <cpuid.h>
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "framework/kernels/cpu/bf16_blocks.h"

namespace luong::cpu {
namespace {

using bf16_layout::kDepth;
using bf16_layout::kTile;

// Linux's arch_prctl codes for the dynamically enabled tile state (asm/prctl.h; not in every libc's headers).
constexpr long kArchGetXcompPerm = 0x1022;
constexpr long kArchReqXcompPerm = 0x1023;
constexpr int kXfeatureTileData = 18;

bool detect() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
  const bool amx_bf16 = (edx >> 22) & 1u, amx_tile = (edx >> 24) & 1u;
  if (!amx_bf16 || !amx_tile) return false;
  // The tile data (8 KB a thread) is off until the process asks for it; a kernel or hypervisor that does not
  // support it refuses, and then an AMX instruction would fault, so this is the real test.
  if (syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureTileData) != 0) return false;
  unsigned long granted = 0;
  if (syscall(SYS_arch_prctl, kArchGetXcompPerm, &granted) != 0) return false;
  return (granted >> kXfeatureTileData) & 1u;
}

// Palette 1, eight tiles of 16 rows x 64 bytes: 0-3 the float32 C block, 4-5 two row tiles of A, 6-7 two
// column panels of B.
struct alignas(64) TileConfig {
  uint8_t palette_id = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

}  // namespace

bool amx_tiles_available() {
  static const bool available = detect();
  return available;
}

__attribute__((target("amx-tile"))) void amx_load_tile_config() {
  TileConfig config;
  for (int t = 0; t < 8; ++t) config.colsb[t] = 64, config.rows[t] = kTile;
  // Not GCC 12's _tile_loadconfig: its asm operand is the first 8 bytes of the struct, so the compiler dropped
  // the stores of colsb and rows as dead and the instruction faulted on a config without tiles. Here the
  // operand is the whole struct.
  asm volatile("ldtilecfg %0" : : "m"(config));
}

// The tile instructions are inline assembly that GCC does not see read or write memory, hence the barriers.
__attribute__((target("amx-tile,amx-bf16"))) void amx_bf16_block(const uint16_t* pa, const uint16_t* pb, int64_t kp,
                                                                 int64_t i0, int64_t q0, int64_t p0, int64_t p1,
                                                                 float* out, int64_t ld, bool add) {
  const uint16_t* a0 = pa + bf16_layout::a_slice(kp, i0, 0);  // row tiles i0 / 16 and the next
  const uint16_t* a1 = a0 + kp * kTile;
  const uint16_t* b0 = bf16_layout::b_panel(pb, kp, q0);
  const uint16_t* b1 = b0 + kp * kTile;
  const int64_t stride = ld * 4;  // bytes
  asm volatile("" ::: "memory");
  if (add) {
    _tile_loadd(0, out, stride);
    _tile_loadd(1, out + kTile, stride);
    _tile_loadd(2, out + kTile * ld, stride);
    _tile_loadd(3, out + kTile * ld + kTile, stride);
  } else {
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
  }
  for (int64_t p = p0; p < p1; p += kDepth) {
    _tile_loadd(4, a0 + p * kTile, 64);  // slice p / 32 of the row tile: 16 rows of 32 depths, 1 KB
    _tile_loadd(5, a1 + p * kTile, 64);
    _tile_loadd(6, b0 + p * kTile, 64);  // depth p starts at pair row p / 2, 32 values a row
    _tile_loadd(7, b1 + p * kTile, 64);
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  _tile_stored(0, out, stride);
  _tile_stored(1, out + kTile, stride);
  _tile_stored(2, out + kTile * ld, stride);
  _tile_stored(3, out + kTile * ld + kTile, stride);
  asm volatile("" ::: "memory");
}

}  // namespace luong::cpu
