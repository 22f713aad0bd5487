/*
 * amx_tiles.h — the AMX tile configuration the library's own AMX kernels
 * share (the GEMM amxgemm-amx.c, the fused attention attention_amx_block.h):
 * palette 1 with all eight tiles 16 rows x 64 bytes, i.e. 16 x 16 f32
 * accumulators, 16 rows x 32 bf16 of A, or 16 pair rows x 16 pairs of B.
 * Include only from files built with the AMX flags (kernels/meson.build);
 * the process must hold the tile permission (cpu_get()->amx_bf16).
 */
#ifndef MOPT_KERNELS_CPU_AMX_TILES_H
#define MOPT_KERNELS_CPU_AMX_TILES_H

#include <immintrin.h>
#include <stdint.h>
#include <string.h>

typedef struct amx_tilecfg {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} amx_tilecfg;

/* Loads the configuration on the calling thread (release: _tile_release). */
static inline void amx_tiles_config(void) {
    amx_tilecfg c;
    memset(&c, 0, sizeof c);
    c.palette = 1;
    for (int t = 0; t < 8; t++) {
        c.colsb[t] = 64;
        c.rows[t] = 16;
    }
    _tile_loadconfig(&c);
}

#endif
