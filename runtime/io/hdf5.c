/* hdf5.c -- HDF5 files laid out as h5py writes them.
 *
 * One dataset per tensor, groups per path component ("predictor/l1/W"),
 * little-endian native types; bool is h5py's enum {FALSE=0, TRUE=1} over
 * int8, float16 is the IEEE half type h5py builds, 0-d tensors are scalar
 * dataspaces.  HDF5's own error printing is switched off: every failure
 * becomes a ch_fail message naming the file and the dataset path, with
 * libhdf5's innermost reason when it gave one.
 *
 * Damaged files: a dataset's type, shape and storage are checked before
 * anything is read; variable-length strings (stored in the global heap,
 * which libhdf5 1.10 follows without bounds checks) are read in a forked
 * child (isolate.h), so a damaged heap gives an error, not a crash or hang. */
#include "atomic.h"
#include "isolate.h"
#include "npy.h"

#include <hdf5.h>
#include <stdlib.h>
#include <unistd.h>

struct ch_h5_file {
    hid_t fid;
    char mode;
    int atomic;           /* 'w': written to af.tmp, renamed on close */
    ch_atomic_file af;
    char *path;
    char **names;         /* sorted dataset paths; NULL when stale */
    int nnames;
};

static void quiet(void) { H5Eset_auto2(H5E_DEFAULT, NULL, NULL); }

/* libhdf5's innermost error description ("" when none), for messages. */
static herr_t last_desc(unsigned n, const H5E_error2_t *e, void *data) {
    if (e->desc) snprintf((char *)data, 200, "%s", e->desc);
    return 0;
}

static const char *h5_reason(char *buf) {
    char desc[200] = "";
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, last_desc, desc);   /* the last one is the innermost */
    if (desc[0]) snprintf(buf, 220, " (libhdf5: %s)", desc);
    else buf[0] = 0;
    return buf;
}

static char *dup_str(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = (char *)malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

static void drop_names(ch_h5_file *f) {
    for (int i = 0; i < f->nnames; i++) free(f->names[i]);
    free(f->names);
    f->names = NULL;
    f->nnames = 0;
}

/* ---- types ------------------------------------------------------------- */
static hid_t bool_type(void) {
    hid_t t = H5Tenum_create(H5T_NATIVE_INT8);
    int8_t v = 0;
    H5Tenum_insert(t, "FALSE", &v);
    v = 1;
    H5Tenum_insert(t, "TRUE", &v);
    return t;
}

static hid_t half_type(void) {
    hid_t t = H5Tcopy(H5T_IEEE_F32LE);
    H5Tset_fields(t, 15, 10, 5, 0, 10);
    H5Tset_size(t, 2);
    H5Tset_ebias(t, 15);
    return t;
}

/* File type and memory type for a dtype; both must be closed with H5Tclose. */
static void types_of(ch_dtype dt, hid_t *file_t, hid_t *mem_t) {
    switch (dt) {
    case CH_BOOL: *file_t = bool_type(); *mem_t = bool_type(); return;
    case CH_FLOAT16: *file_t = half_type(); *mem_t = half_type(); return;
    case CH_INT8: *file_t = H5Tcopy(H5T_STD_I8LE); *mem_t = H5Tcopy(H5T_NATIVE_INT8); return;
    case CH_UINT8: *file_t = H5Tcopy(H5T_STD_U8LE); *mem_t = H5Tcopy(H5T_NATIVE_UINT8); return;
    case CH_INT16: *file_t = H5Tcopy(H5T_STD_I16LE); *mem_t = H5Tcopy(H5T_NATIVE_INT16); return;
    case CH_INT32: *file_t = H5Tcopy(H5T_STD_I32LE); *mem_t = H5Tcopy(H5T_NATIVE_INT32); return;
    case CH_INT64: *file_t = H5Tcopy(H5T_STD_I64LE); *mem_t = H5Tcopy(H5T_NATIVE_INT64); return;
    case CH_FLOAT32: *file_t = H5Tcopy(H5T_IEEE_F32LE); *mem_t = H5Tcopy(H5T_NATIVE_FLOAT); return;
    default: *file_t = H5Tcopy(H5T_IEEE_F64LE); *mem_t = H5Tcopy(H5T_NATIVE_DOUBLE); return;
    }
}

/* ---- open/close ---------------------------------------------------------- */
ch_status ch_h5_open(const char *path, char mode, ch_h5_file **out) {
    if (!path || !out)
        return ch_fail(CH_ERR_ARG, "open_hdf5: NULL argument");
    if (mode != 'r' && mode != 'w' && mode != 'a')
        return ch_fail(CH_ERR_ARG, "open_hdf5: mode must be 'r', 'w' or 'a' (got '%c')", mode);
    quiet();
    ch_h5_file *f = (ch_h5_file *)calloc(1, sizeof *f);
    if (!f || !(f->path = dup_str(path))) {
        free(f);
        return ch_fail(CH_ERR_MEMORY, "open_hdf5: out of memory");
    }
    f->mode = mode;
    f->fid = -1;
    if (mode == 'w') {
        ch_status st = ch_atomic_open(&f->af, path, 0, "open_hdf5");
        if (st != CH_OK) {
            free(f->path);
            free(f);
            return st;
        }
        f->atomic = 1;
        f->fid = H5Fcreate(f->af.tmp, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    } else if (mode == 'a' && access(path, F_OK) != 0) {
        f->fid = H5Fcreate(path, H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT);
    } else {
        f->fid = H5Fopen(path, mode == 'r' ? H5F_ACC_RDONLY : H5F_ACC_RDWR, H5P_DEFAULT);
    }
    if (f->fid < 0) {
        ch_status st;
        if (mode != 'w' && access(path, F_OK) == 0 && access(path, R_OK) == 0)
            st = ch_fail(CH_ERR_FORMAT, "open_hdf5: '%s' is not an HDF5 file (or is damaged)", path);
        else
            st = ch_fail(CH_ERR_IO, "open_hdf5: cannot %s '%s'", mode == 'r' ? "open" : "create", path);
        if (f->atomic) ch_atomic_abort(&f->af);
        free(f->path);
        free(f);
        return st;
    }
    *out = f;
    return CH_OK;
}

static void free_file(ch_h5_file *f) {
    drop_names(f);
    free(f->path);
    free(f);
}

ch_status ch_h5_close(ch_h5_file *f) {
    if (!f)
        return CH_OK;
    quiet();
    ch_status st = CH_OK;
    if (H5Fclose(f->fid) < 0)
        st = ch_fail(CH_ERR_IO, "close_hdf5: closing '%s' failed", f->path);
    if (f->atomic) {
        if (st == CH_OK)
            st = ch_atomic_commit(&f->af, "close_hdf5");
        else
            ch_atomic_abort(&f->af);
    }
    free_file(f);
    return st;
}

void ch_h5_abort(ch_h5_file *f) {
    if (!f)
        return;
    quiet();
    H5Fclose(f->fid);
    if (f->atomic)
        ch_atomic_abort(&f->af);
    free_file(f);
}

/* ---- paths --------------------------------------------------------------- */
/* Strips leading '/' and checks the path has no empty components. */
static const char *clean_path(const char *p, const char *fn, const ch_h5_file *f, ch_status *st) {
    *st = CH_OK;
    if (!p) {
        *st = ch_fail(CH_ERR_ARG, "%s: '%s': the dataset path is NULL", fn, f->path);
        return NULL;
    }
    while (*p == '/') p++;
    size_t n = strlen(p);
    if (n == 0 || p[n - 1] == '/' || strstr(p, "//")) {
        *st = ch_fail(CH_ERR_ARG, "%s: '%s': invalid dataset path '%s' (expected names joined by '/')", fn, f->path, p);
        return NULL;
    }
    return p;
}

/* Whether every prefix of path exists as a link (H5Lexists needs the parent). */
static int path_exists(hid_t fid, const char *path) {
    char buf[4096];
    size_t n = strlen(path);
    if (n >= sizeof buf) return 0;
    memcpy(buf, path, n + 1);
    for (size_t i = 0; i <= n; i++) {
        if (buf[i] == '/' || buf[i] == 0) {
            char c = buf[i];
            buf[i] = 0;
            htri_t e = H5Lexists(fid, buf, H5P_DEFAULT);
            buf[i] = c;
            if (e <= 0) return 0;
        }
    }
    return 1;
}

int ch_h5_exists(ch_h5_file *f, const char *path) {
    if (!f || !path) return 0;
    quiet();
    while (*path == '/') path++;
    if (!*path) return 1;
    return path_exists(f->fid, path);
}

/* ---- write ---------------------------------------------------------------- */
/* Fixed-length strings of n bytes, null-padded, UTF-8 (h5py's '|S<n>'). */
static hid_t string_type(size_t n) {
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, n);
    H5Tset_strpad(t, H5T_STR_NULLPAD);
    H5Tset_cset(t, H5T_CSET_UTF8);
    return t;
}

ch_status ch_h5_write(ch_h5_file *f, const char *path, const ch_tensor *t) { return ch_h5_write_ex(f, path, t, 0); }

ch_status ch_h5_write_ex(ch_h5_file *f, const char *path, const ch_tensor *t, char kind) {
    const char *fn = "hdf5_write";
    if (!f) return ch_fail(CH_ERR_ARG, "%s: the file is NULL (closed?)", fn);
    ch_status st;
    path = clean_path(path, fn, f, &st);
    if (!path) return st;
    CH_CHECK_ARG(t, fn, "t");
    if (kind != 0 && kind != 'S')
        return ch_fail(CH_ERR_ARG, "%s: '%s': dataset '%s': HDF5 strings are written from kind 'S' (UTF-8 bytes), "
                       "not '%c'", fn, f->path, path, kind);
    CH_TRY(ch_npy_check_kind(t, kind, fn, path));
    if (f->mode == 'r')
        return ch_fail(CH_ERR_ARG, "%s: '%s' was opened read-only (mode 'r'); cannot write '%s'", fn, f->path, path);
    quiet();
    drop_names(f);
    if (path_exists(f->fid, path)) {
        /* overwrite a dataset; refuse to replace a group */
        hid_t o = H5Oopen(f->fid, path, H5P_DEFAULT);
        int is_ds = o >= 0 && H5Iget_type(o) == H5I_DATASET;
        if (o >= 0) H5Oclose(o);
        if (!is_ds)
            return ch_fail(CH_ERR_ARG, "%s: '%s': '%s' is a group, not a dataset", fn, f->path, path);
        if (H5Ldelete(f->fid, path, H5P_DEFAULT) < 0)
            return ch_fail(CH_ERR_IO, "%s: '%s': cannot replace dataset '%s'", fn, f->path, path);
    }
    ch_tensor *c = NULL;
    CH_TRY(ch_npy_host_contiguous(t, &c));
    hsize_t dims[CH_MAX_DIMS];
    int nd = c->nd - (kind != 0);   /* a string array's last axis is its item length */
    for (int i = 0; i < nd; i++) dims[i] = (hsize_t)c->dim[i];
    hid_t space = nd == 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(nd, dims, NULL);
    hid_t ftype, mtype;
    if (kind) {
        ftype = string_type((size_t)c->dim[c->nd - 1]);
        mtype = H5Tcopy(ftype);
    } else {
        types_of((ch_dtype)c->dt, &ftype, &mtype);
    }
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    hid_t ds = H5Dcreate2(f->fid, path, ftype, space, lcpl, H5P_DEFAULT, H5P_DEFAULT);
    st = CH_OK;
    if (ds < 0)
        st = ch_fail(CH_ERR_IO, "%s: '%s': cannot create dataset '%s' (is a parent a dataset?)", fn, f->path, path);
    else if (c->numel > 0 && H5Dwrite(ds, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, ch_base(c)) < 0)
        st = ch_fail(CH_ERR_IO, "%s: '%s': writing dataset '%s' failed", fn, f->path, path);
    if (ds >= 0) H5Dclose(ds);
    H5Pclose(lcpl);
    H5Tclose(ftype);
    H5Tclose(mtype);
    H5Sclose(space);
    ch_tensor_release(c);
    return st;
}

/* ---- read ------------------------------------------------------------------ */
static int is_h5py_bool(hid_t ftype) {
    if (H5Tget_nmembers(ftype) != 2) return 0;
    int ok = 1;
    for (unsigned i = 0; i < 2 && ok; i++) {
        char *name = H5Tget_member_name(ftype, i);
        int64_t v = -1;
        hid_t super = H5Tget_super(ftype);
        if (H5Tget_class(super) == H5T_INTEGER && H5Tget_size(super) <= 8) {
            unsigned char raw[8] = {0};
            H5Tget_member_value(ftype, i, raw);
            /* normalise through HDF5's conversion to a native int64 */
            int64_t conv[1] = {0};
            memcpy(conv, raw, H5Tget_size(super));
            H5Tconvert(super, H5T_NATIVE_INT64, 1, conv, NULL, H5P_DEFAULT);
            v = conv[0];
        }
        H5Tclose(super);
        ok = name && ((strcmp(name, "FALSE") == 0 && v == 0) || (strcmp(name, "TRUE") == 0 && v == 1));
        if (name) H5free_memory(name);
    }
    return ok;
}

/* Variable-length strings, in the isolated child: H5Dread follows the heap
 * references wherever they point.  The child sends each item as a uint64
 * length (UINT64_MAX for a null item) and its bytes. */
typedef struct vlen_job {
    hid_t ds, mtype;
    int64_t count;
} vlen_job;

static int read_vlen_child(ch_isolated_out *o, void *arg) {
    vlen_job *j = (vlen_job *)arg;
    char **items = (char **)calloc((size_t)j->count, sizeof(char *));
    if (!items) {
        ch_isolated_write(o, "out of memory", 13);
        return 1;
    }
    if (H5Dread(j->ds, j->mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, items) < 0) {
        char why[220], msg[300];
        int n = snprintf(msg, sizeof msg, "reading the strings failed%s", h5_reason(why));
        ch_isolated_write(o, msg, (size_t)n);
        free(items);
        return 1;
    }
    int rc = 0;
    for (int64_t i = 0; i < j->count && rc == 0; i++) {
        uint64_t n = items[i] ? (uint64_t)strlen(items[i]) : UINT64_MAX;
        rc = ch_isolated_write(o, &n, sizeof n);
        if (rc == 0 && items[i]) rc = ch_isolated_write(o, items[i], (size_t)n);
    }
    hid_t space = H5Dget_space(j->ds);
    H5Dvlen_reclaim(j->mtype, space, H5P_DEFAULT, items);   /* H5Treclaim from 1.12 on */
    H5Sclose(space);
    free(items);
    return rc;
}

/* Reads a variable-length string dataset of `count` items into a new uint8
 * tensor (dims..., longest item), null-padded like a fixed-length one. */
static ch_status read_vlen_strings(hid_t ds, hid_t ftype, const char *fn, const ch_h5_file *f, const char *path, int nd,
                                   int64_t *dim, int64_t count, ch_tensor **result) {
    *result = NULL;
    char *data = NULL;
    size_t len = 0;
    ch_status st = CH_OK;
    if (count > 0) {
        vlen_job job = {ds, H5Tcopy(H5T_C_S1), count};
        H5Tset_size(job.mtype, H5T_VARIABLE);
        H5Tset_cset(job.mtype, H5Tget_cset(ftype));   /* HDF5 converts no other */
        char what[600];
        snprintf(what, sizeof what, "%s: '%s': string dataset '%s'", fn, f->path, path);
        st = ch_isolated_run(read_vlen_child, &job, what, &data, &len);
        H5Tclose(job.mtype);
        if (st != CH_OK) return st;
    }
    /* first pass: check the child's stream and find the longest item */
    size_t longest = 1, at = 0;
    int64_t items = 0;
    for (; items < count; items++) {
        uint64_t n;
        if (len - at < sizeof n) break;
        memcpy(&n, data + at, sizeof n);
        at += sizeof n;
        if (n == UINT64_MAX) continue;
        if (n > len - at) { at = len + 1; break; }
        if (n > longest) longest = (size_t)n;
        at += (size_t)n;
    }
    if (items != count || at != len) {
        free(data);
        return ch_fail(CH_ERR_INTERNAL, "%s: '%s': string dataset '%s': the reading process sent a truncated result",
                       fn, f->path, path);
    }
    ch_tensor *t = NULL;
    dim[nd] = (int64_t)longest;
    if ((st = ch_check_shape(nd + 1, dim, fn)) == CH_OK)
        st = ch_tensor_new(CH_UINT8, nd + 1, dim, CH_CPU, &t);
    if (st == CH_OK) {
        unsigned char *out = (unsigned char *)ch_base(t);
        memset(out, 0, (size_t)t->numel);
        at = 0;
        for (int64_t i = 0; i < count; i++) {
            uint64_t n;
            memcpy(&n, data + at, sizeof n);
            at += sizeof n;
            if (n == UINT64_MAX) continue;
            memcpy(out + (size_t)i * longest, data + at, (size_t)n);
            at += (size_t)n;
        }
    } else {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", ch_last_error());
        st = ch_fail(st, "%s: '%s': string dataset '%s': %s", fn, f->path, path, msg);
    }
    free(data);
    *result = t;
    return st;
}

/* Whether a number type is one libhdf5 can convert without reading past an
 * item: every bit of the item is the number (precision = 8 x size, offset 0).
 * A header whose size was edited has a precision that no longer fits. */
static ch_status check_number_layout(hid_t ftype, size_t size, const char *fn, const ch_h5_file *f, const char *path) {
    size_t prec = H5Tget_precision(ftype);
    int off = H5Tget_offset(ftype);
    H5T_order_t order = H5Tget_order(ftype);
    if (prec != 8 * size || off != 0 || (order != H5T_ORDER_LE && order != H5T_ORDER_BE && size > 1))
        return ch_fail(CH_ERR_FORMAT, "%s: '%s': dataset '%s' has %zu-byte numbers with %zu bits of precision at bit "
                       "offset %d (damaged file?)", fn, f->path, path, size, prec, off);
    return CH_OK;
}

/* After a failed read: a filter of a chunked dataset that this libhdf5 does
 * not have (h5py's lzf, plugins such as blosc) is the likely reason, so name
 * it.  (Not checked before reading: a chunk an optional filter skipped is
 * stored plain and reads fine without it.) */
/* The chunks of a chunked dataset that no filter touched (an unfiltered
 * pipeline, or a filter mask that skipped every filter) are copied as they
 * are stored, and libhdf5 1.10 trusts the stored size: a damaged index that
 * says 22 bytes for a 24-byte chunk makes H5Dread copy past its buffer (found
 * by fuzz_hdf5).  So each such chunk must store exactly a chunk's bytes.
 * Chunks are looked up by their grid coordinates (a lookup by index walks
 * the whole index each time); a grid beyond CHUNK_GRID_MAX is refused rather
 * than read unchecked -- no model file comes near it. */
#define CHUNK_GRID_MAX ((uint64_t)1 << 20)
static ch_status check_raw_chunks(hid_t ds, hid_t dcpl, int nd, const int64_t *dim, size_t item, const char *fn,
                                  const ch_h5_file *f, const char *path) {
    hsize_t cdim[CH_MAX_DIMS];
    int nfilters = H5Pget_nfilters(dcpl);
    if (nd == 0 || H5Pget_chunk(dcpl, nd, cdim) != nd || nfilters < 0)
        return ch_fail(CH_ERR_FORMAT, "%s: '%s': dataset '%s' has a damaged chunk layout", fn, f->path, path);
    uint64_t grid = 1, chunk_bytes = item;
    hsize_t count[CH_MAX_DIMS];
    for (int i = 0; i < nd; i++) {
        if (cdim[i] == 0)
            return ch_fail(CH_ERR_FORMAT, "%s: '%s': dataset '%s' has a chunk of size 0", fn, f->path, path);
        count[i] = ((hsize_t)dim[i] + cdim[i] - 1) / cdim[i];
        grid *= count[i] ? count[i] : 1;
        chunk_bytes *= cdim[i];
        if (grid > CHUNK_GRID_MAX || chunk_bytes > ((uint64_t)1 << 40))
            return ch_fail(CH_ERR_FORMAT, "%s: '%s': dataset '%s' has more than %llu chunks (or a chunk above 1 TB): "
                           "too many to check (damaged file?)", fn, f->path, path, (unsigned long long)CHUNK_GRID_MAX);
    }
    for (int i = 0; i < nd; i++)
        if (count[i] == 0) return CH_OK;   /* an empty dataset has no chunks */
#if H5_VERSION_GE(1, 10, 5)
    unsigned all_skipped = nfilters >= 32 ? ~0u : (1u << nfilters) - 1;
    hsize_t at[CH_MAX_DIMS] = {0}, off[CH_MAX_DIMS];
    for (uint64_t k = 0; k < grid; k++) {
        for (int i = 0; i < nd; i++) off[i] = at[i] * cdim[i];
        unsigned mask = 0;
        haddr_t addr = HADDR_UNDEF;
        hsize_t stored = 0;
        if (H5Dget_chunk_info_by_coord(ds, off, &mask, &addr, &stored) < 0)
            return ch_fail(CH_ERR_FORMAT, "%s: '%s': dataset '%s': its chunk index is damaged", fn, f->path, path);
        int raw = nfilters == 0 || (mask & all_skipped) == all_skipped;
        if (addr != HADDR_UNDEF && raw && stored != chunk_bytes)
            return ch_fail(CH_ERR_FORMAT, "%s: '%s': dataset '%s': an unfiltered chunk stores %llu bytes where a chunk "
                           "has %llu (damaged file?)", fn, f->path, path, (unsigned long long)stored,
                           (unsigned long long)chunk_bytes);
        for (int i = nd - 1; i >= 0 && ++at[i] == count[i]; i--) at[i] = 0;
    }
#else   /* libhdf5 before 1.10.5 cannot look chunks up: such files read unchecked */
    (void)ds;
#endif
    return CH_OK;
}

static ch_status check_filters(hid_t ds, const char *fn, const ch_h5_file *f, const char *path) {
    hid_t dcpl = H5Dget_create_plist(ds);
    if (dcpl < 0) return CH_OK;
    ch_status st = CH_OK;
    int nf = H5Pget_nfilters(dcpl);
    for (int i = 0; i < nf && st == CH_OK; i++) {
        unsigned flags = 0, conf = 0;
        size_t nvals = 0;
        char name[128] = "";
        H5Z_filter_t id = H5Pget_filter2(dcpl, (unsigned)i, &flags, &nvals, NULL, sizeof name, name, &conf);
        if (id < 0) {
            st = ch_fail(CH_ERR_FORMAT, "%s: '%s': dataset '%s': its filter list is unreadable (damaged file?)", fn,
                         f->path, path);
        } else if (H5Zfilter_avail(id) <= 0) {
            st = ch_fail(CH_ERR_UNSUPPORTED, "%s: '%s': dataset '%s' is stored through HDF5 filter %d ('%s'), which "
                         "this libhdf5 does not have (write it with gzip or without compression)", fn, f->path, path,
                         (int)id, name[0] ? name : "unnamed");
        }
    }
    H5Pclose(dcpl);
    return st;
}

ch_status ch_h5_read(ch_h5_file *f, const char *path, ch_tensor **result) { return ch_h5_read_ex(f, path, result, NULL); }

ch_status ch_h5_read_ex(ch_h5_file *f, const char *path, ch_tensor **result, char *kind) {
    const char *fn = "hdf5_read";
    if (!f) return ch_fail(CH_ERR_ARG, "%s: the file is NULL (closed?)", fn);
    ch_status st;
    path = clean_path(path, fn, f, &st);
    if (!path) return st;
    if (!result) return ch_fail(CH_ERR_ARG, "%s: result is NULL", fn);
    quiet();
    if (!path_exists(f->fid, path))
        return ch_fail(CH_ERR_ARG, "%s: '%s' has no dataset '%s'", fn, f->path, path);
    hid_t ds = H5Dopen2(f->fid, path, H5P_DEFAULT);
    if (ds < 0) {
        hid_t o = H5Oopen(f->fid, path, H5P_DEFAULT);
        int is_group = o >= 0 && H5Iget_type(o) == H5I_GROUP;
        if (o >= 0) H5Oclose(o);
        if (is_group) return ch_fail(CH_ERR_ARG, "%s: '%s': '%s' is a group, not a dataset", fn, f->path, path);
        char why[220];
        return ch_fail(CH_ERR_FORMAT, "%s: '%s': dataset '%s' cannot be opened (damaged file?)%s", fn, f->path, path,
                       h5_reason(why));
    }
    hid_t ftype = H5Dget_type(ds), space = H5Dget_space(ds), mtype = -1;
    ch_dtype dt = CH_FLOAT32;
    st = CH_OK;
    H5T_class_t cls = H5Tget_class(ftype);
    size_t size = H5Tget_size(ftype);
    int vlen_str = 0;
    if (cls == H5T_STRING) {
        if (!kind)   /* refused before anything is read */
            st = ch_fail(CH_ERR_DTYPE, "%s: '%s': dataset '%s' holds strings where numbers are expected", fn, f->path,
                         path);
        vlen_str = H5Tis_variable_str(ftype) > 0;
        dt = CH_UINT8;
    } else if (cls == H5T_INTEGER) {
        int sgn = H5Tget_sign(ftype) == H5T_SGN_2;
        switch (size) {
        case 1: dt = sgn ? CH_INT8 : CH_UINT8; break;
        case 2: dt = sgn ? CH_INT16 : CH_INT32; break;   /* uint16 widens */
        case 4: dt = sgn ? CH_INT32 : CH_INT64; break;   /* uint32 widens */
        case 8:
            if (sgn) dt = CH_INT64;
            else st = ch_fail(CH_ERR_DTYPE, "%s: '%s': dataset '%s' is uint64, which chainlua has no dtype for", fn,
                              f->path, path);
            break;
        default:
            st = ch_fail(CH_ERR_DTYPE, "%s: '%s': dataset '%s' has %zu-byte integers", fn, f->path, path, size);
        }
    } else if (cls == H5T_FLOAT) {
        if (size == 2) dt = CH_FLOAT16;
        else if (size == 4) dt = CH_FLOAT32;
        else if (size == 8) dt = CH_FLOAT64;
        else st = ch_fail(CH_ERR_DTYPE, "%s: '%s': dataset '%s' has %zu-byte floats", fn, f->path, path, size);
    } else if (cls == H5T_ENUM && is_h5py_bool(ftype)) {
        dt = CH_BOOL;
    } else {
        st = ch_fail(CH_ERR_DTYPE, "%s: '%s': dataset '%s' has an HDF5 type class (%d) with no chainlua dtype "
                     "(numbers, h5py bools and strings are supported)", fn, f->path, path, (int)cls);
    }
    if (st == CH_OK && (cls == H5T_INTEGER || cls == H5T_FLOAT))
        st = check_number_layout(ftype, size, fn, f, path);
    if (kind) *kind = cls == H5T_STRING ? 'S' : 0;
    int nd = 0;
    int64_t dim[CH_MAX_DIMS];
    if (st == CH_OK) {
        H5S_class_t sc = H5Sget_simple_extent_type(space);
        if (sc == H5S_SCALAR) {
            nd = 0;
        } else if (sc == H5S_SIMPLE) {
            nd = H5Sget_simple_extent_ndims(space);
            if (nd < 0 || nd > CH_MAX_DIMS) {
                st = ch_fail(CH_ERR_FORMAT, "%s: '%s': dataset '%s' has %d dimensions (at most %d)", fn, f->path,
                             path, nd, CH_MAX_DIMS);
            } else {
                hsize_t hd[CH_MAX_DIMS];
                H5Sget_simple_extent_dims(space, hd, NULL);
                for (int i = 0; i < nd; i++) dim[i] = (int64_t)hd[i];
            }
        } else {
            st = ch_fail(CH_ERR_FORMAT, "%s: '%s': dataset '%s' has an empty (null) dataspace", fn, f->path, path);
        }
    }
    /* A damaged header can claim any shape: check it before allocating, and
     * that a contiguous or compact dataset stores that many bytes (a chunked
     * one's storage is compressed, and H5Dread reports what is missing). */
    if (st == CH_OK && ch_check_shape(nd, dim, fn) != CH_OK) {
        char sh[CH_SHAPE_BUF];
        st = ch_fail(CH_ERR_FORMAT, "%s: '%s': dataset '%s' has an impossible shape %s (damaged file?)", fn, f->path,
                     path, ch_shape_str(sh, sizeof sh, nd, dim));
    }
    if (st == CH_OK && cls == H5T_STRING && nd >= CH_MAX_DIMS)
        st = ch_fail(CH_ERR_FORMAT, "%s: '%s': string dataset '%s' has %d dimensions (at most %d: the characters "
                     "take one more)", fn, f->path, path, nd, CH_MAX_DIMS - 1);
    if (st == CH_OK && !vlen_str) {   /* a variable-length one stores heap references */
        uint64_t need = (uint64_t)ch_numel(nd, dim) * size;
        hid_t dcpl = H5Dget_create_plist(ds);
        H5D_layout_t lay = dcpl >= 0 ? H5Pget_layout(dcpl) : H5D_LAYOUT_ERROR;
        if (dcpl >= 0) H5Pclose(dcpl);
        hsize_t stored = H5Dget_storage_size(ds);
        if ((lay == H5D_CONTIGUOUS || lay == H5D_COMPACT) && stored > 0 && stored < need) {
            char sh[CH_SHAPE_BUF];
            st = ch_fail(CH_ERR_FORMAT, "%s: '%s': dataset '%s' claims shape %s (%llu bytes) but stores %llu bytes "
                         "(damaged file?)", fn, f->path, path, ch_shape_str(sh, sizeof sh, nd, dim),
                         (unsigned long long)need, (unsigned long long)stored);
        }
        if (st == CH_OK && lay == H5D_CHUNKED) {
            dcpl = H5Dget_create_plist(ds);
            st = dcpl >= 0 ? check_raw_chunks(ds, dcpl, nd, dim, size, fn, f, path)
                           : ch_fail(CH_ERR_FORMAT, "%s: '%s': dataset '%s' has a damaged layout", fn, f->path, path);
            if (dcpl >= 0) H5Pclose(dcpl);
        }
    }
    ch_tensor *t = NULL;
    if (st == CH_OK && vlen_str) {
        st = read_vlen_strings(ds, ftype, fn, f, path, nd, dim, ch_numel(nd, dim), &t);
    } else if (st == CH_OK) {
        int tnd = nd;
        if (cls == H5T_STRING)   /* fixed-length: the item's bytes are the last axis */
            dim[tnd++] = (int64_t)size;
        if ((st = ch_tensor_new(dt, tnd, dim, CH_CPU, &t)) != CH_OK) {
            char msg[512];
            snprintf(msg, sizeof msg, "%s", ch_last_error());
            st = ch_fail(st, "%s: '%s': dataset '%s': %s", fn, f->path, path, msg);
        }
    }
    if (st == CH_OK && t->numel > 0 && !vlen_str) {
        if (cls == H5T_STRING) {
            mtype = H5Tcopy(ftype);   /* same character set: HDF5 converts no other */
            H5Tset_strpad(mtype, H5T_STR_NULLPAD);   /* space padding becomes null padding */
        } else {
            hid_t ft_dummy;
            types_of(dt, &ft_dummy, &mtype);
            H5Tclose(ft_dummy);
        }
        /* what a damaged chunk leaves unwritten reads as zeros, never as
         * whatever the allocator had there */
        memset(ch_base(t), 0, (size_t)t->numel * ch_dtype_size((ch_dtype)t->dt));
        if (H5Dread(ds, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, ch_base(t)) < 0) {
            char why[220];
            h5_reason(why);
            if ((st = check_filters(ds, fn, f, path)) == CH_OK)
                st = ch_fail(CH_ERR_FORMAT, "%s: '%s': reading dataset '%s' failed%s", fn, f->path, path, why);
        }
    }
    if (mtype >= 0) H5Tclose(mtype);
    H5Tclose(ftype);
    H5Sclose(space);
    H5Dclose(ds);
    return ch_hand_over(st, t, result);
}

/* ---- enumeration ------------------------------------------------------------- */
typedef struct collect {
    char **names;
    int n, cap;
    int oom;
    char bad[256];   /* an object that cannot be opened: listed neither way */
} collect;

static herr_t visit_cb(hid_t g, const char *name, const H5L_info_t *info, void *data) {
    collect *c = (collect *)data;
    if (info->type != H5L_TYPE_HARD) return 0;
    hid_t o = H5Oopen(g, name, H5P_DEFAULT);
    if (o < 0) {   /* skipping it would hide a dataset that exists() reports */
        snprintf(c->bad, sizeof c->bad, "%s", name);
        return -1;
    }
    int is_ds = H5Iget_type(o) == H5I_DATASET;
    H5Oclose(o);
    if (!is_ds) return 0;
    if (c->n == c->cap) {
        int cap = c->cap ? 2 * c->cap : 32;
        char **p = (char **)realloc(c->names, sizeof(char *) * (size_t)cap);
        if (!p) { c->oom = 1; return -1; }
        c->names = p;
        c->cap = cap;
    }
    if (!(c->names[c->n] = dup_str(name))) { c->oom = 1; return -1; }
    c->n++;
    return 0;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int ensure_names(ch_h5_file *f) {
    if (f->names) return 0;
    quiet();
    collect c = {NULL, 0, 0, 0, ""};
    herr_t rc = H5Lvisit(f->fid, H5_INDEX_NAME, H5_ITER_INC, visit_cb, &c);
    /* a damaged group stops the walk half-way: fail rather than hand back
     * a silently partial list */
    if (c.oom || rc < 0) {
        for (int i = 0; i < c.n; i++) free(c.names[i]);
        free(c.names);
        if (c.oom)
            ch_fail(CH_ERR_MEMORY, "hdf5: out of memory listing the datasets of '%s'", f->path);
        else if (c.bad[0])
            ch_fail(CH_ERR_FORMAT, "hdf5: '%s': object '%s' cannot be opened (damaged file?)", f->path, c.bad);
        else
            ch_fail(CH_ERR_FORMAT, "hdf5: '%s': listing its datasets failed (damaged file?)", f->path);
        return -1;
    }
    if (c.n > 1)   /* qsort(NULL, 0, ...) is undefined */
        qsort(c.names, (size_t)c.n, sizeof(char *), by_name);
    f->names = c.names ? c.names : (char **)calloc(1, sizeof(char *));
    f->nnames = c.n;
    return 0;
}

int ch_h5_count(ch_h5_file *f) {
    if (!f) return 0;
    if (ensure_names(f) != 0) return -1;
    return f->nnames;
}

const char *ch_h5_name(ch_h5_file *f, int i) {
    if (!f || ensure_names(f) != 0 || i < 0 || i >= f->nnames) return NULL;
    return f->names[i];
}
