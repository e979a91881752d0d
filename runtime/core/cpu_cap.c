/* cpu_cap.c -- how wide the hand-vectorised CPU kernels may go.
 *
 * The kernels pick their instructions at run time (internal.h's
 * ch_cpu_avx2_fma / ch_cpu_avx512f): AVX-512 where the CPU has it, else
 * AVX2 + FMA, else the build's baseline (x86-64-v2).  CHAINLUA_CPU caps
 * that choice below what the CPU has, as OPENBLAS_CORETYPE and oneDNN's
 * ONEDNN_MAX_CPU_ISA do for theirs:
 *   CHAINLUA_CPU=avx2       no AVX-512 kernels
 *   CHAINLUA_CPU=baseline   neither AVX-512 nor AVX2 kernels
 *   CHAINLUA_CPU=native     (or unset) whatever the CPU has
 * For comparisons, for results that match a machine without AVX-512, and
 * so that the portable paths can be tested on one that has it
 * (spec/tensor/cpu_cap_spec.lua).  Read once per process.  BLAS (OpenBLAS)
 * chooses its own kernels and is not affected. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ch_cpu_cap(void) {
    static int cap = -1;
    if (cap < 0) {
        const char *env = getenv("CHAINLUA_CPU");
        int c = 2;
        if (env && strcmp(env, "avx2") == 0)
            c = 1;
        else if (env && strcmp(env, "baseline") == 0)
            c = 0;
        else if (env && *env && strcmp(env, "native") != 0)
            fprintf(stderr, "chainlua: CHAINLUA_CPU=%s ignored (expected 'native', 'avx2' or 'baseline')\n", env);
        cap = c;
    }
    return cap;
}
