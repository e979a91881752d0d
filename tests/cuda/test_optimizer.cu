/* test_optimizer.cu -- the GPU's fused optimizer updates (optimizer.c,
 * optimizer.cu), all 15 optimizers, emulated on the host against the CPU's,
 * bit for bit.
 * emulates: optimizer.c optimizer.cu */
#include "emulator.h"

enum { N = 1000 };

/* The number of state arrays of each kind (the public functions' order). */
static int states_of(int kind, int amsgrad) {
    switch (kind) {
    case CU_OPT_SGD: return 0;
    case CU_OPT_ADAM: return amsgrad ? 3 : 2;
    case CU_OPT_ADADELTA:
    case CU_OPT_MSVAG: return 2;
    case CU_OPT_GRAVES:
    case CU_OPT_SMORMS3: return 3;
    default: return 1;
    }
}

/* The update of `kind` with these hyperparameters on the CPU (libchainlua)
 * and on the emulated GPU, from the same starting values. */
static void compare(int kind, ch_dtype dt, ch_opt_args u, const char *what) {
    int nstates = states_of(kind, u.amsgrad);
    int64_t shape[1] = {N};
    ch_tensor *cpu[5] = {0}, *gpu[5] = {0}; /* param, grad, states */
    for (int k = 0; k < 2 + nstates; k++) {
        CHECK_OK(ch_empty(dt, 1, shape, CH_CPU, &cpu[k]));
        /* states start non-negative where they hold squares */
        double lo = k < 2 ? -1.0 : 0.0, hi = 1.0;
        if (kind == CU_OPT_GRAVES && k == 2) lo = 0.5;  /* n - gm^2 + eps stays positive */
        if (kind == CU_OPT_GRAVES && k == 3) hi = 0.1;
        emu_fill_uniform(cpu[k], lo, hi, 7 * kind + k + 1);
        CHECK_OK(ch_copy(cpu[k], &gpu[k]));
    }
    switch (kind) {
    case CU_OPT_SGD: CHECK_OK(ch_sgd_update(cpu[0], cpu[1], u.lr)); break;
    case CU_OPT_MOMENTUM: CHECK_OK(ch_momentum_sgd_update(cpu[0], cpu[1], cpu[2], u.lr, u.momentum)); break;
    case CU_OPT_CMOMENTUM:
        CHECK_OK(ch_corrected_momentum_sgd_update(cpu[0], cpu[1], cpu[2], u.lr, u.momentum));
        break;
    case CU_OPT_NESTEROV: CHECK_OK(ch_nesterov_ag_update(cpu[0], cpu[1], cpu[2], u.lr, u.momentum)); break;
    case CU_OPT_ADAGRAD: CHECK_OK(ch_adagrad_update(cpu[0], cpu[1], cpu[2], u.lr, u.eps)); break;
    case CU_OPT_ADADELTA: CHECK_OK(ch_adadelta_update(cpu[0], cpu[1], cpu[2], cpu[3], u.rho, u.eps)); break;
    case CU_OPT_RMSPROP:
        CHECK_OK(ch_rmsprop_update(cpu[0], cpu[1], cpu[2], u.lr, u.alpha, u.eps, u.eps_inside_sqrt));
        break;
    case CU_OPT_GRAVES:
        CHECK_OK(ch_rmsprop_graves_update(cpu[0], cpu[1], cpu[2], cpu[3], cpu[4], u.lr, u.alpha, u.momentum, u.eps));
        break;
    case CU_OPT_SMORMS3: CHECK_OK(ch_smorms3_update(cpu[0], cpu[1], cpu[2], cpu[3], cpu[4], u.lr, u.eps)); break;
    case CU_OPT_MSVAG:
        CHECK_OK(ch_msvag_update(cpu[0], cpu[1], cpu[2], cpu[3], u.lr, u.beta1, u.beta_power, u.rho, u.eta, u.wd));
        break;
    default:
        CHECK_OK(ch_adam_update(cpu[0], cpu[1], cpu[2], cpu[3], u.amsgrad ? cpu[4] : NULL, u.lr, u.beta1, u.beta2,
                                u.eps, u.eta, u.wd, u.bounded, u.lower, u.upper));
    }
    ch_tensor dev[5];
    for (int k = 0; k < 2 + nstates; k++)
        dev[k] = emu_on_device(gpu[k]);
    u.param = &dev[0];
    u.grad = &dev[1];
    for (int k = 0; k < nstates; k++)
        u.state[k] = &dev[2 + k];
    CHECK_OK(cu_opt_update(kind, &u));
    for (int k = 0; k < 2 + nstates; k++) {
        int64_t bad = emu_bit_mismatches(cpu[k], gpu[k]);
        if (bad) {
            fprintf(stderr, "%s %s: operand %d differs from the CPU in %lld of %d elements\n", what,
                    dt == CH_FLOAT32 ? "float32" : "float64", k, (long long)bad, N);
            check_failures++;
        }
    }
    for (int k = 0; k < 5; k++) {
        ch_tensor_release(cpu[k]);
        ch_tensor_release(gpu[k]);
    }
}

static void test_updates(ch_dtype dt) {
    ch_opt_args u = {};
    u.lr = 0.05;
    u.momentum = 0.9;
    compare(CU_OPT_SGD, dt, u, "SGD");
    compare(CU_OPT_MOMENTUM, dt, u, "MomentumSGD");
    compare(CU_OPT_CMOMENTUM, dt, u, "CorrectedMomentumSGD");
    compare(CU_OPT_NESTEROV, dt, u, "NesterovAG");
    ch_opt_args a = {};
    a.lr = 0.003;
    a.beta1 = 0.9;
    a.beta2 = 0.999;
    a.eps = 1e-8;
    a.eta = 1.0;
    compare(CU_OPT_ADAM, dt, a, "Adam");
    a.wd = 0.01;
    compare(CU_OPT_ADAM, dt, a, "AdamW");
    a.wd = 0;
    a.amsgrad = 1;
    compare(CU_OPT_ADAM, dt, a, "AMSGrad");
    a.amsgrad = 0;
    a.bounded = 1;
    a.lower = 0.01;
    a.upper = 0.5;
    compare(CU_OPT_ADAM, dt, a, "AdaBound");

    ch_opt_args g = {};
    g.lr = 0.01;
    g.eps = 1e-8;
    compare(CU_OPT_ADAGRAD, dt, g, "AdaGrad");
    ch_opt_args d = {};
    d.rho = 0.95;
    d.eps = 1e-6;
    compare(CU_OPT_ADADELTA, dt, d, "AdaDelta");
    ch_opt_args r = {};
    r.lr = 0.01;
    r.alpha = 0.99;
    r.eps = 1e-8;
    compare(CU_OPT_RMSPROP, dt, r, "RMSprop");
    r.eps_inside_sqrt = 1;
    compare(CU_OPT_RMSPROP, dt, r, "RMSprop (eps inside the root)");
    ch_opt_args v = {};
    v.lr = 1e-4;
    v.alpha = 0.95;
    v.momentum = 0.9;
    v.eps = 1e-4;
    compare(CU_OPT_GRAVES, dt, v, "RMSpropGraves");
    ch_opt_args s = {};
    s.lr = 0.001;
    s.eps = 1e-16;
    compare(CU_OPT_SMORMS3, dt, s, "SMORMS3");
    ch_opt_args m = {};
    m.lr = 0.1;
    m.beta1 = 0.9;
    m.beta_power = 0.81;
    m.rho = 0.5;
    m.eta = 1.0;
    m.wd = 0.01;
    compare(CU_OPT_MSVAG, dt, m, "MSVAG");
}

/* The backend's own contract check: a state of another length is refused
 * with the optimizer's name, before anything is written. */
static void test_mismatched_state(void) {
    int64_t n = 8, m = 7;
    ch_tensor *p, *g, *v;
    CHECK_OK(ch_full(CH_FLOAT32, 1, &n, 1.0, CH_CPU, &p));
    CHECK_OK(ch_full(CH_FLOAT32, 1, &n, 1.0, CH_CPU, &g));
    CHECK_OK(ch_full(CH_FLOAT32, 1, &m, 0.0, CH_CPU, &v));
    ch_tensor dp = emu_on_device(p), dg = emu_on_device(g), dv = emu_on_device(v);
    ch_opt_args u = {};
    u.name = "MomentumSGD";
    u.lr = 0.1;
    u.param = &dp;
    u.grad = &dg;
    u.state[0] = &dv;
    EMU_CHECK_ERR(cu_opt_update(CU_OPT_MOMENTUM, &u), CH_ERR_INTERNAL, "MomentumSGD: the gradient and the states");
    CHECK(at(p, 0) == 1.0);
    ch_tensor_release(p);
    ch_tensor_release(g);
    ch_tensor_release(v);
}

int main(void) {
    test_updates(CH_FLOAT32);
    test_updates(CH_FLOAT64);
    test_mismatched_state();
    return check_done("test_optimizer (emulated)");
}
