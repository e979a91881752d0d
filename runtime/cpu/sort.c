/* sort.c -- CPU kernels of the stable sort and argsort along an axis, and
 * of unique.  Front doors (checks, outputs): runtime/ops/sort.c.
 *
 * Each line along the axis is loaded into (key, position) pairs -- float
 * keys as double (exact for float16/32/64), integer keys as int64 (exact)
 * -- and merge-sorted, which is stable.  Ascending order puts NaN last, as
 * NumPy does; descending order is the exact reverse ranking (NaN first,
 * like a descending sort in PyTorch), and keeps equal elements in their
 * original order.  Lines are independent, so they are sorted in parallel.
 */
#include "../core/internal.h"
#include "../core/kernels.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>

typedef struct { double k; int64_t i; } fkey;
typedef struct { int64_t k; int64_t i; } ikey;

/* "b goes strictly before a" for the four orders: a merge that takes the
 * left element unless the right one goes strictly before it is stable. */
#define F_ASC_LT(b, a) ((b).k < (a).k || (isnan((a).k) && !isnan((b).k)))
#define F_DESC_LT(b, a) ((b).k > (a).k || (isnan((b).k) && !isnan((a).k)))
#define I_ASC_LT(b, a) ((b).k < (a).k)
#define I_DESC_LT(b, a) ((b).k > (a).k)

/* Bottom-up merge sort of v[0..n) using tmp[0..n); insertion sort on runs
 * of 16 first.  Leaves the result in v. */
#define DEFINE_MSORT(name, T, BEFORE)                                               \
    static void name(T *v, T *tmp, int64_t n) {                                     \
        const int64_t run = 16;                                                     \
        for (int64_t s = 0; s < n; s += run) {                                      \
            int64_t e = s + run < n ? s + run : n;                                  \
            for (int64_t i = s + 1; i < e; i++) {                                   \
                T x = v[i];                                                         \
                int64_t j = i;                                                      \
                while (j > s && BEFORE(x, v[j - 1])) {                              \
                    v[j] = v[j - 1];                                                \
                    j--;                                                            \
                }                                                                   \
                v[j] = x;                                                           \
            }                                                                       \
        }                                                                           \
        T *src = v, *dst = tmp;                                                     \
        for (int64_t w = run; w < n; w *= 2) {                                      \
            for (int64_t s = 0; s < n; s += 2 * w) {                                \
                int64_t m = s + w < n ? s + w : n, e = s + 2 * w < n ? s + 2 * w : n; \
                int64_t i = s, j = m, k = s;                                        \
                while (i < m && j < e) dst[k++] = BEFORE(src[j], src[i]) ? src[j++] : src[i++]; \
                while (i < m) dst[k++] = src[i++];                                  \
                while (j < e) dst[k++] = src[j++];                                  \
            }                                                                       \
            T *t = src; src = dst; dst = t;                                         \
        }                                                                           \
        if (src != v) memcpy(v, src, (size_t)n * sizeof(T));                        \
    }

DEFINE_MSORT(sort_f_asc, fkey, F_ASC_LT)
DEFINE_MSORT(sort_f_desc, fkey, F_DESC_LT)
DEFINE_MSORT(sort_i_asc, ikey, I_ASC_LT)
DEFINE_MSORT(sort_i_desc, ikey, I_DESC_LT)

/* Where the lines of one sort_lines call lie and where their results go. */
typedef struct sort_job {
    const char *xb;        /* x's first element */
    ch_dtype dt;
    bool fl;               /* float keys (else int64) */
    int descending;
    int64_t n, xs, os;     /* line length, its stride in x and in the results */
    int m;                 /* the other axes: extents, strides in x and in the results */
    const int64_t *odim, *xstr, *ostr;
    size_t z;
    ch_tensor *vals, *args;
} sort_job;

/* Sorts line l of the job, with buf (2 n key pairs) as scratch. */
static void sort_line(const sort_job *jb, int64_t l, char *buf) {
    int64_t n = jb->n, xs = jb->xs, os = jb->os;
    ch_dtype dt = jb->dt;
    size_t z = jb->z;
    int64_t rem = l, xo = 0, oo = 0;
    for (int d = jb->m - 1; d >= 0; d--) {
        int64_t k = rem % jb->odim[d];
        rem /= jb->odim[d];
        xo += k * jb->xstr[d];
        oo += k * jb->ostr[d];
    }
    const char *src = jb->xb + xo * (int64_t)z;
    const int64_t *pos;
    if (jb->fl) {
        fkey *v = (fkey *)buf;
        if (dt == CH_FLOAT32)
            for (int64_t i = 0; i < n; i++) v[i].k = ((const float *)src)[i * xs], v[i].i = i;
        else if (dt == CH_FLOAT64)
            for (int64_t i = 0; i < n; i++) v[i].k = ((const double *)src)[i * xs], v[i].i = i;
        else
            for (int64_t i = 0; i < n; i++) v[i].k = ch_load(dt, src + i * xs * (int64_t)z), v[i].i = i;
        if (jb->descending) sort_f_desc(v, v + n, n);
        else sort_f_asc(v, v + n, n);
        pos = &v[0].i;
    } else {
        ikey *v = (ikey *)buf;
        for (int64_t i = 0; i < n; i++) v[i].k = ch_load_i64(dt, src + i * xs * (int64_t)z), v[i].i = i;
        if (jb->descending) sort_i_desc(v, v + n, n);
        else sort_i_asc(v, v + n, n);
        pos = &v[0].i;
    }
    /* pos[2*i] is the source position of the i-th sorted element (pairs are 16 bytes) */
    if (jb->args) {
        int64_t *a = (int64_t *)jb->args->data + oo;
        for (int64_t i = 0; i < n; i++) a[i * os] = pos[2 * i];
    }
    if (jb->vals) {
        char *o = (char *)jb->vals->data + oo * (int64_t)z;
        for (int64_t i = 0; i < n; i++)
            memcpy(o + i * os * (int64_t)z, src + pos[2 * i] * xs * (int64_t)z, z);
    }
}

/* Sorts every line of x along axis; writes the sorted values to vals
 * and/or the source positions (int64) to args (either may be NULL).
 * vals and args are contiguous tensors shaped like x. */
ch_status ch_cpu_sort(const ch_tensor *x, int axis, int descending, ch_tensor *vals, ch_tensor *args) {
    ch_dtype dt = (ch_dtype)x->dt;
    bool fl = ch_dtype_is_float(dt);
    int nd = x->nd;
    int64_t n = x->dim[axis];
    int64_t lines = n ? x->numel / n : 0;
    /* the other axes, for locating each line */
    int64_t odim[CH_MAX_DIMS], xstr[CH_MAX_DIMS], ostr[CH_MAX_DIMS], cstr[CH_MAX_DIMS];
    ch_contiguous_strides(nd, x->dim, cstr);
    int m = 0;
    for (int d = 0; d < nd; d++)
        if (d != axis) odim[m] = x->dim[d], xstr[m] = x->stride[d], ostr[m++] = cstr[d];
    sort_job jb = {ch_base(x), dt, fl, descending, n, x->stride[axis], cstr[axis], m, odim, xstr, ostr,
                   ch_dtype_size(dt), vals, args};
    size_t per = 2 * (size_t)n * (fl ? sizeof(fkey) : sizeof(ikey));   /* scratch of one thread */
    int nth = ch_threads();
    bool par = lines > 1 && x->numel >= CH_PARALLEL_GRAIN / 4;
    char *scratch = malloc(per * (size_t)(par ? nth : 1) + 1);
    if (!scratch) return ch_fail(CH_ERR_MEMORY, "sort: out of memory for %lld elements", (long long)n);
    if (par) {
#pragma omp parallel for schedule(static) num_threads(nth)
        for (int64_t l = 0; l < lines; l++)
            sort_line(&jb, l, scratch + (size_t)omp_get_thread_num() * per);
    } else {
        for (int64_t l = 0; l < lines; l++)
            sort_line(&jb, l, scratch);
    }
    free(scratch);
    return CH_OK;
}

/* unique: group ids of the sorted elements; NaNs form one group (NumPy's
 * equal_nan). */
ch_status ch_cpu_unique_groups(const ch_tensor *flat, const ch_tensor *order, ch_tensor *group, int64_t *ngroups) {
    ch_dtype dt = (ch_dtype)flat->dt;
    size_t z = ch_dtype_size(dt);
    int64_t n = flat->numel;
    const int64_t *ord = (const int64_t *)ch_base(order);
    const char *fb = ch_base(flat);
    int64_t fs = flat->stride[0];
    bool fl = ch_dtype_is_float(dt);
    int64_t *gr = (int64_t *)ch_base(group);
    int64_t g = -1;
    double prevf = 0;
    int64_t previ = 0;
    for (int64_t i = 0; i < n; i++) {
        const char *e = fb + ord[i] * fs * (int64_t)z;
        bool same;
        if (fl) {
            double v = ch_load(dt, e);
            same = i > 0 && (v == prevf || (isnan(v) && isnan(prevf)));
            prevf = v;
        } else {
            int64_t v = ch_load_i64(dt, e);
            same = i > 0 && v == previ;
            previ = v;
        }
        if (!same) g++;
        gr[i] = g;
    }
    *ngroups = g + 1;
    return CH_OK;
}

ch_status ch_cpu_unique_fill(const ch_tensor *flat, const ch_tensor *order, const ch_tensor *group, ch_tensor *vals,
                             ch_tensor *inv, ch_tensor *cnt) {
    ch_dtype dt = (ch_dtype)flat->dt;
    size_t z = ch_dtype_size(dt);
    int64_t n = flat->numel;
    const int64_t *ord = (const int64_t *)ch_base(order), *gr = (const int64_t *)ch_base(group);
    const char *fb = ch_base(flat);
    int64_t fs = flat->stride[0];
    if (cnt) memset(ch_base(cnt), 0, (size_t)cnt->numel * sizeof(int64_t));
    for (int64_t i = 0; i < n; i++) {
        if (i == 0 || gr[i] != gr[i - 1])
            memcpy((char *)ch_base(vals) + gr[i] * (int64_t)z, fb + ord[i] * fs * (int64_t)z, z);
        if (inv) ((int64_t *)ch_base(inv))[ord[i]] = gr[i];
        if (cnt) ((int64_t *)ch_base(cnt))[gr[i]]++;
    }
    return CH_OK;
}
