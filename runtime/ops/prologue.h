/*
 * prologue.h -- the checks and conversions that front doors (runtime/ops/)
 * share, so that each one reads as: check the arguments, plan, allocate,
 * run one kernel.  Every check names the function and the argument in its
 * message, as users see it.
 */
#ifndef CHAINLUA_OPS_PROLOGUE_H
#define CHAINLUA_OPS_PROLOGUE_H

#include "../core/internal.h"
#include "../core/kernels.h"

/* Fails with CH_ERR_DEVICE unless a and b are on one device; the message
 * names fn, both arguments and both devices. */
ch_status ch_same_device(const char *fn, const char *an, const ch_tensor *a, const char *bn, const ch_tensor *b);

/* a and b are usable tensors (ch_check_tensor) on one device. */
ch_status ch_check_pair(const char *fn, const char *an, const ch_tensor *a, const char *bn, const ch_tensor *b);

/* t is usable and has a float dtype (float16, float32, float64). */
ch_status ch_want_float(const char *fn, const char *arg, const ch_tensor *t);
/* t is usable and has dtype float32 or float64. */
ch_status ch_want_f32_f64(const char *fn, const char *arg, const ch_tensor *t);
/* t is usable, on ref's device, and has ref's shape (and dtype when
 * same_dtype); ref_name names ref in the message. */
ch_status ch_want_like(const char *fn, const char *arg, const ch_tensor *t, const char *ref_name,
                       const ch_tensor *ref, int same_dtype);

/* n tensors made contiguous in dtype dt (each out[i] a new reference, the
 * input itself when it already is); on failure nothing is held. */
ch_status ch_contiguous_all(const ch_tensor *const *in, int n, ch_dtype dt, ch_tensor **out);
/* Copies src into dst (same shape, any layouts, dtypes and devices; ops/copy.c):
 * the CPU's copy kernel, or the CUDA backend's copy service when a GPU is
 * involved.  No checks: views built by a front door may be passed. */
ch_status ch_copy_any(ch_tensor *dst, const ch_tensor *src);
/* v as a contiguous int64 tensor on the CPU (v itself, retained, when it
 * already is one), for front doors whose checks read values (labels,
 * lengths). */
ch_status ch_host_int64(const ch_tensor *v, ch_tensor **out);
/* Releases n tensors (NULL entries are fine). */
void ch_release_all(ch_tensor **t, int n);

/* The elements of contiguous t readable on the host, for front doors that
 * check values (ids, indices): *data points into t itself on the CPU, or
 * into *copy, a CPU copy of t made here otherwise (release it after). */
ch_status ch_host_data(const ch_tensor *t, ch_tensor **copy, const void **data);

/* ---- the kernel of a device (dispatch.c) --------------------------------- */
/* The table of a device: the CPU's, the CUDA backend's, or an empty one. */
const ch_kernel_table *ch_kernels(int device);
/* The failure for a missing kernel: "<fn> has no kernel for cuda:0 yet;
 * move the tensor with :to_cpu()". */
ch_status ch_no_kernel(const char *fn, int device);

/* In a front door: `k` = device dev's kernel `name`, or return the failure
 * naming fn.  Use it before allocating anything.
 *   CH_KERNEL(k, lrn_forward, x->dev, fn);  ...  CH_TRY(k(xc, ...)); */
#define CH_KERNEL(var, name, dev, fn)                          \
    ch_##name##_kernel *var = ch_kernels(dev)->name;           \
    if (!var)                                                  \
        return ch_no_kernel((fn), (dev))

extern const ch_kernel_table ch_cpu_kernels;   /* cpu/kernel_table.c */

#endif
