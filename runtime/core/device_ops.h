/*
 * device_ops.h -- the core's side of running tensor ops on a GPU: the
 * device-agreement check and the forwarding to the CUDA backend's hooks
 * (runtime/core/cuda_hooks.h).  The CPU files call these only after one
 * test of t->dev, so CPU work pays nothing for them.
 */
#ifndef CHAINLUA_DEVICE_OPS_H
#define CHAINLUA_DEVICE_OPS_H

#include "cuda_hooks.h"

/* Fails with CH_ERR_DEVICE unless a and b are on one device; the message
 * names fn, both arguments and both devices. */
ch_status ch_same_device(const char *fn, const char *an, const ch_tensor *a, const char *bn, const ch_tensor *b);

/* Forward to the backend; fail clearly when it lacks the hook. */
ch_status ch_device_elementwise(const char *fn, const ch_cuda_ew *w);
ch_status ch_device_reduce(const char *fn, int op, const ch_tensor *x, const uint8_t *red, ch_tensor *out);
ch_status ch_device_matmul(const char *fn, const ch_tensor *a, const ch_tensor *b, int transa, int transb,
                           ch_tensor *out);
ch_status ch_device_where(const char *fn, const ch_tensor *cond, const ch_tensor *a, const ch_tensor *b,
                          ch_tensor *out);
ch_status ch_device_axpby(const char *fn, double a, const ch_tensor *x, double b, ch_tensor *y);
ch_status ch_device_gemm(const char *fn, int transa, int transb, double alpha, const ch_tensor *a,
                         const ch_tensor *b, double beta, ch_tensor *c);
ch_status ch_device_opt_update(const char *fn, const ch_cuda_opt *u);
ch_status ch_device_softmax(const char *fn, const ch_cuda_softmax *s);
ch_status ch_device_activation_grad(const char *fn, int op, const ch_tensor *y, const ch_tensor *gy, ch_tensor *gx);

#endif
