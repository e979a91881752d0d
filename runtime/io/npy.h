/* npy.h -- the .npy format pieces shared by npy.c and npz.c (internal). */
#ifndef CHAINLUA_IO_NPY_H
#define CHAINLUA_IO_NPY_H

#include "../core/internal.h"

/* What a .npy header says. */
typedef struct ch_npy_info {
    ch_dtype dt;             /* the tensor dtype we load into */
    int nd;
    int64_t dim[CH_MAX_DIMS];
    int64_t numel;
    int fortran;             /* data is in Fortran (column-major) order */
    int swap;                /* data is big-endian */
    int src_size;            /* bytes per element in the file */
    int src_unsigned;        /* unsigned source wider than 1 byte (widened) */
    size_t data_offset;      /* first data byte, from the start of the file */
} ch_npy_info;

/* Formats NumPy's v1.0 header (magic .. '\n', padded to 64 bytes) for a
 * C-order array; returns its length, 0 when cap is too small. */
size_t ch_npy_header(ch_dtype dt, int nd, const int64_t *dim, char *buf, size_t cap);
/* Parses the header at the start of bytes[0..n); `what` prefixes errors. */
ch_status ch_npy_parse(const unsigned char *bytes, size_t n, const char *what, ch_npy_info *info);
/* Builds the tensor from `data` (the file's element bytes, at least
 * numel*src_size of them). */
ch_status ch_npy_decode(const ch_npy_info *info, const void *data, ch_tensor **result);
/* A C-contiguous CPU version of t (t itself, retained, when it already is). */
ch_status ch_npy_host_contiguous(const ch_tensor *t, ch_tensor **out);

#endif
