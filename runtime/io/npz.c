/* npz.c -- .npz archives: a zip of NAME.npy members (np.savez layout).
 *
 * The writer goes to a temporary beside the target and renames it on close,
 * so a reader never sees half an archive.  The reader indexes the central
 * directory on open and decodes members on demand. */
#include "atomic.h"
#include "npy.h"
#include "zip.h"

#include <stdlib.h>

struct ch_npz_writer {
    ch_atomic_file af;
    ch_zip_writer *zw;
    int compress;
    int failed;          /* a failed add poisons the archive: close refuses */
    char fn[24];         /* "savez_compressed" needs 17 bytes */
};

ch_status ch_npz_writer_open(const char *path, int compress, ch_npz_writer **w) {
    const char *fn = compress ? "savez_compressed" : "savez";
    if (!path || !w)
        return ch_fail(CH_ERR_ARG, "%s: NULL argument", fn);
    ch_npz_writer *nw = (ch_npz_writer *)calloc(1, sizeof *nw);
    if (!nw)
        return ch_fail(CH_ERR_MEMORY, "%s: out of memory", fn);
    snprintf(nw->fn, sizeof nw->fn, "%s", fn);
    nw->compress = compress;
    ch_status st = ch_atomic_open(&nw->af, path, 1, fn);
    if (st != CH_OK) {
        free(nw);
        return st;
    }
    char what[1100];
    snprintf(what, sizeof what, "%s: '%s'", fn, path);
    st = ch_zip_writer_new(nw->af.fp, what, &nw->zw);
    if (st != CH_OK) {
        ch_atomic_abort(&nw->af);
        free(nw);
        return st;
    }
    *w = nw;
    return CH_OK;
}

ch_status ch_npz_writer_add(ch_npz_writer *w, const char *name, const ch_tensor *t) {
    return ch_npz_writer_add_ex(w, name, t, 0);
}

ch_status ch_npz_writer_add_ex(ch_npz_writer *w, const char *name, const ch_tensor *t, char kind) {
    if (!w)
        return ch_fail(CH_ERR_ARG, "savez: the writer is NULL");
    if (!name || !*name)
        return ch_fail(CH_ERR_ARG, "%s: '%s': an array name is empty", w->fn, w->af.path);
    CH_CHECK_ARG(t, w->fn, name);
    size_t nlen = strlen(name);
    char *member = (char *)malloc(nlen + 5);
    if (!member)
        return ch_fail(CH_ERR_MEMORY, "%s: out of memory", w->fn);
    memcpy(member, name, nlen);
    memcpy(member + nlen, ".npy", 5);
    ch_status st = CH_OK;
    /* duplicates would make the archive ambiguous */
    if (ch_zip_writer_has(w->zw, member))
        st = ch_fail(CH_ERR_ARG, "%s: '%s': array name '%s' is used twice", w->fn, w->af.path, name);
    if (st == CH_OK)
        st = ch_npy_check_kind(t, kind, w->fn, name);
    char hdr[1024];
    size_t hn = 0;
    if (st == CH_OK && kind)
        st = ch_npy_header_str(t, kind, w->fn, hdr, sizeof hdr, &hn);
    else if (st == CH_OK && !(hn = ch_npy_header((ch_dtype)t->dt, t->nd, t->dim, hdr, sizeof hdr)))
        st = ch_fail(CH_ERR_INTERNAL, "%s: header too long", w->fn);
    ch_tensor *c = NULL;
    if (st == CH_OK)
        st = ch_npy_host_contiguous(t, &c);
    if (st == CH_OK)
        st = ch_npy_check_kind(c, kind, w->fn, name);
    if (st == CH_OK) {
        const void *parts[2] = {hdr, c->numel ? ch_base(c) : ""};
        size_t sizes[2] = {hn, (size_t)c->numel * ch_dtype_size((ch_dtype)c->dt)};
        st = ch_zip_writer_add(w->zw, member, 2, parts, sizes, w->compress);
    }
    ch_tensor_release(c);
    free(member);
    if (st != CH_OK)
        w->failed = 1;
    return st;
}

ch_status ch_npz_writer_close(ch_npz_writer *w) {
    if (!w)
        return CH_OK;
    ch_status st = w->failed ? ch_fail(CH_ERR_IO, "%s: '%s' not written: an earlier add failed", w->fn, w->af.path)
                             : ch_zip_writer_finish(w->zw);
    if (st == CH_OK)
        st = ch_atomic_commit(&w->af, w->fn);
    else {
        char keep[1024];
        snprintf(keep, sizeof keep, "%s", ch_last_error());
        ch_atomic_abort(&w->af);
        ch_fail(st, "%s", keep);
    }
    ch_zip_writer_free(w->zw);
    free(w);
    return st;
}

void ch_npz_writer_abort(ch_npz_writer *w) {
    if (!w)
        return;
    ch_atomic_abort(&w->af);
    ch_zip_writer_free(w->zw);
    free(w);
}

/* ---- reader ------------------------------------------------------------ */
struct ch_npz_reader {
    ch_zip *zip;
    char **keys;   /* member names without ".npy" */
};

ch_status ch_npz_reader_open(const char *path, ch_npz_reader **r) {
    if (!path || !r)
        return ch_fail(CH_ERR_ARG, "load_npz: NULL argument");
    ch_npz_reader *nr = (ch_npz_reader *)calloc(1, sizeof *nr);
    if (!nr)
        return ch_fail(CH_ERR_MEMORY, "load_npz: out of memory");
    ch_status st = ch_zip_open(path, "load_npz", &nr->zip);
    if (st != CH_OK) {
        free(nr);
        return st;
    }
    int n = nr->zip->count;
    nr->keys = (char **)calloc(n ? (size_t)n : 1, sizeof(char *));
    if (!nr->keys) {
        ch_npz_reader_close(nr);
        return ch_fail(CH_ERR_MEMORY, "load_npz: out of memory");
    }
    for (int i = 0; i < n; i++) {
        const char *m = nr->zip->entries[i].name;
        size_t len = strlen(m);
        if (len > 4 && strcmp(m + len - 4, ".npy") == 0)
            len -= 4;
        nr->keys[i] = (char *)malloc(len + 1);
        if (!nr->keys[i]) {
            ch_npz_reader_close(nr);
            return ch_fail(CH_ERR_MEMORY, "load_npz: out of memory");
        }
        memcpy(nr->keys[i], m, len);
        nr->keys[i][len] = 0;
    }
    *r = nr;
    return CH_OK;
}

int ch_npz_reader_count(const ch_npz_reader *r) { return r ? r->zip->count : 0; }

const char *ch_npz_reader_name(const ch_npz_reader *r, int i) {
    if (!r || i < 0 || i >= r->zip->count)
        return NULL;
    return r->keys[i];
}

ch_status ch_npz_reader_load(ch_npz_reader *r, const char *name, ch_tensor **result) {
    return ch_npz_reader_load_ex(r, name, result, NULL);
}

/* Decompresses member `name` (a later duplicate wins, as in NumPy) into a
 * malloc'd buffer; `what` gets the prefix for its errors. */
static ch_status read_member(ch_npz_reader *r, const char *name, void **data, size_t *n, char *what,
                             size_t what_cap) {
    int idx = -1;
    for (int i = r->zip->count - 1; i >= 0 && idx < 0; i--)
        if (strcmp(r->keys[i], name) == 0)
            idx = i;
    if (idx < 0)
        return ch_fail(CH_ERR_ARG, "load_npz: '%s' has no array named '%s'", r->zip->path, name);
    CH_TRY(ch_zip_read(r->zip, idx, "load_npz", data, n));
    snprintf(what, what_cap, "load_npz: '%s' member '%s'", r->zip->path, r->zip->entries[idx].name);
    return CH_OK;
}

ch_status ch_npz_reader_load_ex(ch_npz_reader *r, const char *name, ch_tensor **result, char *kind) {
    if (!r || !name || !result)
        return ch_fail(CH_ERR_ARG, "load_npz: NULL argument");
    void *data = NULL;
    size_t n = 0;
    char what[1200];
    CH_TRY(read_member(r, name, &data, &n, what, sizeof what));
    ch_status st = ch_npy_from_memory_ex(data, n, what, result, kind);
    free(data);
    return st;
}

/* The member's numbers converted to dt straight from the decompressed bytes
 * when they are stored as the tensor holds them (native order, C order, no
 * widening): a dataset of bytes read as float32 then costs the float32
 * tensor and the member's bytes, not a byte tensor as well. */
static ch_status convert_in_place(const ch_npy_info *info, const unsigned char *bytes, ch_dtype dt,
                                  ch_tensor **result) {
    ch_tensor *view = NULL;
    CH_TRY(ch_wrap_buffer(info->dt, info->nd, info->dim, (void *)(bytes + info->data_offset), &view));
    ch_status st = ch_astype(view, dt, result);
    ch_tensor_release(view);
    return st;
}

ch_status ch_npz_reader_load_as(ch_npz_reader *r, const char *name, ch_dtype dt, ch_tensor **result) {
    if (!r || !name || !result)
        return ch_fail(CH_ERR_ARG, "load_npz: NULL argument");
    if ((int)dt < 0 || dt >= CH_NDTYPES)
        return ch_fail(CH_ERR_ARG, "load_npz: unknown dtype code %d", (int)dt);
    void *data = NULL;
    size_t n = 0;
    char what[1200];
    CH_TRY(read_member(r, name, &data, &n, what, sizeof what));
    ch_npy_info info;
    ch_status st = ch_npy_parse((const unsigned char *)data, n, what, &info);
    if (st == CH_OK)
        st = ch_npy_refuse_strings(&info, what);
    if (st == CH_OK && (uint64_t)info.numel * (uint64_t)info.src_size > n - info.data_offset)
        st = ch_fail(CH_ERR_FORMAT, "%s: truncated .npy data", what);
    if (st == CH_OK) {
        int as_stored = !info.swap && !info.src_unsigned && info.dt != CH_BOOL &&
                        (size_t)info.src_size == ch_dtype_size(info.dt) && !(info.fortran && info.nd > 1);
        if (as_stored && info.dt != dt) {
            st = convert_in_place(&info, (const unsigned char *)data, dt, result);
        } else {
            ch_tensor *t = NULL;
            st = ch_npy_decode(&info, (const char *)data + info.data_offset, what, &t);
            if (st == CH_OK && t->dt != dt) {
                st = ch_astype(t, dt, result);
                ch_tensor_release(t);
            } else if (st == CH_OK) {
                *result = t;
            }
        }
    }
    free(data);
    return st;
}

void ch_npz_reader_close(ch_npz_reader *r) {
    if (!r)
        return;
    if (r->keys)
        for (int i = 0; i < r->zip->count; i++)
            free(r->keys[i]);
    free(r->keys);
    ch_zip_close(r->zip);
    free(r);
}
