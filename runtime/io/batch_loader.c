/* batch_loader.c -- gathering minibatches of dataset rows, now or on worker
 * threads (chainer.iterators.MultithreadIterator).
 *
 * A LuaJIT state runs on one thread, so background loading happens here in
 * C: the Lua side decides which rows make each batch (the epoch order stays
 * in Lua, deterministic for a seed) and queues a job; a worker copies the
 * rows into batch tensors allocated at submit time.  Workers only memcpy:
 * every allocation, refcount change and error report happens on the calling
 * thread, so nothing else in the runtime needs to be thread-safe for this.
 * A job still queued when the caller asks for it is run by the caller
 * itself, so a wait never depends on a worker being scheduled. */
#include "../core/internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define LOADER_MAX_SOURCES 16

/* Every row of a source (axis 0) must be one contiguous run of bytes. */
static ch_status check_source(const ch_tensor *s, int k, const char *fn) {
    /* CPU only: worker threads memcpy rows out of the sources' host memory */
    CH_CHECK_CPU(s, fn, "sources");
    if (s->nd < 1)
        return ch_fail(CH_ERR_SHAPE, "%s: source %d is 0-d (expected at least 1 dimension)", fn, k + 1);
    int64_t expect = 1;
    for (int d = s->nd - 1; d >= 1; d--) {
        if (s->dim[d] != 1 && s->stride[d] != expect)
            return ch_fail(CH_ERR_ARG, "%s: the rows of source %d are not contiguous (make it contiguous first)",
                           fn, k + 1);
        expect *= s->dim[d];
    }
    return CH_OK;
}

/* A contiguous int64 copy of 1-D indices, checked against n rows. */
static ch_status checked_indices(const ch_tensor *indices, int64_t n, const char *fn, ch_tensor **out) {
    CH_CHECK_ARG(indices, fn, "indices");   /* any device: copied into a CPU int64 tensor below */
    if (indices->nd != 1)
        return ch_fail(CH_ERR_SHAPE, "%s: indices must be 1-D (got %d dimensions)", fn, indices->nd);
    ch_tensor *idx = NULL;
    CH_TRY(ch_tensor_new(CH_INT64, 1, indices->dim, CH_CPU, &idx));
    ch_status st = ch_copy_into(idx, indices);
    if (st != CH_OK) {
        ch_tensor_release(idx);
        return st;
    }
    const int64_t *ip = (const int64_t *)idx->data;
    for (int64_t j = 0; j < idx->numel; j++) {
        if (ip[j] < 0 || ip[j] >= n) {
            /* format before releasing: ip points into idx's storage */
            ch_status st = ch_fail(CH_ERR_ARG,
                                   "%s: index %lld at position %lld is out of range for %lld rows (expected 0..%lld)",
                                   fn, (long long)ip[j], (long long)j, (long long)n, (long long)n - 1);
            ch_tensor_release(idx);
            return st;
        }
    }
    *out = idx;
    return CH_OK;
}

/* Checks sources and indices and allocates the outputs (calling thread). */
static ch_status prepare(ch_tensor *const *sources, int n, const ch_tensor *indices, const char *fn,
                         ch_tensor **idx_out, ch_tensor **outs) {
    if (!sources || !indices || !outs) return ch_fail(CH_ERR_ARG, "%s: NULL argument", fn);
    if (n < 1 || n > LOADER_MAX_SOURCES)
        return ch_fail(CH_ERR_ARG, "%s: %d sources (expected 1..%d)", fn, n, LOADER_MAX_SOURCES);
    int64_t rows = -1;
    for (int k = 0; k < n; k++) {
        CH_TRY(check_source(sources[k], k, fn));
        if (rows < 0) rows = sources[k]->dim[0];
        else if (sources[k]->dim[0] != rows)
            return ch_fail(CH_ERR_SHAPE, "%s: source %d has %lld rows but source 1 has %lld", fn, k + 1,
                           (long long)sources[k]->dim[0], (long long)rows);
    }
    ch_tensor *idx = NULL;
    CH_TRY(checked_indices(indices, rows, fn, &idx));
    for (int k = 0; k < n; k++) {
        const ch_tensor *s = sources[k];
        int64_t dim[CH_MAX_DIMS];
        dim[0] = idx->numel;
        for (int d = 1; d < s->nd; d++) dim[d] = s->dim[d];
        ch_status st = ch_tensor_new((ch_dtype)s->dt, s->nd, dim, CH_CPU, &outs[k]);
        if (st != CH_OK) {
            for (int j = 0; j < k; j++) ch_tensor_release(outs[j]);
            ch_tensor_release(idx);
            return st;
        }
    }
    *idx_out = idx;
    return CH_OK;
}

/* The copy itself: plain memcpy per row (touches no refcounts). */
static void gather(ch_tensor *const *sources, int n, const ch_tensor *idx, ch_tensor *const *outs) {
    const int64_t *ip = (const int64_t *)idx->data;
    int64_t m = idx->numel;
    for (int k = 0; k < n; k++) {
        const ch_tensor *s = sources[k];
        size_t z = ch_dtype_size((ch_dtype)s->dt);
        size_t row = (size_t)(s->dim[0] ? s->numel / s->dim[0] : 0) * z;
        if (row == 0) continue;
        const char *src = ch_base(s);
        int64_t rs = s->stride[0] * (int64_t)z;
        char *dst = outs[k]->data;
        for (int64_t j = 0; j < m; j++) memcpy(dst + j * (int64_t)row, src + ip[j] * rs, row);
    }
}

ch_status ch_gather_rows(ch_tensor *const *sources, int n, const ch_tensor *indices, ch_tensor **results) {
    ch_tensor *idx;
    CH_TRY(prepare(sources, n, indices, "gather_rows", &idx, results));
    gather(sources, n, idx, results);
    ch_tensor_release(idx);
    return CH_OK;
}

/* ---- the worker pool ------------------------------------------------------ */
enum { JOB_QUEUED = 0, JOB_RUNNING, JOB_DONE };

typedef struct job {
    int64_t ticket;
    int state;
    int n;
    ch_tensor *src[LOADER_MAX_SOURCES];
    ch_tensor *out[LOADER_MAX_SOURCES];
    ch_tensor *idx;
    struct job *next;
} job;

struct ch_loader {
    pthread_mutex_t mu;
    pthread_cond_t work;      /* a job was queued, or shutdown */
    pthread_cond_t done;      /* a job finished */
    job *head, *tail;         /* every job not yet collected, in submit order */
    int64_t next_ticket;
    int shutdown;
    int nthreads;
    pthread_t threads[];
};

static void job_release(job *j) {
    for (int k = 0; k < j->n; k++) {
        ch_tensor_release(j->src[k]);
        ch_tensor_release(j->out[k]);
    }
    ch_tensor_release(j->idx);
    free(j);
}

static job *first_queued(ch_loader *l) {
    for (job *j = l->head; j; j = j->next)
        if (j->state == JOB_QUEUED) return j;
    return NULL;
}

static void *worker_main(void *arg) {
    ch_loader *l = arg;
    pthread_mutex_lock(&l->mu);
    for (;;) {
        job *j;
        while (!l->shutdown && !(j = first_queued(l))) pthread_cond_wait(&l->work, &l->mu);
        if (l->shutdown) break;
        j->state = JOB_RUNNING;
        pthread_mutex_unlock(&l->mu);
        gather(j->src, j->n, j->idx, j->out);
        pthread_mutex_lock(&l->mu);
        j->state = JOB_DONE;
        pthread_cond_broadcast(&l->done);
    }
    pthread_mutex_unlock(&l->mu);
    return NULL;
}

ch_status ch_loader_new(int n_threads, ch_loader **result) {
    if (!result) return ch_fail(CH_ERR_ARG, "loader_new: NULL argument");
    if (n_threads < 1 || n_threads > 256)
        return ch_fail(CH_ERR_ARG, "loader_new: n_threads must be in 1..256 (got %d)", n_threads);
    ch_loader *l = calloc(1, sizeof *l + (size_t)n_threads * sizeof(pthread_t));
    if (!l) return ch_fail(CH_ERR_MEMORY, "loader_new: out of memory");
    pthread_mutex_init(&l->mu, NULL);
    pthread_cond_init(&l->work, NULL);
    pthread_cond_init(&l->done, NULL);
    l->next_ticket = 1;
    for (int i = 0; i < n_threads; i++) {
        if (pthread_create(&l->threads[i], NULL, worker_main, l) != 0) {
            l->nthreads = i;
            ch_loader_free(l);
            return ch_fail(CH_ERR_INTERNAL, "loader_new: cannot start worker thread %d of %d", i + 1, n_threads);
        }
        l->nthreads = i + 1;
    }
    *result = l;
    return CH_OK;
}

ch_status ch_loader_submit(ch_loader *l, ch_tensor *const *sources, int n, const ch_tensor *indices,
                           int64_t *ticket) {
    if (!l || !ticket) return ch_fail(CH_ERR_ARG, "loader_submit: NULL argument");
    job *j = calloc(1, sizeof *j);
    if (!j) return ch_fail(CH_ERR_MEMORY, "loader_submit: out of memory");
    ch_status st = prepare(sources, n, indices, "loader_submit", &j->idx, j->out);
    if (st != CH_OK) {
        free(j);
        return st;
    }
    j->n = n;
    for (int k = 0; k < n; k++) {
        ch_tensor_retain(sources[k]);
        j->src[k] = sources[k];
    }
    pthread_mutex_lock(&l->mu);
    j->ticket = l->next_ticket++;
    if (l->tail) l->tail->next = j;
    else l->head = j;
    l->tail = j;
    pthread_cond_signal(&l->work);
    pthread_mutex_unlock(&l->mu);
    *ticket = j->ticket;
    return CH_OK;
}

/* Unlinks j from the list (mutex held). */
static void unlink_job(ch_loader *l, job *j) {
    job **pp = &l->head, *prev = NULL;
    while (*pp && *pp != j) prev = *pp, pp = &(*pp)->next;
    if (!*pp) return;
    *pp = j->next;
    if (l->tail == j) l->tail = prev;
}

ch_status ch_loader_wait(ch_loader *l, int64_t ticket, ch_tensor **results) {
    if (!l || !results) return ch_fail(CH_ERR_ARG, "loader_wait: NULL argument");
    pthread_mutex_lock(&l->mu);
    job *j = l->head;
    while (j && j->ticket != ticket) j = j->next;
    if (!j) {
        pthread_mutex_unlock(&l->mu);
        return ch_fail(CH_ERR_ARG, "loader_wait: no pending job %lld (already collected or never submitted)",
                       (long long)ticket);
    }
    if (j->state == JOB_QUEUED) {
        /* nobody has started it: do it here rather than wait for a worker */
        j->state = JOB_RUNNING;
        pthread_mutex_unlock(&l->mu);
        gather(j->src, j->n, j->idx, j->out);
        pthread_mutex_lock(&l->mu);
        j->state = JOB_DONE;
    }
    while (j->state != JOB_DONE) pthread_cond_wait(&l->done, &l->mu);
    unlink_job(l, j);
    pthread_mutex_unlock(&l->mu);
    for (int k = 0; k < j->n; k++) {
        results[k] = j->out[k];   /* the job's reference passes to the caller */
        j->out[k] = NULL;
    }
    job_release(j);
    return CH_OK;
}

int ch_loader_pending(const ch_loader *l) {
    if (!l) return 0;
    ch_loader *m = (ch_loader *)l;
    pthread_mutex_lock(&m->mu);
    int c = 0;
    for (job *j = m->head; j; j = j->next) c++;
    pthread_mutex_unlock(&m->mu);
    return c;
}

void ch_loader_free(ch_loader *l) {
    if (!l) return;
    pthread_mutex_lock(&l->mu);
    l->shutdown = 1;
    pthread_cond_broadcast(&l->work);
    pthread_mutex_unlock(&l->mu);
    /* workers finish the copy in hand (they never block on anything else) */
    for (int i = 0; i < l->nthreads; i++) pthread_join(l->threads[i], NULL);
    job *j = l->head;
    while (j) {
        job *next = j->next;
        job_release(j);
        j = next;
    }
    pthread_cond_destroy(&l->work);
    pthread_cond_destroy(&l->done);
    pthread_mutex_destroy(&l->mu);
    free(l);
}
