/* test_rnn_seq.cu -- the GPU's sequence RNNs (rnn_seq.c, rnn_seq.cu)
 * emulated on the host against the CPU's (runtime/cpu/rnn_seq.c): every
 * cell (tanh, relu, LSTM, GRU), both directions, float32 and float64,
 * sequences that end early, absent output gradients.
 *
 * The products are cuBLAS calls on the GPU (cu_gemm_rows, matmul.c), which
 * cannot run here: this file stands in for them with a plain host product
 * (sums in double).
 * The CPU multiplies with OpenBLAS in the element type, so results agree to
 * a tolerance (float32 2e-5, float64 1e-12, relative to max(1, |x|)), not
 * bit for bit; the cell arithmetic itself is the CPU's.  The cuBLAS calls
 * are checked by spec/cuda/rnn_gpu_spec.lua on a GPU.
 * emulates: rnn_seq.c rnn_seq.cu allocator.c */
#include "emulator.h"

#include <math.h>
#include <stdlib.h>

/* ---- a stand-in for matmul.c ----------------------------- */
template <typename T>
static void host_gemm(int ta, int tb, int64_t M, int64_t N, int64_t K, const T *A, int64_t lda, const T *B,
                      int64_t ldb, double beta, T *C, int64_t ldc) {
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            double s = 0;
            for (int64_t k = 0; k < K; k++)
                s += (double)(ta ? A[k * lda + i] : A[i * lda + k]) * (double)(tb ? B[j * ldb + k] : B[k * ldb + j]);
            C[i * ldc + j] = (T)(s + (beta != 0 ? beta * (double)C[i * ldc + j] : 0.0));
        }
}

extern "C" ch_status cu_gemm_rows(const char *fn, int dev, int dt, int ta, int tb, int64_t M, int64_t N, int64_t K,
                                  const void *A, int64_t lda, const void *B, int64_t ldb, double beta, void *C,
                                  int64_t ldc) {
    if (M <= 0 || N <= 0 || K <= 0)
        return cu_fail(CH_ERR_INTERNAL, "%s: empty product handed to cu_gemm_rows", fn);
    if (dt == CH_FLOAT32)
        host_gemm(ta, tb, M, N, K, (const float *)A, lda, (const float *)B, ldb, beta, (float *)C, ldc);
    else
        host_gemm(ta, tb, M, N, K, (const double *)A, lda, (const double *)B, ldb, beta, (double *)C, ldc);
    return CH_OK;
}


/* ---- the comparison ------------------------------------------------------ */
static const char *cell_names[] = {"tanh", "relu", "lstm", "gru"};

static int gates_of(int cell) { return cell == CH_RNN_LSTM ? 4 : cell == CH_RNN_GRU ? 3 : 1; }

static ch_tensor *filled(ch_dtype dt, int nd, const int64_t *dim, uint64_t seed) {
    ch_tensor *t = NULL;
    CHECK_OK(ch_empty(dt, nd, dim, CH_CPU, &t));
    emu_fill_uniform(t, -1, 1, seed);
    return t;
}

static ch_tensor *zeros_like(const ch_tensor *ref) {
    ch_tensor *t = NULL;
    CHECK_OK(ch_full((ch_dtype)ref->dt, ref->nd, ref->dim, 0.0, CH_CPU, &t));
    return t;
}

static void expect_close(const char *what, const char *out, ch_dtype dt, const ch_tensor *cpu, const ch_tensor *gpu) {
    double tol = dt == CH_FLOAT32 ? 2e-5 : 1e-12, worst = 0;
    int64_t at_k = 0;
    for (int64_t k = 0; k < cpu->numel; k++) {
        double c = at(cpu, k), g = at(gpu, k);
        double d = fabs(c - g) / (fabs(c) > 1 ? fabs(c) : 1);
        if (!(d <= worst)) {
            worst = d;
            at_k = k;
        }
    }
    if (!(worst <= tol)) {
        fprintf(stderr, "%s %s: %s differs from the CPU by %.3g at element %lld (CPU %.17g, emulated GPU %.17g)\n",
                what, dt == CH_FLOAT32 ? "float32" : "float64", out, worst, (long long)at_k, at(cpu, at_k),
                at(gpu, at_k));
        check_failures++;
    }
}

static const ch_tensor *dev_of(const ch_tensor *t, ch_tensor *slot) {
    if (!t)
        return NULL;
    *slot = emu_on_device(t);
    return slot;
}

static void compare(int cell, int reverse, ch_dtype dt, int T, const int64_t *batch, int with_gy, int with_ghy) {
    char what[96];
    snprintf(what, sizeof what, "%s%s T=%d", cell_names[cell], reverse ? " reverse" : "", T);
    int64_t NI = 5, H = 3, G = gates_of(cell), B = batch[0], N = 0, off[8];
    for (int t = 0; t < T; t++) {
        off[t] = N;
        N += batch[t];
    }
    int64_t xd[2] = {N, NI}, hd[2] = {B, H}, wxd[2] = {G * H, NI}, whd[2] = {G * H, H}, bd[1] = {G * H},
            yd[2] = {N, H};
    int lstm = cell == CH_RNN_LSTM;
    ch_tensor *x = filled(dt, 2, xd, 1), *h0 = filled(dt, 2, hd, 2), *c0 = lstm ? filled(dt, 2, hd, 3) : NULL;
    ch_tensor *wx = filled(dt, 2, wxd, 4), *wh = filled(dt, 2, whd, 5), *bx = filled(dt, 1, bd, 6),
              *bh = filled(dt, 1, bd, 7);
    ch_tensor *gy = with_gy ? filled(dt, 2, yd, 8) : NULL, *ghy = with_ghy ? filled(dt, 2, hd, 9) : NULL;
    ch_tensor *gcy = lstm ? filled(dt, 2, hd, 10) : NULL;

    /* forward */
    ch_tensor *y, *hy, *cy = NULL, *ws;
    CHECK_OK(ch_rnn_seq_forward((ch_rnn_cell)cell, reverse, T, batch, x, h0, c0, wx, wh, bx, bh, &y, &hy,
                                lstm ? &cy : NULL, &ws));
    ch_tensor *y2 = zeros_like(y), *hy2 = zeros_like(hy), *cy2 = lstm ? zeros_like(cy) : NULL, *ws2 = zeros_like(ws);
    ch_tensor s[24];
    ch_rnn_seq_args a = {};
    a.name = "n_step_test";
    a.cell = cell;
    a.reverse = reverse;
    a.T = T;
    a.batch = batch;
    a.off = off;
    a.N = N;
    a.NI = NI;
    a.H = H;
    a.x = dev_of(x, &s[0]);
    a.wx = dev_of(wx, &s[1]);
    a.wh = dev_of(wh, &s[2]);
    a.bx = dev_of(bx, &s[3]);
    a.bh = dev_of(bh, &s[4]);
    a.h0 = dev_of(h0, &s[5]);
    a.c0 = dev_of(c0, &s[6]);
    a.y = (ch_tensor *)dev_of(y2, &s[7]);
    a.hy = (ch_tensor *)dev_of(hy2, &s[8]);
    a.cy = (ch_tensor *)dev_of(cy2, &s[9]);
    a.ws = (ch_tensor *)dev_of(ws2, &s[10]);
    CHECK_OK(cu_rnn_seq_forward(&a));
    expect_close(what, "y", dt, y, y2);
    expect_close(what, "hy", dt, hy, hy2);
    if (lstm)
        expect_close(what, "cy", dt, cy, cy2);
    expect_close(what, "workspace", dt, ws, ws2);

    /* backward, both from the CPU's workspace */
    ch_tensor *gx, *gh0, *gc0 = NULL, *gwx, *gwh, *gbx, *gbh;
    CHECK_OK(ch_rnn_seq_backward((ch_rnn_cell)cell, reverse, T, batch, x, wx, wh, ws, gy, ghy, gcy, &gx, &gh0,
                                 lstm ? &gc0 : NULL, &gwx, &gwh, &gbx, &gbh));
    ch_tensor *cpu_out[7] = {gx, gh0, gc0, gwx, gwh, gbx, gbh}, *gpu_out[7];
    for (int k = 0; k < 7; k++)
        gpu_out[k] = cpu_out[k] ? zeros_like(cpu_out[k]) : NULL;
    a.ws_in = dev_of(ws, &s[11]);
    a.gy = dev_of(gy, &s[12]);
    a.ghy = dev_of(ghy, &s[13]);
    a.gcy = dev_of(gcy, &s[14]);
    ch_tensor **dst[7] = {&a.gx, &a.gh0, &a.gc0, &a.gwx, &a.gwh, &a.gbx, &a.gbh};
    for (int k = 0; k < 7; k++)
        *dst[k] = (ch_tensor *)dev_of(gpu_out[k], &s[15 + k]);
    CHECK_OK(cu_rnn_seq_backward(&a));
    const char *names[7] = {"gx", "gh0", "gc0", "gwx", "gwh", "gbx", "gbh"};
    for (int k = 0; k < 7; k++)
        if (cpu_out[k])
            expect_close(what, names[k], dt, cpu_out[k], gpu_out[k]);

    ch_tensor *all[] = {x, h0, c0, wx, wh, bx, bh, gy, ghy, gcy, y, hy, cy, ws, y2, hy2, cy2, ws2};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        ch_tensor_release(all[k]);
    for (int k = 0; k < 7; k++) {
        ch_tensor_release(cpu_out[k]);
        ch_tensor_release(gpu_out[k]);
    }
}

/* The backend's own contract: a workspace of the wrong size is refused with
 * the op's name, before anything is written. */
static void test_contract(void) {
    int64_t batch[1] = {2}, off[1] = {0};
    int64_t xd[2] = {2, 3}, hd[2] = {2, 4}, wxd[2] = {4, 3}, whd[2] = {4, 4}, bd[1] = {4}, bad[2] = {2, 7};
    ch_tensor *x = filled(CH_FLOAT32, 2, xd, 1), *h0 = filled(CH_FLOAT32, 2, hd, 2), *wx = filled(CH_FLOAT32, 2, wxd, 3),
              *wh = filled(CH_FLOAT32, 2, whd, 4), *b = filled(CH_FLOAT32, 1, bd, 5), *y = filled(CH_FLOAT32, 2, hd, 6),
              *hy = filled(CH_FLOAT32, 2, hd, 7), *ws = filled(CH_FLOAT32, 2, bad, 8);
    ch_tensor s[8];
    ch_rnn_seq_args a = {};
    a.name = "n_step_rnn";
    a.cell = CH_RNN_TANH;
    a.T = 1;
    a.batch = batch;
    a.off = off;
    a.N = 2;
    a.NI = 3;
    a.H = 4;
    a.x = dev_of(x, &s[0]);
    a.wx = dev_of(wx, &s[1]);
    a.wh = dev_of(wh, &s[2]);
    a.bx = a.bh = dev_of(b, &s[3]);
    a.h0 = dev_of(h0, &s[4]);
    a.y = (ch_tensor *)dev_of(y, &s[5]);
    a.hy = (ch_tensor *)dev_of(hy, &s[6]);
    a.ws = (ch_tensor *)dev_of(ws, &s[7]);
    double before = at(hy, 0);
    EMU_CHECK_ERR(cu_rnn_seq_forward(&a), CH_ERR_INTERNAL, "n_step_rnn: the biases, initial states, outputs");
    CHECK(at(hy, 0) == before);
    ch_tensor *all[] = {x, h0, wx, wh, b, y, hy, ws};
    for (int k = 0; k < 8; k++)
        ch_tensor_release(all[k]);
}

int main(void) {
    static const int64_t uneven[4] = {4, 3, 3, 1}, ending[3] = {3, 2, 0}, one[1] = {2};
    for (int d = 0; d < 2; d++) {
        ch_dtype dt = d ? CH_FLOAT64 : CH_FLOAT32;
        for (int cell = 0; cell < 4; cell++)
            for (int reverse = 0; reverse < 2; reverse++) {
                compare(cell, reverse, dt, 4, uneven, 1, 1);
                compare(cell, reverse, dt, 3, ending, 0, 1);
            }
        for (int cell = 0; cell < 4; cell++)
            compare(cell, 0, dt, 1, one, 1, 0);
    }
    test_contract();
    return check_done("test_rnn_seq (emulated)");
}
