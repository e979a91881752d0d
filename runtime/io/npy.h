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
    char str_kind;           /* 0 numeric; 'U' ('<U<n>', UTF-32 code units into
                                int32) or 'S' ('|S<n>', bytes into uint8) */
    int64_t str_len;         /* n: characters per item, the tensor's extra last
                                axis (numel counts items, not characters) */
} ch_npy_info;

/* Formats NumPy's v1.0 header (magic .. '\n', padded to 64 bytes) for a
 * C-order array; returns its length, 0 when cap is too small. */
size_t ch_npy_header(ch_dtype dt, int nd, const int64_t *dim, char *buf, size_t cap);
/* The same for a string tensor t (kind 'U': int32 code points, 'S': uint8
 * bytes; its last axis is the item length): descr '<U<n>' / '|S<n>' and the
 * shape without that axis; its length goes to *hn. */
ch_status ch_npy_header_str(const ch_tensor *t, char kind, const char *fn, char *buf, size_t cap, size_t *hn);
/* Checks a tensor to be written as kind (0, 'U' or 'S'); `fn` and `name`
 * prefix errors.  'U' code points must be Unicode scalar values (checked
 * when t is a contiguous CPU tensor: writers call it again on their copy). */
ch_status ch_npy_check_kind(const ch_tensor *t, char kind, const char *fn, const char *name);
/* The refusal of the plain (non-_ex) readers for string arrays. */
ch_status ch_npy_refuse_strings(const ch_npy_info *info, const char *what);
/* Maps a dtype descr such as '<f4' or '|u1' to info's dt, src_size, swap,
 * src_unsigned (and str_kind/str_len for '<U<n>'/'|S<n>'); `what` prefixes errors. */
ch_status ch_npy_parse_descr(const char *descr, const char *what, ch_npy_info *info);
/* Parses the header at the start of bytes[0..n); `what` prefixes errors. */
ch_status ch_npy_parse(const unsigned char *bytes, size_t n, const char *what, ch_npy_info *info);
/* Builds the tensor from `data` (the file's element bytes, at least
 * numel*src_size of them). */
ch_status ch_npy_decode(const ch_npy_info *info, const void *data, const char *what, ch_tensor **result);
/* ch_npy_from_memory that also reads string arrays (kind as ch_npy_load_ex). */
ch_status ch_npy_from_memory_ex(const void *bytes, size_t nbytes, const char *what, ch_tensor **result, char *kind);
/* A C-contiguous CPU version of t (t itself, retained, when it already is). */
ch_status ch_npy_host_contiguous(const ch_tensor *t, ch_tensor **out);

#endif
