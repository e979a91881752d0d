/* idx.c -- IDX files (MNIST, Fashion-MNIST, EMNIST), gzip-compressed or plain.
 *
 * Layout: 2 zero bytes, a type byte, the number of dimensions, then one
 * big-endian uint32 per dimension and the big-endian elements.  zlib's
 * gzread reads plain files transparently, so one path serves both. */
#include "../core/internal.h"

#include <errno.h>
#include <sys/stat.h>
#include <zlib.h>

/* Reads exactly n bytes (gzread counts in unsigned int); returns bytes read or -1. */
static int64_t read_all(gzFile g, void *buf, uint64_t n) {
    uint64_t done = 0;
    while (done < n) {
        uint64_t left = n - done;
        unsigned take = left > (1u << 30) ? (1u << 30) : (unsigned)left;
        int got = gzread(g, (char *)buf + done, take);
        if (got < 0) return -1;
        if (got == 0) break;
        done += (uint64_t)got;
    }
    return (int64_t)done;
}

ch_status ch_idx_load(const char *path, ch_tensor **result) {
    if (!path || !result)
        return ch_fail(CH_ERR_ARG, "load_idx: NULL argument");
    gzFile g = gzopen(path, "rb");
    if (!g)
        return ch_fail(CH_ERR_IO, "load_idx: cannot open '%s' (%s)", path, strerror(errno ? errno : ENOENT));
    ch_status st = CH_OK;
    ch_tensor *t = NULL;
    unsigned char h[4];
    int64_t got = read_all(g, h, 4);
    if (got < 0) {
        st = ch_fail(CH_ERR_FORMAT, "load_idx: '%s': corrupt gzip data", path);
        goto done;
    }
    if (got != 4 || h[0] != 0 || h[1] != 0) {
        st = ch_fail(CH_ERR_FORMAT, "load_idx: '%s' is not an IDX file (bad magic number)", path);
        goto done;
    }
    ch_dtype dt;
    int be_size;
    switch (h[2]) {
    case 0x08: dt = CH_UINT8; be_size = 1; break;
    case 0x09: dt = CH_INT8; be_size = 1; break;
    case 0x0B: dt = CH_INT16; be_size = 2; break;
    case 0x0C: dt = CH_INT32; be_size = 4; break;
    case 0x0D: dt = CH_FLOAT32; be_size = 4; break;
    case 0x0E: dt = CH_FLOAT64; be_size = 8; break;
    default:
        st = ch_fail(CH_ERR_FORMAT, "load_idx: '%s': unknown IDX element type 0x%02X (expected 0x08, 0x09, 0x0B, "
                     "0x0C, 0x0D or 0x0E)", path, h[2]);
        goto done;
    }
    int nd = h[3];
    if (nd < 1 || nd > CH_MAX_DIMS) {
        st = ch_fail(CH_ERR_FORMAT, "load_idx: '%s': %d dimensions (expected 1..%d)", path, nd, CH_MAX_DIMS);
        goto done;
    }
    unsigned char dbuf[4 * CH_MAX_DIMS];
    if (read_all(g, dbuf, (uint64_t)4 * nd) != 4 * nd) {
        st = ch_fail(CH_ERR_FORMAT, "load_idx: '%s': truncated header", path);
        goto done;
    }
    int64_t dim[CH_MAX_DIMS], numel = 1;
    for (int i = 0; i < nd; i++) {
        const unsigned char *p = dbuf + 4 * i;
        dim[i] = ((int64_t)p[0] << 24) | ((int64_t)p[1] << 16) | ((int64_t)p[2] << 8) | p[3];
        if (dim[i] != 0 && numel > ((int64_t)1 << 40) / dim[i]) {
            st = ch_fail(CH_ERR_FORMAT, "load_idx: '%s': implausible shape (more than 2^40 elements)", path);
            goto done;
        }
        numel *= dim[i];
    }
    uint64_t need = (uint64_t)numel * (uint64_t)be_size;
    /* A damaged header can announce gigabytes in a 10-byte file: check what
     * the file can hold before allocating (deflate expands at most about
     * 1032 to 1, plain data 1 to 1). */
    struct stat sb;
    if (stat(path, &sb) == 0) {
        uint64_t header = 4 + 4 * (uint64_t)nd;
        uint64_t avail = (uint64_t)sb.st_size > header ? (uint64_t)sb.st_size - header : 0;
        uint64_t most = gzdirect(g) ? avail : avail * 1032 + 1024;
        if (need > most) {
            st = ch_fail(CH_ERR_FORMAT, "load_idx: '%s': truncated data (the header announces %llu data bytes, the "
                         "file can hold at most %llu)", path, (unsigned long long)need, (unsigned long long)most);
            goto done;
        }
    }
    st = ch_tensor_new(dt, nd, dim, CH_CPU, &t);
    if (st != CH_OK)
        goto done;
    got = read_all(g, ch_base(t), need);
    if (got < 0 || (uint64_t)got != need) {
        st = ch_fail(CH_ERR_FORMAT, "load_idx: '%s': %s (%llu data bytes expected, %lld read)", path,
                     got < 0 ? "corrupt gzip data" : "truncated data", (unsigned long long)need, (long long)got);
        goto done;
    }
    unsigned char extra;
    if (read_all(g, &extra, 1) != 0) {
        st = ch_fail(CH_ERR_FORMAT, "load_idx: '%s': data continues past the %llu bytes the header announces", path,
                     (unsigned long long)need);
        goto done;
    }
    if (be_size > 1) { /* big-endian -> host (little-endian) */
        unsigned char *p = (unsigned char *)ch_base(t);
        for (int64_t i = 0; i < numel; i++, p += be_size)
            for (int a = 0, b = be_size - 1; a < b; a++, b--) {
                unsigned char x = p[a];
                p[a] = p[b];
                p[b] = x;
            }
    }
    *result = t;
    t = NULL;
done:
    ch_tensor_release(t);
    gzclose(g);
    return st;
}
