/* fuzz_pickle.c -- Python pickles (the data subset PickleDataset reads):
 * consecutive pickles parsed from memory as a dataset file holds them, every
 * value visited (shared and cyclic references included), and the same bytes
 * opened as a dataset file and read example by example. */
#include "fuzz_input.h"

/* Visits every value reachable from the root once. */
static void walk(const ch_pickle *p) {
    int32_t n = ch_pickle_size(p);
    if (n <= 0) return;
    unsigned char *seen = calloc((size_t)n, 1);
    int32_t *todo = malloc((size_t)n * sizeof *todo);
    if (!seen || !todo) abort();
    size_t k = 0;
    int32_t root = ch_pickle_root(p);
    if (root < 0 || root >= n) abort();
    todo[k++] = root;
    seen[root] = 1;
    while (k) {
        int32_t v = todo[--k];
        size_t len = 0;
        switch (ch_pickle_kind(p, v)) {
        case CH_PICKLE_NONE: break;
        case CH_PICKLE_BOOL: case CH_PICKLE_INT: (void)ch_pickle_int(p, v); break;
        case CH_PICKLE_FLOAT: (void)ch_pickle_float(p, v); break;
        case CH_PICKLE_STR: case CH_PICKLE_BYTES: {
            const char *s = ch_pickle_string(p, v, &len);
            if (!s || s[len] != 0) abort();
            break;
        }
        case CH_PICKLE_TENSOR: {
            ch_tensor *t = ch_pickle_tensor(p, v);
            if (!t) abort();
            double x;
            if (t->numel > 0) (void)ch_get_flat(t, t->numel - 1, &x);
            break;
        }
        case CH_PICKLE_TUPLE: case CH_PICKLE_LIST: case CH_PICKLE_DICT: {
            int64_t m = ch_pickle_length(p, v) * (ch_pickle_kind(p, v) == CH_PICKLE_DICT ? 2 : 1);
            for (int64_t i = 0; i < m; i++) {
                int32_t c = ch_pickle_item(p, v, i);
                if (c < 0 || c >= n) abort();
                if (!seen[c]) { seen[c] = 1; todo[k++] = c; }
            }
            break;
        }
        default: abort();   /* an internal value escaped the parser */
        }
    }
    free(seen);
    free(todo);
}

static void fail_check(ch_status st) {
    if (st != CH_OK && (!ch_last_error() || !ch_last_error()[0])) {
        fprintf(stderr, "fuzz: the pickle reader failed without a message\n");
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    size_t pos = 0;
    while (pos < size) {
        ch_pickle *p = NULL;
        size_t used = 0;
        ch_status st = ch_pickle_parse(data + pos, size - pos, pos, "fuzz.pkl", &p, &used);
        fail_check(st);
        if (st != CH_OK) break;
        if (used == 0 || used > size - pos) abort();
        walk(p);
        ch_pickle_free(p);
        pos += used;
    }
    const char *path = fuzz_file(data, size, ".pkl");
    if (!path) return 0;
    ch_pickle_file *f = NULL;
    ch_status st = ch_pickle_file_open(path, &f);
    fail_check(st);
    if (st != CH_OK) return 0;
    for (int64_t i = 0; i < ch_pickle_file_count(f); i++) {
        ch_pickle *p = NULL;
        st = ch_pickle_file_get(f, i, &p);
        if (st != CH_OK) abort();   /* every example parsed at open */
        walk(p);
        ch_pickle_free(p);
    }
    ch_pickle_file_close(f);
    return 0;
}
