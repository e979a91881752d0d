/* sgemm512.c -- float32 matrix products on AVX-512, single-threaded: the
 * kernel under every float32 gemm of cpu/blas.c (and so of the Winograd
 * and im2col convolutions, the Linear layers, the LSTMs) on a CPU that
 * has AVX-512.
 *
 * Why our own: OpenBLAS picks its kernels from the CPU model, and where it
 * does not know the model, or the environment pins an older one
 * (OPENBLAS_CORETYPE), it runs 256-bit kernels on a CPU whose FMA units are
 * 512 bits wide: half the machine.  oneDNN, which PyTorch's convolutions run
 * on, always uses the full width.
 *
 * Layout (the Goto/BLIS scheme, row-major): C is computed in tiles of
 * SG_MR rows x SG_NR columns, 24 accumulators of 16 floats.  For each block
 * of SG_KC terms of the sum, op(B)'s block of columns is copied once into
 * panels of SG_NR columns (k-major: the kernel reads it in order), op(A)'s
 * rows into panels of SG_MR rows (k-major, interleaved: one broadcast per
 * row and k), both zero-padded to whole panels.  A row panel (8 KB) stays
 * in L1 while the kernel sweeps it over all column panels (in L2).
 *
 * Summation: each element of C is summed in k order, one FMA per term,
 * restarting at each SG_KC block whose partial sum is then added to C.
 * The blocks depend on K only, never on where the caller cuts C (its row
 * bands and column pieces) nor on the thread count, so results do not
 * depend on the threads either.
 */
#include "../core/internal.h"
#include "gemm.h"
#include "scratch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define SG_MR 8
#define SG_NR CH_SGEMM512_PANEL /* 48: three vectors of 16 */
#define SG_KC 256 /* terms per block: a row panel 8 KB, a column panel 48 KB */
#define SG_MC 192 /* rows packed at a time */
#define SG_NC 576 /* columns packed at a time: 576 KB of panels, in L2 */

#define SG_TARGET __attribute__((target("avx512f,avx512vl,avx512dq,avx2,fma")))

/* ---- per-thread panel buffers ------------------------------------------ */
/* Two slots of cpu/scratch.h, sized for the blocks at a thread's first
 * product. */
typedef struct sg_buffers {
    float *a, *b;
} sg_buffers;

static bool sg_buffers_get(sg_buffers *s) {
    s->a = (float *)ch_cpu_scratch(CH_SCRATCH_GEMM_A, (size_t)SG_MC * SG_KC * sizeof(float));
    s->b = (float *)ch_cpu_scratch(CH_SCRATCH_GEMM_B, (size_t)SG_KC * SG_NC * sizeof(float));
    return s->a && s->b;
}

/* ---- packing ----------------------------------------------------------- */

/* 8 rows of 8 floats in, their 8 columns out (r[i] becomes column i). */
static SG_TARGET inline void sg_transpose8(__m256 r[8]) {
    __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
    __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
    __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
    __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
    __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
    __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
    r[0] = _mm256_permute2f128_ps(u0, u4, 0x20);
    r[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
    r[2] = _mm256_permute2f128_ps(u2, u6, 0x20);
    r[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
    r[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
    r[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
    r[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
    r[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

/* dst[k * w + c] = src[c * ld + k] for c < n (else 0), k < kc: w columns
 * (w a multiple of 8) gathered from n <= w rows of memory that run along k.
 * 8 x 8 blocks through registers, the rest one by one. */
static SG_TARGET void sg_pack_across(const float *src, int64_t ld, int64_t n, int64_t kc, int w, float *dst) {
    int64_t k8 = kc & ~(int64_t)7;
    for (int c0 = 0; c0 < w; c0 += 8) {
        if (c0 + 8 <= n) {
            const float *s = src + c0 * ld;
            for (int64_t k = 0; k < k8; k += 8) {
                __m256 r[8];
                for (int i = 0; i < 8; i++)
                    r[i] = _mm256_loadu_ps(s + i * ld + k);
                sg_transpose8(r);
                for (int i = 0; i < 8; i++)
                    _mm256_storeu_ps(dst + (k + i) * w + c0, r[i]);
            }
            for (int64_t k = k8; k < kc; k++)
                for (int i = 0; i < 8; i++)
                    dst[k * w + c0 + i] = s[i * ld + k];
        } else {
            for (int64_t k = 0; k < kc; k++)
                for (int i = 0; i < 8; i++)
                    dst[k * w + c0 + i] = c0 + i < n ? src[(c0 + i) * ld + k] : 0.0f;
        }
    }
}

/* dst[k * w + c] = src[k * ld + c] for c < n (else 0), k < kc: w columns
 * (8 or 48) copied from kc rows of memory that run along c. */
static SG_TARGET void sg_pack_along(const float *src, int64_t ld, int64_t n, int64_t kc, int w, float *dst) {
    if (w == SG_NR) {
        __mmask16 m0 = n >= 16 ? 0xFFFF : (__mmask16)((1u << n) - 1);
        __mmask16 m1 = n >= 32 ? 0xFFFF : n > 16 ? (__mmask16)((1u << (n - 16)) - 1) : 0;
        __mmask16 m2 = n >= 48 ? 0xFFFF : n > 32 ? (__mmask16)((1u << (n - 32)) - 1) : 0;
        for (int64_t k = 0; k < kc; k++) {
            const float *s = src + k * ld;
            float *d = dst + k * SG_NR;
            _mm512_storeu_ps(d, _mm512_maskz_loadu_ps(m0, s));
            _mm512_storeu_ps(d + 16, _mm512_maskz_loadu_ps(m1, s + 16));
            _mm512_storeu_ps(d + 32, _mm512_maskz_loadu_ps(m2, s + 32));
        }
    } else { /* w == SG_MR */
        __mmask8 m = n >= 8 ? 0xFF : (__mmask8)((1u << n) - 1);
        for (int64_t k = 0; k < kc; k++)
            _mm256_storeu_ps(dst + k * SG_MR, _mm256_maskz_loadu_ps(m, src + k * ld));
    }
}

/* Panels of w columns of the (kc x n) matrix whose element (k, c) lies at
 * src[k * ks + c * cs] (one of ks, cs is 1). */
static SG_TARGET void sg_pack(const float *src, int64_t ks, int64_t cs, int64_t n, int64_t kc, int w, float *dst) {
    for (int64_t c0 = 0; c0 < n; c0 += w) {
        int64_t cn = n - c0 < w ? n - c0 : w;
        if (cs == 1)
            sg_pack_along(src + c0, ks, cn, kc, w, dst);
        else
            sg_pack_across(src + c0 * cs, cs, cn, kc, w, dst);
        dst += kc * w;
    }
}

/* ---- the 8 x 48 kernel ---------------------------------------------------- */

/* C[0..mr)[0..nr) (ldc) gets the tile a (kc x 8) . b (kc x 48), of which
 * only the first NV vectors of 16 columns are computed (nr <= 16 * NV: a
 * product's last, narrow panel, e.g. the 16 columns past 48 of a 64-wide
 * one, costs a third of a full one):
 * C = alpha * S + beta * C on a K loop's first block (C not read when beta
 * is 0), C += alpha * S on the later ones.  NV is a constant at each call,
 * so the loops over it unroll and the accumulators stay in registers. */
static inline __attribute__((always_inline)) SG_TARGET void sg_tile(int64_t kc, const float *a, const float *b,
                                                                     float *C, int64_t ldc, int mr, int nr,
                                                                     float alpha, float beta, bool first,
                                                                     const int NV) {
    __m512 s[8][3];
    for (int r = 0; r < 8; r++)
        for (int v = 0; v < NV; v++)
            s[r][v] = _mm512_setzero_ps();
    /* C's tile is read or written after the loop: start its lines on their
     * way now (a tile's rows are ldc apart, in L3 or memory for a large C) */
    for (int r = 0; r < mr; r++) {
        const char *c = (const char *)(C + r * ldc);
        for (int v = 0; v < NV; v++)
            _mm_prefetch(c + 64 * v, _MM_HINT_T0);
        _mm_prefetch(c + 64 * NV - 1, _MM_HINT_T0);
    }
    for (int64_t k = 0; k < kc; k++) {
        __m512 bv[3];
        for (int v = 0; v < NV; v++)
            bv[v] = _mm512_load_ps(b + 16 * v);
        for (int r = 0; r < 8; r++) {
            __m512 x = _mm512_set1_ps(a[r]);
            for (int v = 0; v < NV; v++)
                s[r][v] = _mm512_fmadd_ps(x, bv[v], s[r][v]);
        }
        a += SG_MR;
        b += SG_NR;
    }
    __mmask16 m[3];
    for (int v = 0; v < NV; v++) {
        int left = nr - 16 * v;
        m[v] = left >= 16 ? 0xFFFF : left > 0 ? (__mmask16)((1u << left) - 1) : 0;
    }
    __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
    for (int r = 0; r < mr; r++) {
        float *c = C + r * ldc;
        for (int v = 0; v < NV; v++) {
            __m512 y;
            if (!first)
                y = _mm512_fmadd_ps(va, s[r][v], _mm512_maskz_loadu_ps(m[v], c + 16 * v));
            else if (beta == 0.0f)
                y = _mm512_mul_ps(va, s[r][v]);
            else
                y = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m[v], c + 16 * v), _mm512_mul_ps(va, s[r][v]));
            _mm512_mask_storeu_ps(c + 16 * v, m[v], y);
        }
    }
}

static SG_TARGET void sg_kernel(int64_t kc, const float *a, const float *b, float *C, int64_t ldc, int mr, int nr,
                                float alpha, float beta, bool first) {
    if (nr > 32)
        sg_tile(kc, a, b, C, ldc, mr, nr, alpha, beta, first, 3);
    else if (nr > 16)
        sg_tile(kc, a, b, C, ldc, mr, nr, alpha, beta, first, 2);
    else
        sg_tile(kc, a, b, C, ldc, mr, nr, alpha, beta, first, 1);
}

/* n split into ceil(n / cap) blocks of equal size, rounded up to `unit`. */
static int64_t sg_block(int64_t n, int64_t cap, int64_t unit) {
    int64_t count = (n + cap - 1) / cap;
    int64_t b = (n + count - 1) / count;
    return (b + unit - 1) / unit * unit;
}

/* The tiles of m rows of packed op(A) (row panels kc apart) against n
 * columns of packed op(B) (column panel q at b + q * bq), into C. */
static SG_TARGET void sg_sweep(int64_t kc, const float *apack, int64_t m, const float *b, int64_t bq, int64_t n,
                               float *C, int64_t ldc, float alpha, float beta, bool first) {
    for (int64_t ir = 0; ir < m; ir += SG_MR) {
        int mr = (int)(m - ir < SG_MR ? m - ir : SG_MR);
        for (int64_t jr = 0; jr < n; jr += SG_NR) {
            int nr = (int)(n - jr < SG_NR ? n - jr : SG_NR);
            sg_kernel(kc, apack + ir * kc, b + jr / SG_NR * bq, C + ir * ldc + jr, ldc, mr, nr, alpha, beta, first);
        }
    }
}

/* One block of SG_KC terms (k0, kc) for all M rows against nc columns of
 * packed B: panel q of B at b + q * bq.  op(A)(i, k) = A[i * ais + k * aks]
 * is packed SG_MC rows at a time; `first`: the K loop's first block. */
static SG_TARGET void sg_rows(float *apack, int64_t M, const float *A, int64_t ais, int64_t aks, int64_t k0,
                              int64_t kc, const float *b, int64_t bq, int64_t nc, float *C, int64_t ldc, float alpha,
                              float beta, bool first) {
    for (int64_t i0 = 0; i0 < M; i0 += SG_MC) {
        int64_t mc = M - i0 < SG_MC ? M - i0 : SG_MC;
        sg_pack(A + i0 * ais + k0 * aks, aks, ais, mc, kc, SG_MR, apack);
        sg_sweep(kc, apack, mc, b, bq, nc, C + i0 * ldc, ldc, alpha, beta, first);
    }
}

static SG_TARGET void sg_run(sg_buffers *buf, bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha,
                             const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C,
                             int64_t ldc) {
    /* op(A)(i, k) = A[i * ais + k * aks], op(B)(k, j) = B[k * bks + j * bjs] */
    int64_t ais = ta ? 1 : lda, aks = ta ? lda : 1, bks = tb ? 1 : ldb, bjs = tb ? ldb : 1;
    int64_t KC = sg_block(K, SG_KC, 8), NC = sg_block(N, SG_NC, SG_NR);
    for (int64_t j0 = 0; j0 < N; j0 += NC) {
        int64_t nc = N - j0 < NC ? N - j0 : NC;
        for (int64_t k0 = 0; k0 < K; k0 += KC) {
            int64_t kc = K - k0 < KC ? K - k0 : KC;
            sg_pack(B + k0 * bks + j0 * bjs, bks, bjs, nc, kc, SG_NR, buf->b);
            sg_rows(buf->a, M, A, ais, aks, k0, kc, buf->b, kc * SG_NR, nc, C + j0, ldc, alpha, beta, k0 == 0);
        }
    }
}

/* sg_run with op(B) already in panels (ch_cpu_sgemm512_panels): the same
 * blocks of K and the same tiles, so the same bits as through sg_run. */
static SG_TARGET void sg_run_panels(sg_buffers *buf, int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                                    const float *Bp, float *C, int64_t ldc) {
    int64_t KC = sg_block(K, SG_KC, 8);
    for (int64_t k0 = 0; k0 < K; k0 += KC) {
        int64_t kc = K - k0 < KC ? K - k0 : KC;
        sg_rows(buf->a, M, A, lda, 1, k0, kc, Bp + k0 * SG_NR, K * SG_NR, N, C, ldc, 1.0f, 0.0f, k0 == 0);
    }
}

bool ch_cpu_sgemm512_panels(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *Bp, float *C,
                            int64_t ldc) {
    sg_buffers buf;
    if (!sg_buffers_get(&buf))
        return false; /* out of memory for the thread's panel buffers */
    sg_run_panels(&buf, M, N, K, A, lda, Bp, C, ldc);
    return true;
}

/* ---- one product on a team of threads ------------------------------------ */
/* The work is cut into units that depend on the shape only.  Each thread
 * starts on its own contiguous range of them and, when that is done, takes
 * units from the ends of the others' (below), so a core that runs slower
 * (on a shared VM one of two vCPUs often runs 7-14 % behind the other for
 * minutes) does fewer: with two fixed halves every product waited for the
 * slower one.  Each element of C is still summed over the same blocks of K
 * in the same order as by sg_run on one thread, so the bits do not depend
 * on the threads.
 *
 * Short products (M < SG_MC rows: a batch against a layer's weights): a
 * unit is a strip of op(B)'s column panels; a thread packs all of op(A)
 * (M x K) once, before its first unit, then each strip it takes, block of
 * K after block.
 * Tall products: units of rows of op(A) within each block of op(B)
 * (SG_KC x SG_NC), which a thread packs when it comes to it; the only wait
 * is a barrier between two blocks of K, which add to the same C. */

#ifdef _OPENMP
#include <omp.h>

#define SG_UNITS_PER_THREAD 8 /* enough units for the last ones to even out the cores */
#define SG_SHORT_A_MAX ((int64_t)1 << 20) /* floats of op(A) a short product packs whole: 4 MB */

/* Units of `unit` items (rounded up to `align`) so that there are about
 * SG_UNITS_PER_THREAD per thread, at most `cap` items each. */
static int64_t sg_unit(int64_t n, int team, int64_t align, int64_t cap) {
    int64_t u = (n + (int64_t)SG_UNITS_PER_THREAD * team - 1) / ((int64_t)SG_UNITS_PER_THREAD * team);
    u = (u + align - 1) / align * align;
    return u < align ? align : u > cap ? cap : u;
}

typedef struct sg_product {
    int64_t M, N, K, ais, aks, bks, bjs, ldc, KC;
    const float *A, *B;
    float *C, alpha, beta;
} sg_product;

/* ---- who takes which unit ---- */
/* Units [0, n) start cut into one contiguous range per thread, as fixed
 * pieces would be, so a thread's part of C is the same from product to
 * product and the pass that reads it next (a gradient's optimizer update,
 * split the same way) finds it in that core's cache: handing units out from
 * one shared counter interleaved the threads' rows, and the SGD update of
 * the bench MLP ran a quarter to a third slower.  A thread takes its own range from the
 * front; when that is empty it takes from the back of another's, so a faster
 * core still ends up with more.  A range is one word, front in the low 32
 * bits and back in the high, changed by compare-and-swap. */
#define SG_TEAM_MAX 64

static void sg_ranges_init(uint64_t *w, int team, int64_t n) {
    for (int q = 0; q < team; q++)
        w[q] = (uint64_t)(n * q / team) | (uint64_t)(n * (q + 1) / team) << 32;
}

/* The front (or back) unit of one range, -1 when it is empty. */
static int64_t sg_range_take(uint64_t *w, bool back) {
    uint64_t old = __atomic_load_n(w, __ATOMIC_RELAXED);
    for (;;) {
        uint32_t f = (uint32_t)old, b = (uint32_t)(old >> 32);
        if (f >= b)
            return -1;
        uint64_t upd = back ? old - ((uint64_t)1 << 32) : old + 1;
        if (__atomic_compare_exchange_n(w, &old, upd, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            return back ? (int64_t)b - 1 : (int64_t)f;
    }
}

/* Thread q's next unit: its own range's front, else another's back. */
static int64_t sg_next_unit(uint64_t *w, int team, int q) {
    int64_t u = sg_range_take(w + q, false);
    for (int d = 1; u < 0 && d < team; d++)
        u = sg_range_take(w + (q + d) % team, true);
    return u;
}

/* Each thread takes its buffers from its own slots before its first unit;
 * a thread that cannot get them takes no units and the others do its share
 * (the caller got the master's before the region, so one thread always
 * can). */
static SG_TARGET void sg_team_short(const sg_product *p, int64_t unit_cols, uint64_t *ranges, int team) {
    int64_t M = p->M, N = p->N, K = p->K, KC = p->KC, Mp = (M + SG_MR - 1) / SG_MR * SG_MR;
    int q = omp_get_thread_num();
    /* op(A) whole: its block at k0 starts at apack + Mp * k0, row panel i0 at + i0 * kc */
    float *apack = (float *)ch_cpu_scratch(CH_SCRATCH_GEMM_A, (size_t)Mp * K * sizeof(float));
    float *bstrip = (float *)ch_cpu_scratch(CH_SCRATCH_GEMM_B, (size_t)KC * unit_cols * sizeof(float));
    if (!apack || !bstrip)
        return;
    int64_t u = sg_next_unit(ranges, team, q);
    if (u < 0)
        return;
    for (int64_t k0 = 0; k0 < K; k0 += KC) {
        int64_t kc = K - k0 < KC ? K - k0 : KC;
        sg_pack(p->A + k0 * p->aks, p->aks, p->ais, M, kc, SG_MR, apack + Mp * k0);
    }
    for (; u >= 0; u = sg_next_unit(ranges, team, q)) {
        int64_t j0 = u * unit_cols, nc = N - j0 < unit_cols ? N - j0 : unit_cols;
        for (int64_t k0 = 0; k0 < K; k0 += KC) {
            int64_t kc = K - k0 < KC ? K - k0 : KC;
            sg_pack(p->B + k0 * p->bks + j0 * p->bjs, p->bks, p->bjs, nc, kc, SG_NR, bstrip);
            sg_sweep(kc, apack + Mp * k0, M, bstrip, kc * SG_NR, nc, p->C + j0, p->ldc, p->alpha, p->beta, k0 == 0);
        }
    }
}

/* Per block of K (ranges + kb * team: its units), units numbered by block
 * of columns (sg_run's order), then rows.  A block of K adds to what the
 * previous one left in C, so the team waits at a barrier between two.  A
 * thread packs a block of op(B) when its next unit lies in another block
 * than the last one's. */
static SG_TARGET void sg_team_tall(const sg_product *p, int64_t NC, int64_t unit_rows, uint64_t *ranges, int team) {
    int64_t M = p->M, N = p->N, K = p->K, KC = p->KC;
    int64_t runits = (M + unit_rows - 1) / unit_rows, kblocks = (K + KC - 1) / KC, jblocks = (N + NC - 1) / NC;
    int64_t packed = -1; /* the block of op(B) in buf.b: kb * jblocks + jb */
    int q = omp_get_thread_num();
    sg_buffers buf;
    bool ok = sg_buffers_get(&buf);
    for (int64_t kb = 0; kb < kblocks; kb++) {
        if (kb > 0) {
#pragma omp barrier
        }
        int64_t k0 = kb * KC, kc = K - k0 < KC ? K - k0 : KC;
        for (int64_t u = ok ? sg_next_unit(ranges + kb * team, team, q) : -1; u >= 0;
             u = sg_next_unit(ranges + kb * team, team, q)) {
            int64_t jb = u / runits, j0 = jb * NC, nc = N - j0 < NC ? N - j0 : NC;
            if (kb * jblocks + jb != packed) {
                sg_pack(p->B + k0 * p->bks + j0 * p->bjs, p->bks, p->bjs, nc, kc, SG_NR, buf.b);
                packed = kb * jblocks + jb;
            }
            int64_t i0 = u % runits * unit_rows, mu = M - i0 < unit_rows ? M - i0 : unit_rows;
            sg_rows(buf.a, mu, p->A + i0 * p->ais, p->ais, p->aks, k0, kc, buf.b, kc * SG_NR, nc,
                    p->C + i0 * p->ldc + j0, p->ldc, p->alpha, p->beta, kb == 0);
        }
    }
}

/* Tall products with several blocks of K and of columns, whose block of
 * op(B) across all N columns fits in SG_SHARED_B_MAX floats: the team packs
 * each block of K of op(B) once, into one buffer they all read (the
 * master's B slot), and a unit is a band of rows across all columns, whose
 * rows of op(A) its thread packs once.  sg_team_tall's units (a band within
 * one block of columns) had each band of op(A) packed again for every block
 * of columns: at 2048 x 2048 x 2048, 4 times, 4.8 % of the product's
 * samples on 2 threads.  Where op(A) is packed once anyway (one block of
 * columns: NStepLSTM's output layer gh = gy W, 700 x 200 x 10000) or there
 * is little of it (one block of K: the MLP's gW over a batch of 100), the
 * second barrier per block of K and reading the half of op(B) that the
 * other core packed made the product 3-7 % slower: sg_team_tall. */
#define SG_SHARED_B_MAX ((int64_t)1 << 20) /* 4 MB: a block of K of op(B) for N up to 4096 */

/* Units are bands of rows (ranges + kb * team: block kb's).  Per block of
 * K: the threads pack their share of op(B)'s column panels into `bpack`,
 * wait for each other, then take bands; a band's thread packs its rows of
 * op(A) and sweeps them over one block of SG_NC columns after another (that
 * block of panels stays in L2 while all the band's row panels pass). */
static SG_TARGET void sg_team_shared_b(const sg_product *p, float *bpack, int64_t unit_rows, uint64_t *ranges,
                                       int team) {
    int64_t M = p->M, N = p->N, K = p->K, KC = p->KC, NC = SG_NC;
    int64_t kblocks = (K + KC - 1) / KC, panels = (N + SG_NR - 1) / SG_NR;
    int q = omp_get_thread_num();
    float *apack = (float *)ch_cpu_scratch(CH_SCRATCH_GEMM_A, (size_t)SG_MC * SG_KC * sizeof(float));
    for (int64_t kb = 0; kb < kblocks; kb++) {
        int64_t k0 = kb * KC, kc = K - k0 < KC ? K - k0 : KC;
        if (kb > 0) {
#pragma omp barrier
        }
        int64_t p0 = panels * q / team, p1 = panels * (q + 1) / team;
        if (p1 > p0) {
            int64_t j0 = p0 * SG_NR, nc = (p1 * SG_NR < N ? p1 * SG_NR : N) - j0;
            sg_pack(p->B + k0 * p->bks + j0 * p->bjs, p->bks, p->bjs, nc, kc, SG_NR, bpack + j0 * kc);
        }
#pragma omp barrier
        for (int64_t u = apack ? sg_next_unit(ranges + kb * team, team, q) : -1; u >= 0;
             u = sg_next_unit(ranges + kb * team, team, q)) {
            int64_t i0 = u * unit_rows, mu = M - i0 < unit_rows ? M - i0 : unit_rows;
            sg_pack(p->A + i0 * p->ais + k0 * p->aks, p->aks, p->ais, mu, kc, SG_MR, apack);
            for (int64_t j0 = 0; j0 < N; j0 += NC) /* a block of panels stays in L2 for the band */
                sg_sweep(kc, apack, mu, bpack + j0 * kc, kc * SG_NR, N - j0 < NC ? N - j0 : NC,
                         p->C + i0 * p->ldc + j0, p->ldc, p->alpha, p->beta, kb == 0);
        }
    }
}

bool ch_cpu_sgemm512_team(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
                          int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc, int team) {
    if (team < 2 || omp_in_parallel() || !ch_cpu_sgemm512_ok() || K <= 0 || alpha == 0.0f)
        return false;
    if (team > SG_TEAM_MAX)
        team = SG_TEAM_MAX;
    sg_product p = {M, N, K, ta ? 1 : lda, ta ? lda : 1, tb ? 1 : ldb, tb ? ldb : 1, ldc, sg_block(K, SG_KC, 8),
                    A, B, C, alpha, beta};
    uint64_t local[4 * SG_TEAM_MAX];
    if (M < SG_MC && N > SG_NR && (M + SG_MR) * K <= SG_SHORT_A_MAX) {
        int64_t unit_cols = sg_unit(N, team, SG_NR, SG_NC), Mp = (M + SG_MR - 1) / SG_MR * SG_MR;
        if (!ch_cpu_scratch(CH_SCRATCH_GEMM_A, (size_t)Mp * K * sizeof(float)) ||
            !ch_cpu_scratch(CH_SCRATCH_GEMM_B, (size_t)p.KC * unit_cols * sizeof(float)))
            return false;
        sg_ranges_init(local, team, (N + unit_cols - 1) / unit_cols);
#pragma omp parallel num_threads(team)
        sg_team_short(&p, unit_cols, local, team);
        return true;
    }
    int64_t kblocks = (K + p.KC - 1) / p.KC, Np = (N + SG_NR - 1) / SG_NR * SG_NR;
    if (kblocks > 1 && N > SG_NC && Np * p.KC <= SG_SHARED_B_MAX && kblocks * team <= 4 * SG_TEAM_MAX) {
        float *bpack = (float *)ch_cpu_scratch(CH_SCRATCH_GEMM_B, (size_t)(Np * p.KC) * sizeof(float));
        if (!bpack || !ch_cpu_scratch(CH_SCRATCH_GEMM_A, (size_t)SG_MC * SG_KC * sizeof(float)))
            return false;
        int64_t unit_rows = sg_unit(M, team, SG_MR, SG_MC);
        for (int64_t kb = 0; kb < kblocks; kb++)
            sg_ranges_init(local + kb * team, team, (M + unit_rows - 1) / unit_rows);
#pragma omp parallel num_threads(team)
        sg_team_shared_b(&p, bpack, unit_rows, local, team);
        return true;
    }
    sg_buffers buf;
    if (!sg_buffers_get(&buf))
        return false;
    int64_t unit_rows = sg_unit(M, team, SG_MR, SG_MC), NC = sg_block(N, SG_NC, SG_NR);
    int64_t units = (N + NC - 1) / NC * ((M + unit_rows - 1) / unit_rows);
    if (units >= ((int64_t)1 << 31))
        return false; /* more units than a range's 32-bit ends hold: fixed pieces */
    uint64_t *ranges = kblocks * team <= 4 * SG_TEAM_MAX ? local : malloc((size_t)(kblocks * team) * sizeof *ranges);
    if (!ranges)
        return false;
    for (int64_t kb = 0; kb < kblocks; kb++)
        sg_ranges_init(ranges + kb * team, team, units);
#pragma omp parallel num_threads(team)
    sg_team_tall(&p, NC, unit_rows, ranges, team);
    if (ranges != local)
        free(ranges);
    return true;
}

#else

bool ch_cpu_sgemm512_team(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
                          int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc, int team) {
    (void)ta, (void)tb, (void)M, (void)N, (void)K, (void)alpha, (void)A, (void)lda, (void)B, (void)ldb;
    (void)beta, (void)C, (void)ldc, (void)team;
    return false;
}

#endif

/* The CPU has AVX-512 F, VL and DQ, and CHAINLUA_SGEMM does not say
 * "openblas" (which sends every product to OpenBLAS: for comparisons). */
bool ch_cpu_sgemm512_ok(void) {
    static int ok = -1;
    if (ok < 0) {
        const char *env = getenv("CHAINLUA_SGEMM");
        bool off = env && strcmp(env, "openblas") == 0;
        if (env && !off && strcmp(env, "own") != 0)
            fprintf(stderr, "chainlua: CHAINLUA_SGEMM=%s ignored (expected 'openblas' or 'own')\n", env);
        ok = !off && ch_cpu_avx512f() && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
    }
    return ok;
}

bool ch_cpu_sgemm512(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, const float *A, int64_t lda,
                     const float *B, int64_t ldb, float beta, float *C, int64_t ldc) {
    if (!ch_cpu_sgemm512_ok() || K <= 0 || alpha == 0.0f)
        return false; /* (K = 0 and alpha = 0 leave only beta * C: the caller's BLAS) */
    sg_buffers buf;
    if (!sg_buffers_get(&buf))
        return false;
    sg_run(&buf, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    return true;
}

#else /* not x86-64 with GNU C */

bool ch_cpu_sgemm512_panels(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *Bp, float *C,
                            int64_t ldc) {
    (void)M, (void)N, (void)K, (void)A, (void)lda, (void)Bp, (void)C, (void)ldc;
    return false;
}

bool ch_cpu_sgemm512_ok(void) { return false; }

bool ch_cpu_sgemm512_team(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
                          int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc, int team) {
    (void)ta, (void)tb, (void)M, (void)N, (void)K, (void)alpha, (void)A, (void)lda, (void)B, (void)ldb;
    (void)beta, (void)C, (void)ldc, (void)team;
    return false;
}

bool ch_cpu_sgemm512(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, const float *A, int64_t lda,
                     const float *B, int64_t ldb, float beta, float *C, int64_t ldc) {
    (void)ta, (void)tb, (void)M, (void)N, (void)K, (void)alpha, (void)A, (void)lda, (void)B, (void)ldb;
    (void)beta, (void)C, (void)ldc;
    return false;
}

#endif
