/* npy.c -- NumPy's .npy format: write v1.0, read v1.0/2.0/3.0.
 *
 * The header is a Python dict literal, e.g.
 *   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
 * written byte for byte as NumPy 1.24 writes it: keys sorted, the spare
 * spaces NumPy leaves for in-place growth of the first axis, then spaces and
 * a '\n' so that magic + header is a multiple of 64 bytes. */
#include "npy.h"
#include "atomic.h"

#include <errno.h>
#include <stdlib.h>

static const char *descr_of(ch_dtype dt) {
    switch (dt) {
    case CH_BOOL: return "|b1";
    case CH_INT8: return "|i1";
    case CH_UINT8: return "|u1";
    case CH_INT16: return "<i2";
    case CH_INT32: return "<i4";
    case CH_INT64: return "<i8";
    case CH_FLOAT16: return "<f2";
    case CH_FLOAT32: return "<f4";
    case CH_FLOAT64: return "<f8";
    default: return NULL;
    }
}

static size_t header_for(const char *descr, int nd, const int64_t *dim, char *buf, size_t cap) {
    char dict[1024];
    size_t n = 0;
    n += (size_t)snprintf(dict + n, sizeof dict - n, "{'descr': '%s', 'fortran_order': False, 'shape': (",
                          descr);
    for (int i = 0; i < nd; i++)
        n += (size_t)snprintf(dict + n, sizeof dict - n, i ? ", %lld" : "%lld", (long long)dim[i]);
    n += (size_t)snprintf(dict + n, sizeof dict - n, nd == 1 ? ",), }" : "), }");
    if (nd > 0) { /* NumPy's GROWTH_AXIS_MAX_DIGITS (21) minus the digits of dim[0] */
        char d0[32];
        int len = snprintf(d0, sizeof d0, "%lld", (long long)dim[0]);
        for (int i = len; i < 21; i++)
            dict[n++] = ' ';
    }
    size_t total = 10 + n + 1;
    size_t padded = (total + 63) / 64 * 64;
    if (padded > cap || padded - 10 > 65535)
        return 0;
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    size_t hlen = padded - 10;
    buf[8] = (char)(hlen & 0xff);
    buf[9] = (char)(hlen >> 8);
    memcpy(buf + 10, dict, n);
    memset(buf + 10 + n, ' ', padded - total);
    buf[padded - 1] = '\n';
    return padded;
}

size_t ch_npy_header(ch_dtype dt, int nd, const int64_t *dim, char *buf, size_t cap) {
    return header_for(descr_of(dt), nd, dim, buf, cap);
}

/* A Unicode scalar value: at most U+10FFFF and not a UTF-16 surrogate. */
static int is_scalar_value(uint32_t c) { return c <= 0x10FFFF && (c < 0xD800 || c > 0xDFFF); }

ch_status ch_npy_check_kind(const ch_tensor *t, char kind, const char *fn, const char *name) {
    if (kind == 0)
        return CH_OK;
    if (kind != 'U' && kind != 'S')
        return ch_fail(CH_ERR_ARG, "%s: '%s': string kind must be 'U' or 'S' (got %d)", fn, name, (int)kind);
    ch_dtype want = kind == 'U' ? CH_INT32 : CH_UINT8;
    if ((ch_dtype)t->dt != want || t->nd < 1 || t->dim[t->nd - 1] < 1)
        return ch_fail(CH_ERR_ARG, "%s: '%s': a '%c' string array is a %s tensor whose last axis (at least 1) is "
                       "the item length (got %s with %d dimensions)", fn, name, kind, ch_dtype_name(want),
                       ch_dtype_name((ch_dtype)t->dt), t->nd);
    if (kind == 'U' && t->dev == CH_CPU && ch_is_contiguous(t)) {
        const uint32_t *u = (const uint32_t *)ch_base(t);
        for (int64_t i = 0; i < t->numel; i++)
            if (!is_scalar_value(u[i]))
                return ch_fail(CH_ERR_ARG, "%s: '%s': code point %lld (0x%lX) is not a Unicode scalar value", fn,
                               name, (long long)i, (unsigned long)u[i]);
    }
    return CH_OK;
}

ch_status ch_npy_header_str(const ch_tensor *t, char kind, const char *fn, char *buf, size_t cap, size_t *hn) {
    int64_t len = t->dim[t->nd - 1];
    if (len > (1 << 28))
        return ch_fail(CH_ERR_ARG, "%s: string items of %lld characters are too long", fn, (long long)len);
    char descr[32];
    snprintf(descr, sizeof descr, kind == 'U' ? "<U%lld" : "|S%lld", (long long)len);
    *hn = header_for(descr, t->nd - 1, t->dim, buf, cap);
    return *hn ? CH_OK : ch_fail(CH_ERR_INTERNAL, "%s: header too long", fn);
}

ch_status ch_npy_refuse_strings(const ch_npy_info *info, const char *what) {
    if (!info->str_kind)
        return CH_OK;
    return ch_fail(CH_ERR_FORMAT, "%s: string arrays ('%c' dtype of %lld characters) are read by the _ex functions "
                   "(ch_npy_load_ex, ch_npz_reader_load_ex)", what, info->str_kind, (long long)info->str_len);
}

/* ---- header parsing: a tiny reader for the dict literal ----------------- */
typedef struct cursor {
    const char *p, *end;
} cursor;

static void skip_ws(cursor *c) {
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

static int take(cursor *c, char ch) {
    skip_ws(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return 1;
    }
    return 0;
}

/* A quoted string into out (at most cap-1 chars). */
static int quoted(cursor *c, char *out, size_t cap) {
    skip_ws(c);
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"'))
        return 0;
    char q = *c->p++;
    size_t n = 0;
    while (c->p < c->end && *c->p != q) {
        if (n + 1 >= cap)
            return 0;
        out[n++] = *c->p++;
    }
    if (c->p >= c->end)
        return 0;
    c->p++;
    out[n] = 0;
    return 1;
}

static int word(cursor *c, const char *w) {
    skip_ws(c);
    size_t n = strlen(w);
    if ((size_t)(c->end - c->p) >= n && memcmp(c->p, w, n) == 0) {
        c->p += n;
        return 1;
    }
    return 0;
}

/* Maps a descr like '<f4' to (dtype, size, swap, unsigned-widen). */
ch_status ch_npy_parse_descr(const char *d, const char *what, ch_npy_info *info) {
    char order = d[0];
    const char *t = d;
    if (order == '<' || order == '>' || order == '|' || order == '=')
        t = d + 1;
    else
        order = '=';
    char kind = t[0];
    char *endp = NULL;
    long size = strtol(t + 1, &endp, 10);
    if (kind == 'O')
        return ch_fail(CH_ERR_FORMAT, "%s: object arrays (descr '%s') are not supported: they hold pickled Python "
                       "objects; save numeric arrays instead", what, d);
    if (!t[0] || endp == t + 1 || *endp != 0)
        return ch_fail(CH_ERR_FORMAT, "%s: unsupported dtype descr '%s'", what, d);
    int big = order == '>';
    if (kind == 'U' || kind == 'S' || kind == 'a') {
        /* one item is `size` characters: UTF-32 code units or bytes */
        if (size < 0 || size > (1 << 28))
            return ch_fail(CH_ERR_FORMAT, "%s: string dtype descr '%s' has an impossible item length", what, d);
        info->str_kind = kind == 'U' ? 'U' : 'S';
        info->str_len = size;
        info->dt = kind == 'U' ? CH_INT32 : CH_UINT8;
        info->src_size = (int)(kind == 'U' ? 4 * size : size);
        info->swap = big && kind == 'U';
        return CH_OK;
    }
    info->src_size = (int)size;
    info->src_unsigned = 0;
    int ok = 1;
    switch (kind) {
    case 'b': case '?': ok = size == 1; info->dt = CH_BOOL; break;
    case 'i':
        switch (size) {
        case 1: info->dt = CH_INT8; break;
        case 2: info->dt = CH_INT16; break;
        case 4: info->dt = CH_INT32; break;
        case 8: info->dt = CH_INT64; break;
        default: ok = 0;
        }
        break;
    case 'u':
        /* uint16/uint32 widen losslessly into the next signed type */
        switch (size) {
        case 1: info->dt = CH_UINT8; break;
        case 2: info->dt = CH_INT32; info->src_unsigned = 1; break;
        case 4: info->dt = CH_INT64; info->src_unsigned = 1; break;
        default: ok = 0;
        }
        break;
    case 'f':
        switch (size) {
        case 2: info->dt = CH_FLOAT16; break;
        case 4: info->dt = CH_FLOAT32; break;
        case 8: info->dt = CH_FLOAT64; break;
        default: ok = 0;
        }
        break;
    default: ok = 0;
    }
    if (!ok)
        return ch_fail(CH_ERR_FORMAT, "%s: dtype descr '%s' has no chainlua dtype (supported: bool, int8/16/32/64, "
                       "uint8/16/32, float16/32/64)", what, d);
    info->swap = big && size > 1;
    return CH_OK;
}

ch_status ch_npy_parse(const unsigned char *b, size_t n, const char *what, ch_npy_info *info) {
    memset(info, 0, sizeof *info);
    if (n < 10 || memcmp(b, "\x93NUMPY", 6) != 0)
        return ch_fail(CH_ERR_FORMAT, "%s: not a .npy file (%s)", what, n < 10 ? "too short" : "bad magic");
    int major = b[6];
    size_t hlen, start;
    if (major == 1) {
        hlen = (size_t)b[8] | ((size_t)b[9] << 8);
        start = 10;
    } else if (major == 2 || major == 3) {
        if (n < 12)
            return ch_fail(CH_ERR_FORMAT, "%s: truncated .npy header", what);
        hlen = (size_t)b[8] | ((size_t)b[9] << 8) | ((size_t)b[10] << 16) | ((size_t)b[11] << 24);
        start = 12;
    } else {
        return ch_fail(CH_ERR_FORMAT, "%s: unsupported .npy format version %d.%d", what, major, b[7]);
    }
    if (hlen > n - start)
        return ch_fail(CH_ERR_FORMAT, "%s: truncated .npy header (%zu bytes announced, %zu present)", what, hlen,
                       n - start);
    cursor c = {(const char *)b + start, (const char *)b + start + hlen};
    int have_descr = 0, have_fortran = 0, have_shape = 0;
    if (!take(&c, '{'))
        return ch_fail(CH_ERR_FORMAT, "%s: malformed .npy header (expected '{')", what);
    for (;;) {
        if (take(&c, '}'))
            break;
        char key[32];
        if (!quoted(&c, key, sizeof key) || !take(&c, ':'))
            return ch_fail(CH_ERR_FORMAT, "%s: malformed .npy header (expected 'key': value)", what);
        if (strcmp(key, "descr") == 0) {
            char d[64];
            skip_ws(&c);
            if (c.p < c.end && *c.p == '[')
                return ch_fail(CH_ERR_FORMAT, "%s: structured arrays (record dtypes) are not supported", what);
            if (!quoted(&c, d, sizeof d))
                return ch_fail(CH_ERR_FORMAT, "%s: malformed 'descr' in the .npy header", what);
            CH_TRY(ch_npy_parse_descr(d, what, info));
            have_descr = 1;
        } else if (strcmp(key, "fortran_order") == 0) {
            if (word(&c, "True"))
                info->fortran = 1;
            else if (word(&c, "False"))
                info->fortran = 0;
            else
                return ch_fail(CH_ERR_FORMAT, "%s: malformed 'fortran_order' in the .npy header", what);
            have_fortran = 1;
        } else if (strcmp(key, "shape") == 0) {
            if (!take(&c, '('))
                return ch_fail(CH_ERR_FORMAT, "%s: malformed 'shape' in the .npy header", what);
            int nd = 0;
            while (!take(&c, ')')) {
                skip_ws(&c);
                int64_t v = 0;
                int digits = 0;
                while (c.p < c.end && *c.p >= '0' && *c.p <= '9') {
                    if (v > (INT64_MAX - 9) / 10)
                        return ch_fail(CH_ERR_FORMAT, "%s: shape entry too large in the .npy header", what);
                    v = v * 10 + (*c.p++ - '0');
                    digits++;
                }
                if (c.p < c.end && *c.p == 'L') /* Python 2 longs */
                    c.p++;
                if (!digits)
                    return ch_fail(CH_ERR_FORMAT, "%s: malformed 'shape' in the .npy header", what);
                if (nd >= CH_MAX_DIMS)
                    return ch_fail(CH_ERR_FORMAT, "%s: more than %d dimensions", what, CH_MAX_DIMS);
                info->dim[nd++] = v;
                if (!take(&c, ',')) {
                    if (!take(&c, ')'))
                        return ch_fail(CH_ERR_FORMAT, "%s: malformed 'shape' in the .npy header", what);
                    break;
                }
            }
            info->nd = nd;
            have_shape = 1;
        } else {
            return ch_fail(CH_ERR_FORMAT, "%s: unexpected key '%s' in the .npy header", what, key);
        }
        if (!take(&c, ',')) {
            if (!take(&c, '}'))
                return ch_fail(CH_ERR_FORMAT, "%s: malformed .npy header (expected ',' or '}')", what);
            break;
        }
    }
    if (!have_descr || !have_fortran || !have_shape)
        return ch_fail(CH_ERR_FORMAT, "%s: the .npy header lacks '%s'", what,
                       !have_descr ? "descr" : !have_fortran ? "fortran_order" : "shape");
    /* sizes must fit comfortably in 63 bits */
    int64_t numel = 1;
    for (int i = 0; i < info->nd; i++) {
        int64_t d = info->dim[i];
        if (d != 0 && numel > (INT64_MAX / 16) / d)
            return ch_fail(CH_ERR_FORMAT, "%s: shape too large in the .npy header", what);
        numel *= d;
    }
    if (info->str_kind) {
        if (info->nd >= CH_MAX_DIMS)
            return ch_fail(CH_ERR_FORMAT, "%s: a string array of %d dimensions needs one more for its characters "
                           "(at most %d in all)", what, info->nd, CH_MAX_DIMS);
        if (info->str_len != 0 && numel > (INT64_MAX / 16) / (4 * info->str_len))
            return ch_fail(CH_ERR_FORMAT, "%s: shape too large in the .npy header", what);
    }
    info->numel = numel;
    info->data_offset = start + hlen;
    return CH_OK;
}

static inline uint64_t load_swapped(const unsigned char *s, int size, int swap) {
    uint64_t v = 0;
    if (swap)
        for (int k = 0; k < size; k++) v = (v << 8) | s[k];
    else
        for (int k = size - 1; k >= 0; k--) v = (v << 8) | s[k];
    return v;
}

/* Converts file elements into t's (C-contiguous) storage. */
static void convert(const ch_npy_info *info, const unsigned char *src, char *dst, int64_t n) {
    int fz = info->src_size;
    size_t tz = ch_dtype_size(info->dt);
    if (info->str_kind) { /* n items of str_len code units each */
        n *= info->str_len;
        fz = info->str_kind == 'U' ? 4 : 1;
    }
    if (info->dt == CH_BOOL) { /* normalise stray non-0/1 bytes */
        for (int64_t i = 0; i < n; i++)
            dst[i] = src[i] != 0;
        return;
    }
    if (!info->swap && !info->src_unsigned && (size_t)fz == tz) {
        memcpy(dst, src, (size_t)n * tz);
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        uint64_t v = load_swapped(src + i * fz, fz, info->swap);
        if (info->src_unsigned) { /* widening keeps the value */
            if (fz == 2) { int32_t w = (int32_t)(uint16_t)v; memcpy(dst + i * 4, &w, 4); }
            else { int64_t w = (int64_t)(uint32_t)v; memcpy(dst + i * 8, &w, 8); }
        } else {
            switch (tz) { /* little-endian host: copy the low bytes */
            case 2: { uint16_t w = (uint16_t)v; memcpy(dst + i * 2, &w, 2); break; }
            case 4: { uint32_t w = (uint32_t)v; memcpy(dst + i * 4, &w, 4); break; }
            case 8: memcpy(dst + i * 8, &v, 8); break;
            default: dst[i] = (char)v;
            }
        }
    }
}

/* Turns a tensor holding Fortran-order data (shape given reversed) into a
 * C-order tensor of the true shape. */
static ch_status fortran_fix(ch_tensor *rev, int nd, ch_tensor **result) {
    /* the first nd axes are reversed; a string array's character axis stays last */
    int32_t axes[CH_MAX_DIMS];
    for (int i = 0; i < rev->nd; i++)
        axes[i] = i < nd ? nd - 1 - i : i;
    ch_tensor *view = NULL;
    ch_status st = ch_permute(rev, axes, &view);
    if (st == CH_OK) {
        st = ch_copy(view, result);
        ch_tensor_release(view);
    }
    ch_tensor_release(rev);
    return st;
}

/* The tensor's dims (a string array gets its item length as a last axis);
 * returns their count. */
static int reversed_dims(const ch_npy_info *info, int64_t *dim) {
    for (int i = 0; i < info->nd; i++)
        dim[i] = info->fortran ? info->dim[info->nd - 1 - i] : info->dim[i];
    if (info->str_kind)
        dim[info->nd] = info->str_len;
    return info->nd + (info->str_kind != 0);
}

/* Every code unit of a '<U' array must be a Unicode scalar value. */
static ch_status check_code_points(const ch_npy_info *info, const ch_tensor *t, const char *what) {
    if (info->str_kind != 'U')
        return CH_OK;
    const uint32_t *u = (const uint32_t *)ch_base(t);
    for (int64_t i = 0; i < t->numel; i++)
        if (!is_scalar_value(u[i]))
            return ch_fail(CH_ERR_FORMAT, "%s: '<U%lld' item %lld holds 0x%lX at character %lld, which is not a "
                           "Unicode code point (UTF-32 allows at most 0x10FFFF and no surrogates D800-DFFF)", what,
                           (long long)info->str_len, (long long)(i / info->str_len), (unsigned long)u[i],
                           (long long)(i % info->str_len));
    return CH_OK;
}

/* Checks the code points of a freshly built tensor, then fixes Fortran order. */
static ch_status finish(const ch_npy_info *info, ch_tensor *t, const char *what, ch_tensor **result) {
    ch_status st = check_code_points(info, t, what);
    if (st != CH_OK) {
        ch_tensor_release(t);
        return st;
    }
    if (info->fortran && info->nd > 1)
        return fortran_fix(t, info->nd, result);
    *result = t;
    return CH_OK;
}

ch_status ch_npy_decode(const ch_npy_info *info, const void *data, const char *what, ch_tensor **result) {
    int64_t dim[CH_MAX_DIMS];
    int nd = reversed_dims(info, dim);
    ch_tensor *t = NULL;
    CH_TRY(ch_tensor_new(info->dt, nd, dim, CH_CPU, &t));
    if (info->numel > 0)
        convert(info, (const unsigned char *)data, ch_base(t), info->numel);
    return finish(info, t, what, result);
}

ch_status ch_npy_from_memory(const void *bytes, size_t nbytes, const char *what, ch_tensor **result) {
    return ch_npy_from_memory_ex(bytes, nbytes, what, result, NULL);
}

ch_status ch_npy_from_memory_ex(const void *bytes, size_t nbytes, const char *what, ch_tensor **result, char *kind) {
    if (!bytes || !result)
        return ch_fail(CH_ERR_ARG, "npy_from_memory: NULL argument");
    if (!what)
        what = "npy";
    ch_npy_info info;
    CH_TRY(ch_npy_parse((const unsigned char *)bytes, nbytes, what, &info));
    if (!kind)
        CH_TRY(ch_npy_refuse_strings(&info, what));
    else
        *kind = info.str_kind;
    uint64_t need = (uint64_t)info.numel * (uint64_t)info.src_size;
    if (need > nbytes - info.data_offset)
        return ch_fail(CH_ERR_FORMAT, "%s: truncated .npy data (%llu bytes needed, %zu present)", what,
                       (unsigned long long)need, nbytes - info.data_offset);
    return ch_npy_decode(&info, (const char *)bytes + info.data_offset, what, result);
}

ch_status ch_npy_host_contiguous(const ch_tensor *t, ch_tensor **out) {
    if (t->dev == CH_CPU)
        return ch_contiguous(t, out);
    ch_tensor *cpu = NULL;
    CH_TRY(ch_to_device(t, CH_CPU, &cpu));
    ch_status st = ch_contiguous(cpu, out);
    ch_tensor_release(cpu);
    return st;
}

ch_status ch_npy_save(const char *path, const ch_tensor *t) { return ch_npy_save_ex(path, t, 0); }

ch_status ch_npy_save_ex(const char *path, const ch_tensor *t, char kind) {
    CH_CHECK_ARG(t, "save", "t");
    if (!path)
        return ch_fail(CH_ERR_ARG, "save: the file path is NULL");
    CH_TRY(ch_npy_check_kind(t, kind, "save", path));
    char hdr[1024];
    size_t hn = 0;
    if (kind)
        CH_TRY(ch_npy_header_str(t, kind, "save", hdr, sizeof hdr, &hn));
    else if (!(hn = ch_npy_header((ch_dtype)t->dt, t->nd, t->dim, hdr, sizeof hdr)))
        return ch_fail(CH_ERR_INTERNAL, "save: header too long");
    ch_tensor *c = NULL;
    CH_TRY(ch_npy_host_contiguous(t, &c));
    ch_atomic_file af;
    ch_status st = ch_npy_check_kind(c, kind, "save", path); /* the code points, now on the host */
    if (st == CH_OK)
        st = ch_atomic_open(&af, path, 1, "save");
    if (st != CH_OK) {
        ch_tensor_release(c);
        return st;
    }
    size_t nbytes = (size_t)c->numel * ch_dtype_size((ch_dtype)c->dt);
    int ok = fwrite(hdr, 1, hn, af.fp) == hn;
    if (ok && nbytes)
        ok = fwrite(ch_base(c), 1, nbytes, af.fp) == nbytes;
    ch_tensor_release(c);
    if (!ok) {
        int e = errno;
        ch_atomic_abort(&af);
        return ch_fail(CH_ERR_IO, "save: writing '%s' failed (%s)", path, strerror(e));
    }
    return ch_atomic_commit(&af, "save");
}

ch_status ch_npy_load(const char *path, ch_tensor **result) { return ch_npy_load_ex(path, result, NULL); }

ch_status ch_npy_load_ex(const char *path, ch_tensor **result, char *kind) {
    if (!path || !result)
        return ch_fail(CH_ERR_ARG, "load: NULL argument");
    char what[1100];
    snprintf(what, sizeof what, "load: '%s'", path);
    FILE *f = fopen(path, "rb");
    if (!f)
        return ch_fail(CH_ERR_IO, "load: cannot open '%s' (%s)", path, strerror(errno));
    /* the header: at most 12 bytes of prelude plus a length we then read */
    unsigned char pre[12];
    size_t got = fread(pre, 1, sizeof pre, f);
    ch_status st = CH_OK;
    unsigned char *hdr = NULL;
    ch_tensor *t = NULL;
    if (got < 10 || memcmp(pre, "\x93NUMPY", 6) != 0) {
        st = ch_fail(CH_ERR_FORMAT, "%s: not a .npy file (%s)", what, got < 10 ? "too short" : "bad magic");
        goto done;
    }
    size_t hlen = pre[6] == 1 ? (size_t)pre[8] | ((size_t)pre[9] << 8)
                              : (size_t)pre[8] | ((size_t)pre[9] << 8) | ((size_t)pre[10] << 16) |
                                    ((size_t)pre[11] << 24);
    size_t total = (pre[6] == 1 ? 10 : 12) + hlen;
    if (hlen > (1u << 28)) {
        st = ch_fail(CH_ERR_FORMAT, "%s: implausible .npy header length %zu", what, hlen);
        goto done;
    }
    hdr = (unsigned char *)malloc(total);
    if (!hdr) {
        st = ch_fail(CH_ERR_MEMORY, "%s: out of memory", what);
        goto done;
    }
    memcpy(hdr, pre, got < total ? got : total);
    if (got < total && fread(hdr + got, 1, total - got, f) != total - got) {
        st = ch_fail(CH_ERR_FORMAT, "%s: truncated .npy header", what);
        goto done;
    }
    ch_npy_info info;
    st = ch_npy_parse(hdr, total, what, &info);
    if (st == CH_OK && !kind)
        st = ch_npy_refuse_strings(&info, what);
    if (st != CH_OK)
        goto done;
    if (kind)
        *kind = info.str_kind;
    size_t need = (size_t)info.numel * (size_t)info.src_size;
    /* check the size before allocating what a corrupt header may claim */
    off_t fsize = fseeko(f, 0, SEEK_END) == 0 ? ftello(f) : -1;
    if (fsize < 0 || (uint64_t)fsize < info.data_offset || (uint64_t)fsize - info.data_offset < need) {
        st = ch_fail(CH_ERR_FORMAT, "%s: truncated .npy data (%zu bytes needed)", what, need);
        goto done;
    }
    if (fseeko(f, (off_t)info.data_offset, SEEK_SET) != 0) {
        st = ch_fail(CH_ERR_IO, "%s: seek failed (%s)", what, strerror(errno));
        goto done;
    }
    int direct = !info.swap && !info.src_unsigned && info.dt != CH_BOOL &&
                 (info.str_kind || (size_t)info.src_size == ch_dtype_size(info.dt));
    int64_t dim[CH_MAX_DIMS];
    int nd = reversed_dims(&info, dim);
    if (direct) { /* read straight into the tensor */
        st = ch_tensor_new(info.dt, nd, dim, CH_CPU, &t);
        if (st != CH_OK)
            goto done;
        if (need && fread(ch_base(t), 1, need, f) != need) {
            st = ch_fail(CH_ERR_FORMAT, "%s: truncated .npy data (%zu bytes needed)", what, need);
            goto done;
        }
        ch_tensor *tt = t;
        t = NULL;
        st = finish(&info, tt, what, result);
    } else {
        unsigned char *buf = (unsigned char *)malloc(need ? need : 1);
        if (!buf) {
            st = ch_fail(CH_ERR_MEMORY, "%s: out of memory for %zu bytes", what, need);
            goto done;
        }
        if (need && fread(buf, 1, need, f) != need) {
            free(buf);
            st = ch_fail(CH_ERR_FORMAT, "%s: truncated .npy data (%zu bytes needed)", what, need);
            goto done;
        }
        st = ch_npy_decode(&info, buf, what, result);
        free(buf);
    }
done:
    ch_tensor_release(t);
    free(hdr);
    fclose(f);
    return st;
}
