/* zip.c -- the zip container of .npz files (PKWARE APPNOTE 6.3 subset).
 *
 * Written archives are what Python's zipfile writes for np.savez /
 * np.savez_compressed, except for fixed timestamps (1980-01-01, so the same
 * tensors give the same bytes).  The reader trusts nothing: every length,
 * count and offset read from the file is checked against the file size
 * before it is used, so corrupt input ends in CH_ERR_FORMAT, never a crash. */
#include "zip.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <zlib.h>

#define SIG_LOCAL 0x04034b50u
#define SIG_CENTRAL 0x02014b50u
#define SIG_EOCD 0x06054b50u
#define SIG_EOCD64 0x06064b50u
#define SIG_LOC64 0x07064b50u
#define DOS_DATE_1980 0x0021   /* 1980-01-01 */
#define U32_MAX_ 0xFFFFFFFFull
/* A local header claims zip64 ahead of time when a member might reach
 * 4 GiB once deflated (deflate can grow incompressible data slightly). */
#define ZIP64_LOCAL_LIMIT 0xFE000000ull
#define CHUNK (1u << 30)       /* zlib counts in 32-bit uInt */

static void put16(unsigned char *p, unsigned v) { p[0] = (unsigned char)v; p[1] = (unsigned char)(v >> 8); }
static void put32(unsigned char *p, uint32_t v) { for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i)); }
static void put64(unsigned char *p, uint64_t v) { for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i)); }
static unsigned get16(const unsigned char *p) { return (unsigned)p[0] | ((unsigned)p[1] << 8); }
static uint32_t get32(const unsigned char *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static uint64_t get64(const unsigned char *p) { return (uint64_t)get32(p) | ((uint64_t)get32(p + 4) << 32); }

static char *dup_str(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = (char *)malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

/* ======================================================================= */
/* writer                                                                   */
/* ======================================================================= */
struct ch_zip_writer {
    FILE *fp;
    char *what;
    int count, cap;
    ch_zip_entry *entries;
};

ch_status ch_zip_writer_new(FILE *fp, const char *what, ch_zip_writer **w) {
    ch_zip_writer *z = (ch_zip_writer *)calloc(1, sizeof *z);
    if (!z || !(z->what = dup_str(what))) {
        free(z);
        return ch_fail(CH_ERR_MEMORY, "%s: out of memory", what);
    }
    z->fp = fp;
    *w = z;
    return CH_OK;
}

void ch_zip_writer_free(ch_zip_writer *w) {
    if (!w) return;
    for (int i = 0; i < w->count; i++) free(w->entries[i].name);
    free(w->entries);
    free(w->what);
    free(w);
}

int ch_zip_writer_has(const ch_zip_writer *w, const char *name) {
    for (int i = 0; i < w->count; i++)
        if (strcmp(w->entries[i].name, name) == 0) return 1;
    return 0;
}

static ch_status wfail(ch_zip_writer *w) {
    return ch_fail(CH_ERR_IO, "%s: write failed (%s)", w->what, strerror(errno));
}

static int is_ascii(const char *s) {
    for (; *s; s++)
        if ((unsigned char)*s >= 0x80) return 0;
    return 1;
}

ch_status ch_zip_writer_add(ch_zip_writer *w, const char *name, int nparts, const void *const *parts,
                            const size_t *sizes, int compress) {
    size_t nlen = strlen(name);
    if (nlen == 0 || nlen > 0xFFFF)
        return ch_fail(CH_ERR_ARG, "%s: member name must have 1..65535 bytes", w->what);
    if (w->count == w->cap) {
        int cap = w->cap ? 2 * w->cap : 16;
        ch_zip_entry *e = (ch_zip_entry *)realloc(w->entries, sizeof *e * (size_t)cap);
        if (!e) return ch_fail(CH_ERR_MEMORY, "%s: out of memory", w->what);
        w->entries = e;
        w->cap = cap;
    }
    ch_zip_entry *e = &w->entries[w->count];
    memset(e, 0, sizeof *e);
    uint64_t usize = 0;
    uLong crc = crc32(0L, Z_NULL, 0);
    for (int i = 0; i < nparts; i++) {
        usize += sizes[i];
        crc = crc32_z(crc, (const Bytef *)parts[i], sizes[i]);
    }
    off_t pos = ftello(w->fp);
    if (pos < 0) return wfail(w);
    e->local_offset = (uint64_t)pos;
    e->usize = usize;
    e->crc = (uint32_t)crc;
    e->method = compress ? 8 : 0;
    e->flags = is_ascii(name) ? 0 : 0x0800;   /* bit 11: the name is UTF-8 */
    int z64 = usize >= ZIP64_LOCAL_LIMIT;

    unsigned char h[30 + 20];
    put32(h, SIG_LOCAL);
    put16(h + 4, z64 ? 45 : 20);
    put16(h + 6, e->flags);
    put16(h + 8, e->method);
    put16(h + 10, 0);
    put16(h + 12, DOS_DATE_1980);
    put32(h + 14, e->crc);
    put32(h + 18, z64 ? 0xFFFFFFFFu : (uint32_t)usize);   /* csize: patched after deflate */
    put32(h + 22, z64 ? 0xFFFFFFFFu : (uint32_t)usize);
    put16(h + 26, (unsigned)nlen);
    put16(h + 28, z64 ? 20 : 0);
    unsigned char x[20];
    put16(x, 0x0001);
    put16(x + 2, 16);
    put64(x + 4, usize);
    put64(x + 12, usize);
    if (fwrite(h, 1, 30, w->fp) != 30 || fwrite(name, 1, nlen, w->fp) != nlen ||
        (z64 && fwrite(x, 1, 20, w->fp) != 20))
        return wfail(w);

    uint64_t csize = 0;
    if (!compress) {
        for (int i = 0; i < nparts; i++)
            if (sizes[i] && fwrite(parts[i], 1, sizes[i], w->fp) != sizes[i])
                return wfail(w);
        csize = usize;
    } else {
        z_stream zs;
        memset(&zs, 0, sizeof zs);
        if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
            return ch_fail(CH_ERR_MEMORY, "%s: zlib deflateInit failed", w->what);
        enum { OUTN = 1 << 18 };
        unsigned char *out = (unsigned char *)malloc(OUTN);
        if (!out) {
            deflateEnd(&zs);
            return ch_fail(CH_ERR_MEMORY, "%s: out of memory", w->what);
        }
        ch_status st = CH_OK;
        for (int i = 0; i <= nparts && st == CH_OK; i++) {
            const unsigned char *src = i < nparts ? (const unsigned char *)parts[i] : NULL;
            size_t left = i < nparts ? sizes[i] : 0;
            int last = i == nparts;
            do {
                size_t take = left < CHUNK ? left : CHUNK;
                zs.next_in = (Bytef *)(uintptr_t)src;
                zs.avail_in = (uInt)take;
                int flush = last ? Z_FINISH : Z_NO_FLUSH;
                int ret;
                do {
                    zs.next_out = out;
                    zs.avail_out = OUTN;
                    ret = deflate(&zs, flush);
                    if (ret == Z_STREAM_ERROR) {
                        st = ch_fail(CH_ERR_INTERNAL, "%s: zlib deflate failed", w->what);
                        break;
                    }
                    size_t have = OUTN - zs.avail_out;
                    if (have && fwrite(out, 1, have, w->fp) != have) {
                        st = wfail(w);
                        break;
                    }
                    csize += have;
                } while (zs.avail_out == 0 || (last && ret != Z_STREAM_END));
                if (src) src += take;
                left -= take;
            } while (left > 0 && st == CH_OK);
        }
        deflateEnd(&zs);
        free(out);
        if (st != CH_OK) return st;
        /* patch the compressed size into the local header */
        off_t end = ftello(w->fp);
        unsigned char b[8];
        if (end < 0) return wfail(w);
        if (z64) {
            put64(b, csize);
            if (fseeko(w->fp, (off_t)(e->local_offset + 30 + nlen + 12), SEEK_SET) != 0 || fwrite(b, 1, 8, w->fp) != 8)
                return wfail(w);
        } else {
            if (csize >= U32_MAX_)
                return ch_fail(CH_ERR_INTERNAL, "%s: member '%s' grew past 4 GiB when deflated", w->what, name);
            put32(b, (uint32_t)csize);
            if (fseeko(w->fp, (off_t)(e->local_offset + 18), SEEK_SET) != 0 || fwrite(b, 1, 4, w->fp) != 4)
                return wfail(w);
        }
        if (fseeko(w->fp, end, SEEK_SET) != 0) return wfail(w);
    }
    e->csize = csize;
    if (!(e->name = dup_str(name))) return ch_fail(CH_ERR_MEMORY, "%s: out of memory", w->what);
    w->count++;
    return CH_OK;
}

ch_status ch_zip_writer_finish(ch_zip_writer *w) {
    off_t cd_start = ftello(w->fp);
    if (cd_start < 0) return wfail(w);
    for (int i = 0; i < w->count; i++) {
        const ch_zip_entry *e = &w->entries[i];
        size_t nlen = strlen(e->name);
        unsigned char x[28];
        size_t xn = 4;
        int need64 = 0;
        /* zip64 extra: only the fields that overflow, in this order */
        if (e->usize >= U32_MAX_) { put64(x + xn, e->usize); xn += 8; }
        if (e->csize >= U32_MAX_) { put64(x + xn, e->csize); xn += 8; }
        if (e->local_offset >= U32_MAX_) { put64(x + xn, e->local_offset); xn += 8; }
        need64 = xn > 4;
        put16(x, 0x0001);
        put16(x + 2, (unsigned)(xn - 4));
        unsigned char h[46];
        put32(h, SIG_CENTRAL);
        put16(h + 4, (3u << 8) | 45);             /* made by: Unix, spec 4.5 */
        put16(h + 6, need64 || e->usize >= ZIP64_LOCAL_LIMIT ? 45 : 20);
        put16(h + 8, e->flags);
        put16(h + 10, e->method);
        put16(h + 12, 0);
        put16(h + 14, DOS_DATE_1980);
        put32(h + 16, e->crc);
        put32(h + 20, e->csize >= U32_MAX_ ? 0xFFFFFFFFu : (uint32_t)e->csize);
        put32(h + 24, e->usize >= U32_MAX_ ? 0xFFFFFFFFu : (uint32_t)e->usize);
        put16(h + 28, (unsigned)nlen);
        put16(h + 30, need64 ? (unsigned)xn : 0);
        put16(h + 32, 0);
        put16(h + 34, 0);
        put16(h + 36, 0);
        put32(h + 38, 0644u << 16);               /* rw-r--r-- regular file */
        put32(h + 42, e->local_offset >= U32_MAX_ ? 0xFFFFFFFFu : (uint32_t)e->local_offset);
        if (fwrite(h, 1, 46, w->fp) != 46 || fwrite(e->name, 1, nlen, w->fp) != nlen ||
            (need64 && fwrite(x, 1, xn, w->fp) != xn))
            return wfail(w);
    }
    off_t cd_end = ftello(w->fp);
    if (cd_end < 0) return wfail(w);
    uint64_t cd_size = (uint64_t)(cd_end - cd_start), cd_off = (uint64_t)cd_start;
    uint64_t n = (uint64_t)w->count;
    int z64 = n >= 0xFFFF || cd_size >= U32_MAX_ || cd_off >= U32_MAX_;
    if (z64) {
        unsigned char r[56 + 20];
        put32(r, SIG_EOCD64);
        put64(r + 4, 44);
        put16(r + 12, (3u << 8) | 45);
        put16(r + 14, 45);
        put32(r + 16, 0);
        put32(r + 20, 0);
        put64(r + 24, n);
        put64(r + 32, n);
        put64(r + 40, cd_size);
        put64(r + 48, cd_off);
        put32(r + 56, SIG_LOC64);
        put32(r + 60, 0);
        put64(r + 64, (uint64_t)cd_end);
        put32(r + 72, 1);
        if (fwrite(r, 1, sizeof r, w->fp) != sizeof r) return wfail(w);
    }
    unsigned char e[22];
    put32(e, SIG_EOCD);
    put16(e + 4, 0);
    put16(e + 6, 0);
    put16(e + 8, n >= 0xFFFF ? 0xFFFF : (unsigned)n);
    put16(e + 10, n >= 0xFFFF ? 0xFFFF : (unsigned)n);
    put32(e + 12, cd_size >= U32_MAX_ ? 0xFFFFFFFFu : (uint32_t)cd_size);
    put32(e + 16, cd_off >= U32_MAX_ ? 0xFFFFFFFFu : (uint32_t)cd_off);
    put16(e + 20, 0);
    if (fwrite(e, 1, 22, w->fp) != 22) return wfail(w);
    return CH_OK;
}

/* ======================================================================= */
/* reader                                                                   */
/* ======================================================================= */
#define ZFAIL(z, fn, ...) zip_fail((z), (fn), __VA_ARGS__)

static ch_status zip_fail(const ch_zip *z, const char *fn, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static ch_status zip_fail(const ch_zip *z, const char *fn, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return ch_fail(CH_ERR_FORMAT, "%s: '%s' is not a valid npz/zip file: %s", fn, z->path, msg);
}

static int read_at(FILE *fp, uint64_t off, void *buf, size_t n) {
    if (fseeko(fp, (off_t)off, SEEK_SET) != 0) return 0;
    return fread(buf, 1, n, fp) == n;
}

void ch_zip_close(ch_zip *z) {
    if (!z) return;
    if (z->fp) fclose(z->fp);
    for (int i = 0; i < z->count; i++) free(z->entries[i].name);
    free(z->entries);
    free(z->path);
    free(z);
}

/* Finds the end-of-central-directory record: the last signature within the
 * final 64 KiB + 22 bytes whose comment fits inside the file. */
static int find_eocd(ch_zip *z, uint64_t *pos) {
    uint64_t span = z->size < 22 + 65535 ? z->size : 22 + 65535;
    unsigned char *buf = (unsigned char *)malloc((size_t)span);
    if (!buf) return -1;
    int found = 0;
    if (read_at(z->fp, z->size - span, buf, (size_t)span)) {
        for (int64_t i = (int64_t)span - 22; i >= 0; i--) {
            if (get32(buf + i) == SIG_EOCD && (uint64_t)i + 22 + get16(buf + i + 20) <= span) {
                *pos = z->size - span + (uint64_t)i;
                found = 1;
                break;
            }
        }
    }
    free(buf);
    return found;
}

ch_status ch_zip_open(const char *path, const char *fn, ch_zip **out) {
    ch_zip *z = (ch_zip *)calloc(1, sizeof *z);
    if (!z || !(z->path = dup_str(path))) {
        free(z);
        return ch_fail(CH_ERR_MEMORY, "%s: out of memory", fn);
    }
    ch_status st = CH_OK;
    unsigned char *cd = NULL;
    z->fp = fopen(path, "rb");
    if (!z->fp) {
        st = ch_fail(CH_ERR_IO, "%s: cannot open '%s' (%s)", fn, path, strerror(errno));
        goto fail;
    }
    if (fseeko(z->fp, 0, SEEK_END) != 0 || ftello(z->fp) < 0) {
        st = ch_fail(CH_ERR_IO, "%s: cannot seek in '%s' (%s)", fn, path, strerror(errno));
        goto fail;
    }
    z->size = (uint64_t)ftello(z->fp);
    if (z->size < 22) {
        st = ZFAIL(z, fn, "too short (%llu bytes)", (unsigned long long)z->size);
        goto fail;
    }
    uint64_t eocd;
    int f = find_eocd(z, &eocd);
    if (f <= 0) {
        st = f < 0 ? ch_fail(CH_ERR_MEMORY, "%s: out of memory", fn)
                   : ZFAIL(z, fn, "no end-of-central-directory record (truncated or not a zip)");
        goto fail;
    }
    unsigned char e[22];
    if (!read_at(z->fp, eocd, e, 22)) {
        st = ZFAIL(z, fn, "cannot read the end record");
        goto fail;
    }
    uint64_t n = get16(e + 10), cd_size = get32(e + 12), cd_off = get32(e + 16);
    uint64_t cd_limit = eocd;   /* the central directory ends before this */
    if (get16(e + 4) != 0 || get16(e + 6) != 0 || get16(e + 8) != get16(e + 10)) {
        st = ZFAIL(z, fn, "multi-disk archives are not supported");
        goto fail;
    }
    /* zip64: a locator just before the end record points at the zip64 end record */
    if (eocd >= 20) {
        unsigned char loc[20];
        if (read_at(z->fp, eocd - 20, loc, 20) && get32(loc) == SIG_LOC64) {
            uint64_t r64 = get64(loc + 8);
            unsigned char r[56];
            if (r64 > eocd - 20 || eocd - 20 - r64 < 56 || !read_at(z->fp, r64, r, 56) || get32(r) != SIG_EOCD64) {
                st = ZFAIL(z, fn, "bad zip64 end-of-central-directory record");
                goto fail;
            }
            n = get64(r + 32);
            cd_size = get64(r + 40);
            cd_off = get64(r + 48);
            cd_limit = r64;
        } else if (n == 0xFFFF || cd_size == U32_MAX_ || cd_off == U32_MAX_) {
            st = ZFAIL(z, fn, "zip64 end record announced but missing");
            goto fail;
        }
    }
    if (cd_off > cd_limit || cd_size > cd_limit - cd_off) {
        st = ZFAIL(z, fn, "central directory (offset %llu, %llu bytes) lies outside the file",
                   (unsigned long long)cd_off, (unsigned long long)cd_size);
        goto fail;
    }
    if (n > cd_size / 46) {
        st = ZFAIL(z, fn, "%llu entries cannot fit in a %llu-byte central directory", (unsigned long long)n,
                   (unsigned long long)cd_size);
        goto fail;
    }
    cd = (unsigned char *)malloc(cd_size ? (size_t)cd_size : 1);
    z->entries = (ch_zip_entry *)calloc(n ? (size_t)n : 1, sizeof(ch_zip_entry));
    if (!cd || !z->entries) {
        st = ch_fail(CH_ERR_MEMORY, "%s: out of memory reading '%s'", fn, path);
        goto fail;
    }
    if (!read_at(z->fp, cd_off, cd, (size_t)cd_size)) {
        st = ZFAIL(z, fn, "cannot read the central directory");
        goto fail;
    }
    uint64_t p = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (cd_size - p < 46 || get32(cd + p) != SIG_CENTRAL) {
            st = ZFAIL(z, fn, "central directory entry %llu is damaged", (unsigned long long)i);
            goto fail;
        }
        const unsigned char *h = cd + p;
        unsigned nlen = get16(h + 28), xlen = get16(h + 30), clen = get16(h + 32);
        if (cd_size - p - 46 < (uint64_t)nlen + xlen + clen) {
            st = ZFAIL(z, fn, "central directory entry %llu overruns the directory", (unsigned long long)i);
            goto fail;
        }
        ch_zip_entry *en = &z->entries[i];
        en->flags = (uint16_t)get16(h + 8);
        en->method = (uint16_t)get16(h + 10);
        en->crc = get32(h + 16);
        en->csize = get32(h + 20);
        en->usize = get32(h + 24);
        en->local_offset = get32(h + 42);
        if (nlen == 0 || memchr(h + 46, 0, nlen)) {
            st = ZFAIL(z, fn, "central directory entry %llu has an invalid name", (unsigned long long)i);
            goto fail;
        }
        en->name = (char *)malloc(nlen + 1);
        if (!en->name) {
            st = ch_fail(CH_ERR_MEMORY, "%s: out of memory reading '%s'", fn, path);
            goto fail;
        }
        memcpy(en->name, h + 46, nlen);
        en->name[nlen] = 0;
        z->count = (int)(i + 1);
        /* zip64 extra field: 64-bit values for the fields saturated above */
        const unsigned char *x = h + 46 + nlen, *xend = x + xlen;
        while (xend - x >= 4) {
            unsigned id = get16(x), len = get16(x + 2);
            if ((size_t)(xend - x - 4) < len) {
                st = ZFAIL(z, fn, "member '%s': extra field overruns its entry", en->name);
                goto fail;
            }
            if (id == 0x0001) {
                const unsigned char *v = x + 4, *vend = v + len;
                uint64_t *fields[3] = {&en->usize, &en->csize, &en->local_offset};
                for (int k = 0; k < 3; k++) {
                    if (*fields[k] != U32_MAX_) continue;
                    if (vend - v < 8) {
                        st = ZFAIL(z, fn, "member '%s': zip64 extra field too short", en->name);
                        goto fail;
                    }
                    *fields[k] = get64(v);
                    v += 8;
                }
            }
            x += 4 + len;
        }
        if (en->local_offset > cd_off || cd_off - en->local_offset < 30 || en->csize > cd_off - en->local_offset) {
            st = ZFAIL(z, fn, "member '%s': offset %llu and size %llu lie outside the file data", en->name,
                       (unsigned long long)en->local_offset, (unsigned long long)en->csize);
            goto fail;
        }
        p += 46 + (uint64_t)nlen + xlen + clen;
    }
    if (n > 0x7fffffff) {
        st = ZFAIL(z, fn, "too many members");
        goto fail;
    }
    free(cd);
    *out = z;
    return CH_OK;
fail:
    free(cd);
    ch_zip_close(z);
    return st;
}

int ch_zip_find(const ch_zip *z, const char *name) {
    /* the last of duplicate names wins, as in Python's zipfile */
    for (int i = z->count - 1; i >= 0; i--)
        if (strcmp(z->entries[i].name, name) == 0) return i;
    return -1;
}

#define MFAIL(fmt, ...) \
    ch_fail(CH_ERR_FORMAT, "%s: '%s' member '%s': " fmt, fn, z->path, en->name, ##__VA_ARGS__)

ch_status ch_zip_read(ch_zip *z, int i, const char *fn, void **data, size_t *n) {
    if (i < 0 || i >= z->count)
        return ch_fail(CH_ERR_ARG, "%s: member index %d out of range", fn, i);
    const ch_zip_entry *en = &z->entries[i];
    if (en->flags & 1)
        return MFAIL("is encrypted (not supported)");
    if (en->method != 0 && en->method != 8)
        return MFAIL("uses compression method %u (only stored and deflate are supported)", en->method);
    unsigned char h[30];
    if (!read_at(z->fp, en->local_offset, h, 30) || get32(h) != SIG_LOCAL)
        return MFAIL("bad local header at offset %llu", (unsigned long long)en->local_offset);
    unsigned nlen = get16(h + 26), xlen = get16(h + 28);
    uint64_t start = en->local_offset + 30 + nlen + xlen;
    /* sizes come from the central directory: with a data descriptor
     * (flag bit 3) the local header holds zeros */
    if (start > z->size || en->csize > z->size - start)
        return MFAIL("data (%llu bytes at %llu) runs past the end of the file", (unsigned long long)en->csize,
                     (unsigned long long)start);
    if (nlen != strlen(en->name))
        return MFAIL("local header name does not match the central directory");
    char lname[256];
    if (nlen < sizeof lname) {
        if (!read_at(z->fp, en->local_offset + 30, lname, nlen) || memcmp(lname, en->name, nlen) != 0)
            return MFAIL("local header name does not match the central directory");
    }
    if (en->method == 0 && en->csize != en->usize)
        return MFAIL("stored member with compressed size %llu != size %llu", (unsigned long long)en->csize,
                     (unsigned long long)en->usize);
    /* deflate expands at most ~1032:1; larger claims are corruption */
    if (en->method == 8 && en->usize > en->csize * 1032 + 1024)
        return MFAIL("claims %llu bytes from %llu compressed", (unsigned long long)en->usize,
                     (unsigned long long)en->csize);
    if (en->usize > (uint64_t)SIZE_MAX - 1)
        return MFAIL("too large for this machine");
    unsigned char *out = (unsigned char *)malloc(en->usize ? (size_t)en->usize : 1);
    if (!out)
        return ch_fail(CH_ERR_MEMORY, "%s: '%s' member '%s': out of memory for %llu bytes", fn, z->path, en->name,
                       (unsigned long long)en->usize);
    if (en->method == 0) {
        if (en->usize && !read_at(z->fp, start, out, (size_t)en->usize)) {
            free(out);
            return MFAIL("truncated data");
        }
    } else {
        unsigned char *in = (unsigned char *)malloc(en->csize ? (size_t)en->csize : 1);
        if (!in) {
            free(out);
            return ch_fail(CH_ERR_MEMORY, "%s: '%s' member '%s': out of memory", fn, z->path, en->name);
        }
        if (en->csize && !read_at(z->fp, start, in, (size_t)en->csize)) {
            free(in);
            free(out);
            return MFAIL("truncated data");
        }
        z_stream zs;
        memset(&zs, 0, sizeof zs);
        if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) {
            free(in);
            free(out);
            return ch_fail(CH_ERR_MEMORY, "%s: zlib inflateInit failed", fn);
        }
        uint64_t in_left = en->csize, out_left = en->usize;
        const unsigned char *ip = in;
        unsigned char *op = out, spare[1];
        int ret = Z_OK;
        while (ret == Z_OK) {
            if (zs.avail_in == 0 && in_left) {
                uInt take = in_left < CHUNK ? (uInt)in_left : CHUNK;
                zs.next_in = (Bytef *)(uintptr_t)ip;
                zs.avail_in = take;
                ip += take;
                in_left -= take;
            }
            if (zs.avail_out == 0) {
                if (out_left) {
                    uInt take = out_left < CHUNK ? (uInt)out_left : CHUNK;
                    zs.next_out = op;
                    zs.avail_out = take;
                    op += take;
                    out_left -= take;
                } else { /* a byte of room to detect data beyond usize */
                    zs.next_out = spare;
                    zs.avail_out = 1;
                    out_left = 0;
                }
            }
            uLong before_in = zs.total_in, before_out = zs.total_out;
            ret = inflate(&zs, Z_NO_FLUSH);
            if (ret == Z_BUF_ERROR && zs.total_in == before_in && zs.total_out == before_out)
                break; /* no progress: input exhausted */
            if (ret == Z_BUF_ERROR) ret = Z_OK;
            if (zs.next_out == spare + 1) break; /* overflowed usize */
        }
        uint64_t produced = zs.total_out;
        inflateEnd(&zs);
        free(in);
        if (ret != Z_STREAM_END || produced != en->usize) {
            free(out);
            if (ret == Z_DATA_ERROR || ret == Z_NEED_DICT)
                return MFAIL("corrupt deflate data");
            return MFAIL("deflate data gives %s bytes than the %llu announced",
                         produced > en->usize ? "more" : "fewer", (unsigned long long)en->usize);
        }
    }
    uLong crc = crc32_z(crc32(0L, Z_NULL, 0), out, (size_t)en->usize);
    if ((uint32_t)crc != en->crc) {
        free(out);
        return MFAIL("CRC-32 mismatch (stored %08x, computed %08x)", en->crc, (uint32_t)crc);
    }
    *data = out;
    *n = (size_t)en->usize;
    return CH_OK;
}

/* ---- the public readers (chainlua.h) ---------------------------------------- */
ch_status ch_zip_archive_open(const char *path, const char *fn, ch_zip **z) {
    if (!fn) fn = "zip";
    if (!path || !z) return ch_fail(CH_ERR_ARG, "%s: NULL argument", fn);
    return ch_zip_open(path, fn, z);
}

int ch_zip_archive_count(const ch_zip *z) { return z ? z->count : 0; }

const char *ch_zip_archive_name(const ch_zip *z, int i) {
    if (!z || i < 0 || i >= z->count) return NULL;
    return z->entries[i].name;
}

int ch_zip_archive_find(const ch_zip *z, const char *name) {
    if (!z || !name) return -1;
    return ch_zip_find(z, name);
}

ch_status ch_zip_archive_read(ch_zip *z, int i, const char *fn, ch_tensor **result) {
    if (!fn) fn = "zip";
    if (!z || !result) return ch_fail(CH_ERR_ARG, "%s: NULL argument", fn);
    void *data = NULL;
    size_t n = 0;
    CH_TRY(ch_zip_read(z, i, fn, &data, &n));
    int64_t dim[1] = {(int64_t)n};
    ch_tensor *t;
    ch_status st = ch_tensor_new(CH_UINT8, 1, dim, CH_CPU, &t);
    if (st == CH_OK) {
        if (n) memcpy(t->data, data, n);
        *result = t;
    }
    free(data);
    return st;
}

void ch_zip_archive_close(ch_zip *z) { ch_zip_close(z); }
