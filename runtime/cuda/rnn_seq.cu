/*
 * rnn_seq.cu -- the per-item kernels of the sequence RNNs on the GPU
 * (n_step_lstm / gru / rnn, one layer and direction; rnn_seq.c runs the
 * recurrence and hands the products to cuBLAS): the bias add of the input
 * projection, the copies of the state rows, one step's cell (one item per
 * row and unit) forward and backward, and the bias gradients.  Formulas and
 * the workspace layout are those of runtime/cpu/rnn_seq_kernels.h (the
 * backward reads the forward's workspace, whichever device wrote it), with
 * the gate functions of runtime/cpu/rnn_math.h; the file is compiled with
 * --fmad=false, so float32 cells round as on the CPU.
 *
 * Compiled here, but NOT yet executed on a GPU: tests/cuda/test_rnn_seq.cu
 * runs it emulated on the host (with a host stand-in for the cuBLAS
 * products) against the CPU; the GPU specs (spec/cuda/rnn_gpu_spec.lua)
 * compare F.n_step_lstm / gru / rnn with the CPU where a GPU exists.
 */
#include "backend.h"
#include "launch.cuh"

#include "../cpu/rnn_math.h"

CU_HD float seq_tanh(float v) { return rnn_tanhf(v); }
CU_HD double seq_tanh(double v) { return tanh(v); }
CU_HD float seq_sigmoid(float v) { return rnn_sigmoidf(v); }
CU_HD double seq_sigmoid(double v) { return rnn_sigmoid(v); }

/* The step's operands (plain device pointers, elements; see cu_rnn_step). */
template <typename T> struct seq_ptrs {
    T *ws;              /* the step's first workspace row, W wide */
    T *h, *c;           /* the running state (Bt rows of H) */
    T *y;               /* the step's first output row */
    const T *q, *bh;    /* GRU: h @ Wh^T (rows of 3H) and bh */
    const T *gy;        /* backward: the step's output gradient rows (NULL: zero) */
    T *dgx, *dgh;       /* backward: the gate gradients, rows of GH */
    int64_t H, W, GH;
    int cell;
};

/* Item k = row b, unit j of one step, forward. */
template <typename T> struct seq_cell_forward {
    seq_ptrs<T> p;
    CU_HD void operator()(int64_t k) const {
        int64_t H = p.H, b = k / H, j = k - b * H;
        T *g = p.ws + b * p.W;
        T *hb = p.h + b * H, *yb = p.y + b * H;
        if (p.cell == CH_RNN_LSTM) {
            T a = seq_tanh(g[j]), i = seq_sigmoid(g[H + j]), f = seq_sigmoid(g[2 * H + j]);
            T o = seq_sigmoid(g[3 * H + j]);
            T cpv = p.c[b * H + j];
            T cv = a * i + f * cpv;
            T co = seq_tanh(cv);
            g[j] = a, g[H + j] = i, g[2 * H + j] = f, g[3 * H + j] = o, g[4 * H + j] = co;
            g[5 * H + j] = cpv;
            p.c[b * H + j] = cv;
            T hv = o * co;
            hb[j] = hv;
            yb[j] = hv;
        } else if (p.cell == CH_RNN_GRU) {
            const T *q = p.q + b * 3 * H;
            T r = seq_sigmoid(g[j] + q[j] + p.bh[j]);
            T z = seq_sigmoid(g[H + j] + q[H + j] + p.bh[H + j]);
            T hh = q[2 * H + j] + p.bh[2 * H + j];
            T hbar = seq_tanh(g[2 * H + j] + r * hh);
            g[j] = r, g[H + j] = z, g[2 * H + j] = hbar, g[3 * H + j] = hh;
            T hv = (1 - z) * hbar + z * hb[j];
            hb[j] = hv;
            yb[j] = hv;
        } else {
            T v = p.cell == CH_RNN_RELU ? (g[j] > 0 ? g[j] : 0) : seq_tanh(g[j]);
            g[j] = v, hb[j] = v, yb[j] = v;
        }
    }
};

/* Item k = row b, unit j of one step, backward: the gate gradients of the
 * row, the running gc, and gh's direct part (GRU; the others' gh is
 * replaced by the step's product afterwards). */
template <typename T> struct seq_cell_backward {
    seq_ptrs<T> p;
    CU_HD void operator()(int64_t k) const {
        int64_t H = p.H, b = k / H, j = k - b * H;
        const T *g = p.ws + b * p.W;
        T *dx = p.dgx + b * p.GH;
        T gyv = p.gy ? p.gy[b * H + j] : 0;
        T *gh = p.h + b * H;
        if (p.cell == CH_RNN_LSTM) {
            T a = g[j], i = g[H + j], f = g[2 * H + j], o = g[3 * H + j], co = g[4 * H + j];
            T *gc = p.c + b * H;
            T ghv = gh[j] + gyv;
            T gt = ghv * o * (1 - co * co) + gc[j];
            dx[j] = gt * i * (1 - a * a);
            dx[H + j] = gt * a * i * (1 - i);
            dx[2 * H + j] = gt * g[5 * H + j] * f * (1 - f);
            dx[3 * H + j] = ghv * co * o * (1 - o);
            gc[j] = gt * f;
        } else if (p.cell == CH_RNN_GRU) {
            T r = g[j], z = g[H + j], hbar = g[2 * H + j], hh = g[3 * H + j], hp = g[4 * H + j];
            T *dh = p.dgh + b * p.GH;
            T gv = gh[j] + gyv;
            T dpre_h = gv * (1 - z) * (1 - hbar * hbar);
            T dpre_z = gv * (hp - hbar) * z * (1 - z);
            T dpre_r = dpre_h * hh * r * (1 - r);
            dx[j] = dpre_r, dx[H + j] = dpre_z, dx[2 * H + j] = dpre_h;
            dh[j] = dpre_r, dh[H + j] = dpre_z, dh[2 * H + j] = dpre_h * r;
            gh[j] = gv * z;
        } else {
            T gv = gh[j] + gyv, v = g[j];
            dx[j] = p.cell == CH_RNN_RELU ? (v > 0 ? gv : 0) : gv * (1 - v * v);
        }
    }
};

/* The input projection's bias, row by row of the workspace: bx (GRU) or
 * bx + bh (the others, whose recurrent bias is added once here). */
template <typename T> struct seq_add_bias {
    T *ws;
    const T *bx, *bh;
    int64_t W, GH;
    CU_HD void operator()(int64_t k) const {
        int64_t r = k / GH, j = k - r * GH;
        if (bh)
            ws[r * W + j] += bx[j] + bh[j];
        else
            ws[r * W + j] += bx[j];
    }
};

/* dst rows (ldd apart) = src rows (lds apart) of `width` elements; src
 * NULL writes zeros. */
template <typename T> struct seq_copy_rows {
    T *dst;
    const T *src;
    int64_t width, ldd, lds;
    CU_HD void operator()(int64_t k) const {
        int64_t r = k / width, j = k - r * width;
        dst[r * ldd + j] = src ? src[r * lds + j] : 0;
    }
};

/* out[j] = the sum of column j of a (n rows of m) in double, rows in order
 * (the CPU's rk_colsum: the same bits for the same a). */
template <typename T> struct seq_colsum {
    const T *a;
    T *out;
    int64_t n, m;
    CU_HD void operator()(int64_t j) const {
        double s = 0;
        for (int64_t r = 0; r < n; r++)
            s += a[r * m + j];
        out[j] = (T)s;
    }
};

template <typename T> static ch_status step_typed(int backward, const cu_rnn_step_ptrs *s, int64_t Bt) {
    seq_ptrs<T> p = {(T *)s->ws, (T *)s->h, (T *)s->c, (T *)s->y, (const T *)s->q, (const T *)s->bh,
                     (const T *)s->gy, (T *)s->dgx, (T *)s->dgh, s->H, s->W, s->GH, s->cell};
    if (backward)
        return cu_each(s->name, Bt * s->H, seq_cell_backward<T>{p});
    return cu_each(s->name, Bt * s->H, seq_cell_forward<T>{p});
}

extern "C" ch_status cu_rnn_step(int backward, int dt, const cu_rnn_step_ptrs *s, int64_t Bt) {
    if (dt == CH_FLOAT32)
        return step_typed<float>(backward, s, Bt);
    return step_typed<double>(backward, s, Bt);
}

extern "C" ch_status cu_rnn_add_bias(const char *fn, int dt, char *ws, const char *bx, const char *bh, int64_t N,
                                     int64_t W, int64_t GH) {
    if (dt == CH_FLOAT32)
        return cu_each(fn, N * GH, seq_add_bias<float>{(float *)ws, (const float *)bx, (const float *)bh, W, GH});
    return cu_each(fn, N * GH, seq_add_bias<double>{(double *)ws, (const double *)bx, (const double *)bh, W, GH});
}

extern "C" ch_status cu_rnn_copy_rows(const char *fn, int dt, char *dst, int64_t ldd, const char *src, int64_t lds,
                                      int64_t rows, int64_t width) {
    if (dt == CH_FLOAT32)
        return cu_each(fn, rows * width, seq_copy_rows<float>{(float *)dst, (const float *)src, width, ldd, lds});
    return cu_each(fn, rows * width, seq_copy_rows<double>{(double *)dst, (const double *)src, width, ldd, lds});
}

extern "C" ch_status cu_rnn_colsum(const char *fn, int dt, const char *a, int64_t n, int64_t m, char *out) {
    if (dt == CH_FLOAT32)
        return cu_each(fn, m, seq_colsum<float>{(const float *)a, (float *)out, n, m});
    return cu_each(fn, m, seq_colsum<double>{(const double *)a, (double *)out, n, m});
}
