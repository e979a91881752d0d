/*
 * lstm.cu -- Chainer's LSTM cell (F.lstm, L.LSTM) on the GPU: forward,
 * gradient and the gradient's gradient, one item per unit of c_prev (all
 * four gates of that unit), the same formulas as runtime/cpu/lstm_kernels.h.
 *
 * The gate functions are runtime/cpu/rnn_math.h's (float32 exp, sigmoid and
 * tanh in plain arithmetic; float64 tanh from the math library), called on
 * the device, and this file is compiled with --fmad=false
 * (runtime/cuda/CMakeLists.txt): float32 results are the CPU's bits on a GPU
 * too, float64 ones may differ in the last bits where the device's tanh
 * rounds otherwise than glibc's.
 *
 * Compiled here, but NOT yet executed on a GPU: tests/cuda/test_lstm.cu runs
 * it emulated on the host against the CPU, bit for bit; the GPU specs
 * (spec/cuda/rnn_gpu_spec.lua) compare it with the CPU where a GPU exists.
 */
#include "backend.h"
#include "launch.cuh"

#include "../cpu/rnn_math.h"

CU_HD float lstm_tanh(float v) { return rnn_tanhf(v); }
CU_HD double lstm_tanh(double v) { return tanh(v); }
CU_HD float lstm_sigmoid(float v) { return rnn_sigmoidf(v); }
CU_HD double lstm_sigmoid(double v) { return rnn_sigmoid(v); }

/* Where unit item j lives: rows below B have gates in x; c-sized tensors are
 * indexed by j itself, x-sized ones from gate (the unit's gate a; gate k is
 * k * S further). */
struct lstm_unit {
    bool in_x;
    int64_t gate;
};
CU_HD lstm_unit lstm_locate(int64_t j, int64_t B, int64_t U, int64_t S) {
    int64_t US = U * S, b = j / US, r = j - b * US, u = r / S, s = r - u * S;
    return {b < B, b * 4 * US + u * 4 * S + s};
}

/* The four gate activations of one unit. */
template <typename T> struct lstm_gates {
    T a, i, f, o;
};
template <typename T> CU_HD lstm_gates<T> lstm_activate(const T *g, int64_t S) {
    return {lstm_tanh(g[0]), lstm_sigmoid(g[S]), lstm_sigmoid(g[2 * S]), lstm_sigmoid(g[3 * S])};
}

/* What both gradient passes recompute for unit j: the gates, c_prev, tanh
 * of the new c, and the incoming gradient of h. */
template <typename T> struct lstm_recomputed {
    lstm_gates<T> g;
    T cpv, co, ghv;
};

/* Operands of one launch (plain device pointers; NULL gradients are zero). */
template <typename T> struct lstm_ptrs {
    const T *cp, *x, *gc, *gh, *ggcp, *ggx;
    T *out0, *out1, *out2, *out3;
    int64_t B, U, S;
};

/* c (out0) and h (out1); rows beyond x's batch keep c_prev. */
template <typename T> CU_HD lstm_recomputed<T> lstm_recompute(const lstm_ptrs<T> &p, lstm_unit w, int64_t j) {
    lstm_recomputed<T> r;
    r.g = lstm_activate(p.x + w.gate, p.S);
    r.cpv = p.cp[j];
    r.co = lstm_tanh(r.g.a * r.g.i + r.g.f * r.cpv);
    r.ghv = p.gh ? p.gh[j] : 0;
    return r;
}

template <typename T> struct lstm_forward_item {
    lstm_ptrs<T> p;
    CU_HD void operator()(int64_t j) const {
        lstm_unit w = lstm_locate(j, p.B, p.U, p.S);
        if (!w.in_x) {
            p.out0[j] = p.cp[j];
            return;
        }
        lstm_gates<T> g = lstm_activate(p.x + w.gate, p.S);
        T cv = g.a * g.i + g.f * p.cp[j];
        p.out0[j] = cv;
        p.out1[j] = g.o * lstm_tanh(cv);
    }
};

/* gc_prev (out0) and gx (out1). */
template <typename T> struct lstm_backward_item {
    lstm_ptrs<T> p;
    CU_HD void operator()(int64_t j) const {
        lstm_unit w = lstm_locate(j, p.B, p.U, p.S);
        T gcv = p.gc ? p.gc[j] : 0;
        if (!w.in_x) {
            p.out0[j] = gcv;
            return;
        }
        int64_t S = p.S;
        lstm_recomputed<T> r = lstm_recompute(p, w, j);
        lstm_gates<T> g = r.g;
        T cpv = r.cpv, co = r.co, ghv = r.ghv;
        T gt = ghv * g.o * (1 - co * co) + gcv; /* the total gradient of c */
        T *gx = p.out1 + w.gate;
        p.out0[j] = gt * g.f;
        gx[0] = gt * g.i * (1 - g.a * g.a);
        gx[S] = gt * g.a * g.i * (1 - g.i);
        gx[2 * S] = gt * cpv * g.f * (1 - g.f);
        gx[3 * S] = ghv * co * g.o * (1 - g.o);
    }
};

/* The gradients of <ggc_prev, gc_prev> + <ggx, gx> with respect to c_prev
 * (out0), x (out1), gc (out2) and gh (out3). */
template <typename T> struct lstm_grad_grad_item {
    lstm_ptrs<T> p;
    CU_HD void operator()(int64_t j) const {
        lstm_unit w = lstm_locate(j, p.B, p.U, p.S);
        T gCP = p.ggcp ? p.ggcp[j] : 0;
        if (!w.in_x) {
            p.out0[j] = 0;
            p.out2[j] = gCP;
            return;
        }
        int64_t S = p.S;
        lstm_recomputed<T> r = lstm_recompute(p, w, j);
        T a = r.g.a, i = r.g.i, f = r.g.f, o = r.g.o;
        T cpv = r.cpv, co = r.co, ghv = r.ghv, gcv = p.gc ? p.gc[j] : 0;
        const T *q = p.ggx ? p.ggx + w.gate : nullptr;
        T gA = q ? q[0] : 0, gI = q ? q[S] : 0, gF = q ? q[2 * S] : 0, gO = q ? q[3 * S] : 0;
        T dco2 = 1 - co * co, da2 = 1 - a * a, di = i * (1 - i), df = f * (1 - f), dO = o * (1 - o);
        T gt = ghv * o * dco2 + gcv;
        /* what multiplies gt in the upstream product */
        T Sg = gCP * f + gA * i * da2 + gI * a * di + gF * cpv * df;
        p.out2[j] = Sg;
        p.out3[j] = Sg * o * dco2 + gO * co * dO;
        T dc = (Sg * ghv * o * (-2 * co) + gO * ghv * dO) * dco2;
        T d_o = Sg * ghv * dco2 + gO * ghv * co * (1 - 2 * o);
        T d_a = gt * (-2 * gA * i * a + gI * di) + dc * i;
        T d_i = gt * (gA * da2 + gI * a * (1 - 2 * i)) + dc * a;
        T d_f = gt * (gCP + gF * cpv * (1 - 2 * f)) + dc * cpv;
        T *gx = p.out1 + w.gate;
        p.out0[j] = gt * gF * df + dc * f;
        gx[0] = d_a * da2;
        gx[S] = d_i * di;
        gx[2 * S] = d_f * df;
        gx[3 * S] = d_o * dO;
    }
};

template <typename T> static ch_status lstm_launch_typed(int pass, const cu_lstm_ptrs *q, int64_t n) {
    lstm_ptrs<T> p = {(const T *)q->c_prev, (const T *)q->x, (const T *)q->gc, (const T *)q->gh,
                      (const T *)q->ggc_prev, (const T *)q->ggx, (T *)q->out[0], (T *)q->out[1],
                      (T *)q->out[2], (T *)q->out[3], q->B, q->U, q->S};
    switch (pass) {
    case CU_LSTM_FORWARD: return cu_each("lstm", n, lstm_forward_item<T>{p});
    case CU_LSTM_BACKWARD: return cu_each("lstm (backward)", n, lstm_backward_item<T>{p});
    default: return cu_each("lstm (double backward)", n, lstm_grad_grad_item<T>{p});
    }
}

extern "C" ch_status cu_lstm_launch(int pass, int dt, const cu_lstm_ptrs *q, int64_t n) {
    if (dt == CH_FLOAT32)
        return lstm_launch_typed<float>(pass, q, n);
    return lstm_launch_typed<double>(pass, q, n);
}
