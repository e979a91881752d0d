/*
 * device_ops.c -- checks and forwarding for tensor ops on CUDA tensors
 * (see device_ops.h).  The kernels live in libchainlua_cuda.
 */
#include "internal.h"
#include "device_ops.h"

extern ch_cuda_hooks ch_cuda_table;

/* "the CPU" or "cuda:N" */
static const char *device_str(char *buf, size_t n, int dev) {
    if (dev == CH_CPU)
        snprintf(buf, n, "the CPU");
    else
        snprintf(buf, n, "cuda:%d", dev);
    return buf;
}

ch_status ch_same_device(const char *fn, const char *an, const ch_tensor *a, const char *bn, const ch_tensor *b) {
    if (a->dev == b->dev)
        return CH_OK;
    char da[32], db[32];
    return ch_fail(CH_ERR_DEVICE, "%s: argument '%s' is on %s but argument '%s' is on %s (both must be on one device; "
                   "move one with :to_device())", fn, an, device_str(da, sizeof da, a->dev), bn,
                   device_str(db, sizeof db, b->dev));
}

/* A GPU tensor exists only once the backend is loaded, so a missing hook
 * means a backend from another build. */
static ch_status missing(const char *fn, const char *what) {
    return ch_fail(CH_ERR_DEVICE, "%s: the CUDA backend has no %s kernels (%s)", fn, what, ch_cuda_info());
}

ch_status ch_device_elementwise(const char *fn, const ch_cuda_ew *w) {
    if (!ch_cuda_table.elementwise)
        return missing(fn, "elementwise");
    return ch_cuda_table.elementwise(w);
}

ch_status ch_device_reduce(const char *fn, int op, const ch_tensor *x, const uint8_t *red, ch_tensor *out) {
    if (!ch_cuda_table.reduce)
        return missing(fn, "reduction");
    return ch_cuda_table.reduce(op, x, red, out);
}

ch_status ch_device_matmul(const char *fn, const ch_tensor *a, const ch_tensor *b, int transa, int transb,
                           ch_tensor *out) {
    if (!ch_cuda_table.matmul)
        return missing(fn, "matmul");
    return ch_cuda_table.matmul(a, b, transa, transb, out);
}

ch_status ch_device_where(const char *fn, const ch_tensor *cond, const ch_tensor *a, const ch_tensor *b,
                          ch_tensor *out) {
    if (!ch_cuda_table.where)
        return missing(fn, "where");
    return ch_cuda_table.where(cond, a, b, out);
}

ch_status ch_device_axpby(const char *fn, double a, const ch_tensor *x, double b, ch_tensor *y) {
    if (!ch_cuda_table.axpby)
        return missing(fn, "axpby");
    return ch_cuda_table.axpby(a, x, b, y);
}

ch_status ch_device_gemm(const char *fn, int transa, int transb, double alpha, const ch_tensor *a,
                         const ch_tensor *b, double beta, ch_tensor *c) {
    if (!ch_cuda_table.gemm)
        return missing(fn, "gemm");
    return ch_cuda_table.gemm(transa, transb, alpha, a, b, beta, c);
}

ch_status ch_device_opt_update(const char *fn, const ch_cuda_opt *u) {
    if (!ch_cuda_table.opt_update)
        return missing(fn, "optimizer update");
    return ch_cuda_table.opt_update(u);
}

ch_status ch_device_softmax(const char *fn, const ch_cuda_softmax *s) {
    if (!ch_cuda_table.softmax)
        return missing(fn, "softmax");
    return ch_cuda_table.softmax(s);
}

ch_status ch_device_activation_grad(const char *fn, int op, const ch_tensor *y, const ch_tensor *gy, ch_tensor *gx) {
    if (!ch_cuda_table.activation_grad)
        return missing(fn, "activation-gradient");
    return ch_cuda_table.activation_grad(op, y, gy, gx);
}
