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

#endif
