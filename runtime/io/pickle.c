/* pickle.c -- the data subset of Python's pickle format (protocols 2 to 5),
 * for chainer.datasets.PickleDataset.
 *
 * A pickle is a program for a small stack machine.  This reader runs only
 * the opcodes that build data -- None, bools, ints, floats, str, bytes,
 * tuples, lists, dicts, the memo -- plus the few calls that NumPy's pickles
 * make: numpy.dtype(...), numpy.core.multiarray._reconstruct(...) followed
 * by ndarray.__setstate__ (BUILD), protocol 5's numpy.core.numeric.
 * _frombuffer(...) with an in-band buffer, numpy.core.multiarray.scalar(...)
 * and protocol 2's _codecs.encode(text, 'latin1') spelling of bytes.  Any
 * other global, call or BUILD is refused with the file, the offset and the
 * opcode: nothing here executes code from the file.
 *
 * Values are nodes in one array, referred to by index: the memo and the
 * stack hold indices, so a list memoised before its items are appended
 * (how Python writes lists) is the same node when fetched again.  Every
 * opcode makes at most one node, reads lengths that are checked against the
 * bytes left, and memo indices are bounded by the input size: memory is
 * linear in the input and nothing recurses. */
#include "npy.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* internal kinds after the public ones */
enum {
    PK_GLOBAL = 100,  /* one of the allowed callables (node.sub) */
    PK_DTYPE,         /* a numpy.dtype: node.s holds its descr ('<f4') */
    PK_NDARRAY_EMPTY, /* _reconstruct's result, waiting for its BUILD */
};

enum {
    G_RECONSTRUCT = 1, /* numpy.core.multiarray._reconstruct */
    G_NDARRAY,         /* numpy.ndarray (an argument of _reconstruct) */
    G_DTYPE,           /* numpy.dtype */
    G_SCALAR,          /* numpy.core.multiarray.scalar */
    G_FROMBUFFER,      /* numpy.core.numeric._frombuffer (protocol 5) */
    G_ENCODE,          /* _codecs.encode: protocol 2's bytes */
    G_BYTES,           /* builtins.bytes, bytearray: b'' at protocol 2, bytearray at 2 to 4 */
};

static const struct {
    const char *module, *name;
    int id;
} allowed_globals[] = {
    { "numpy.core.multiarray", "_reconstruct", G_RECONSTRUCT },
    { "numpy._core.multiarray", "_reconstruct", G_RECONSTRUCT },
    { "numpy", "ndarray", G_NDARRAY },
    { "numpy", "dtype", G_DTYPE },
    { "numpy.core.multiarray", "scalar", G_SCALAR },
    { "numpy._core.multiarray", "scalar", G_SCALAR },
    { "numpy.core.numeric", "_frombuffer", G_FROMBUFFER },
    { "numpy._core.numeric", "_frombuffer", G_FROMBUFFER },
    { "_codecs", "encode", G_ENCODE },
    { "__builtin__", "bytes", G_BYTES },
    { "builtins", "bytes", G_BYTES },
    { "__builtin__", "bytearray", G_BYTES },
    { "builtins", "bytearray", G_BYTES },
};

typedef struct node {
    uint8_t kind;
    uint8_t sub;   /* PK_GLOBAL: which one */
    union {
        int64_t i;
        double f;
        struct { char *p; size_t n; } s;                /* STR, BYTES, DTYPE */
        struct { int32_t *items; int64_t n, cap; } c;   /* TUPLE, LIST, DICT (key, value, ...) */
        ch_tensor *t;
    } u;
} node;

struct ch_pickle {
    node *nodes;
    int32_t count, cap;
    int32_t root;
};

/* The running machine: input, stack, marks, memo. */
typedef struct vm {
    ch_pickle *p;
    const unsigned char *b;
    size_t n, pos, op_at, base;   /* op_at: offset of the current opcode */
    unsigned char op;
    const char *what;
    int32_t *stack;
    size_t sp, scap;
    size_t *marks;
    size_t mp, mcap;
    int32_t *memo;                /* -1: empty */
    size_t memo_cap, memo_count;  /* memo_count: indices in use (MEMOIZE's next) */
    int32_t none, yes, no;        /* the shared immutable constants */
} vm;

static const char *opcode_name(unsigned char op) {
    switch (op) {
    case '(': return "MARK";
    case '.': return "STOP";
    case '0': return "POP";
    case '1': return "POP_MARK";
    case '2': return "DUP";
    case 'F': return "FLOAT";
    case 'I': return "INT";
    case 'J': return "BININT";
    case 'K': return "BININT1";
    case 'L': return "LONG";
    case 'M': return "BININT2";
    case 'N': return "NONE";
    case 'P': return "PERSID";
    case 'Q': return "BINPERSID";
    case 'R': return "REDUCE";
    case 'S': return "STRING";
    case 'T': return "BINSTRING";
    case 'U': return "SHORT_BINSTRING";
    case 'V': return "UNICODE";
    case 'X': return "BINUNICODE";
    case 'a': return "APPEND";
    case 'b': return "BUILD";
    case 'c': return "GLOBAL";
    case 'd': return "DICT";
    case '}': return "EMPTY_DICT";
    case 'e': return "APPENDS";
    case 'g': return "GET";
    case 'h': return "BINGET";
    case 'i': return "INST";
    case 'j': return "LONG_BINGET";
    case 'l': return "LIST";
    case ']': return "EMPTY_LIST";
    case 'o': return "OBJ";
    case 'p': return "PUT";
    case 'q': return "BINPUT";
    case 'r': return "LONG_BINPUT";
    case 's': return "SETITEM";
    case 't': return "TUPLE";
    case ')': return "EMPTY_TUPLE";
    case 'u': return "SETITEMS";
    case 'G': return "BINFLOAT";
    case 0x80: return "PROTO";
    case 0x81: return "NEWOBJ";
    case 0x82: return "EXT1";
    case 0x83: return "EXT2";
    case 0x84: return "EXT4";
    case 0x85: return "TUPLE1";
    case 0x86: return "TUPLE2";
    case 0x87: return "TUPLE3";
    case 0x88: return "NEWTRUE";
    case 0x89: return "NEWFALSE";
    case 0x8a: return "LONG1";
    case 0x8b: return "LONG4";
    case 'B': return "BINBYTES";
    case 'C': return "SHORT_BINBYTES";
    case 0x8c: return "SHORT_BINUNICODE";
    case 0x8d: return "BINUNICODE8";
    case 0x8e: return "BINBYTES8";
    case 0x8f: return "EMPTY_SET";
    case 0x90: return "ADDITEMS";
    case 0x91: return "FROZENSET";
    case 0x92: return "NEWOBJ_EX";
    case 0x93: return "STACK_GLOBAL";
    case 0x94: return "MEMOIZE";
    case 0x95: return "FRAME";
    case 0x96: return "BYTEARRAY8";
    case 0x97: return "NEXT_BUFFER";
    case 0x98: return "READONLY_BUFFER";
    default: return "unknown opcode";
    }
}

/* Every error names the input, the opcode's offset and the opcode. */
static ch_status bad(vm *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static ch_status bad(vm *m, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return ch_fail(CH_ERR_FORMAT, "%s: pickle at offset %zu, opcode 0x%02x (%s): %s", m->what, m->base + m->op_at,
                   m->op, opcode_name(m->op), msg);
}

static ch_status out_of_memory(vm *m) {
    return ch_fail(CH_ERR_MEMORY, "%s: out of memory reading the pickle at offset %zu", m->what, m->base + m->op_at);
}

/* ---- nodes ------------------------------------------------------------- */

static void node_clear(node *x) {
    switch (x->kind) {
    case CH_PICKLE_STR:
    case CH_PICKLE_BYTES:
    case PK_DTYPE:
        free(x->u.s.p);
        break;
    case CH_PICKLE_TUPLE:
    case CH_PICKLE_LIST:
    case CH_PICKLE_DICT:
        free(x->u.c.items);
        break;
    case CH_PICKLE_TENSOR:
        ch_tensor_release(x->u.t);
        break;
    default:
        break;
    }
    memset(x, 0, sizeof *x);
}

void ch_pickle_free(ch_pickle *p) {
    if (!p)
        return;
    for (int32_t i = 0; i < p->count; i++)
        node_clear(&p->nodes[i]);
    free(p->nodes);
    free(p);
}

/* A new node of `kind` (zeroed); its index goes to *out. */
static ch_status new_node(vm *m, int kind, int32_t *out) {
    ch_pickle *p = m->p;
    if (p->count == p->cap) {
        if (p->cap >= INT32_MAX / 2)
            return bad(m, "more than 2^30 values in one pickle");
        int32_t cap = p->cap ? p->cap * 2 : 64;
        node *nodes = realloc(p->nodes, (size_t)cap * sizeof *nodes);
        if (!nodes)
            return out_of_memory(m);
        p->nodes = nodes;
        p->cap = cap;
    }
    node *x = &p->nodes[p->count];
    memset(x, 0, sizeof *x);
    x->kind = (uint8_t)kind;
    *out = p->count++;
    return CH_OK;
}

static node *at(vm *m, int32_t i) { return &m->p->nodes[i]; }

/* A string node holding a copy of bytes[0..n). */
static ch_status new_string(vm *m, int kind, const void *bytes, size_t n, int32_t *out) {
    char *s = malloc(n + 1);
    if (!s)
        return out_of_memory(m);
    if (n)
        memcpy(s, bytes, n);
    s[n] = 0;
    ch_status st = new_node(m, kind, out);
    if (st != CH_OK) {
        free(s);
        return st;
    }
    at(m, *out)->u.s.p = s;
    at(m, *out)->u.s.n = n;
    return CH_OK;
}

static ch_status append_item(vm *m, int32_t container, int32_t item) {
    node *c = at(m, container);
    if (c->u.c.n == c->u.c.cap) {
        int64_t cap = c->u.c.cap ? c->u.c.cap * 2 : 4;
        int32_t *items = realloc(c->u.c.items, (size_t)cap * sizeof *items);
        if (!items)
            return out_of_memory(m);
        c->u.c.items = items;
        c->u.c.cap = cap;
    }
    c->u.c.items[c->u.c.n++] = item;
    return CH_OK;
}

/* ---- the stack, marks and memo ----------------------------------------- */

static ch_status push(vm *m, int32_t v) {
    if (m->sp == m->scap) {
        size_t cap = m->scap ? m->scap * 2 : 64;
        int32_t *s = realloc(m->stack, cap * sizeof *s);
        if (!s)
            return out_of_memory(m);
        m->stack = s;
        m->scap = cap;
    }
    m->stack[m->sp++] = v;
    return CH_OK;
}

/* The stack's items above the last mark (none when no mark is set). */
static size_t mark_base(vm *m) { return m->mp ? m->marks[m->mp - 1] : 0; }

static ch_status pop(vm *m, int32_t *v) {
    if (m->sp == mark_base(m))
        return bad(m, m->mp ? "nothing on the stack above the mark" : "the stack is empty");
    *v = m->stack[--m->sp];
    return CH_OK;
}

static ch_status top(vm *m, int32_t *v) {
    if (m->sp == mark_base(m))
        return bad(m, m->mp ? "nothing on the stack above the mark" : "the stack is empty");
    *v = m->stack[m->sp - 1];
    return CH_OK;
}

static ch_status push_mark(vm *m) {
    if (m->mp == m->mcap) {
        size_t cap = m->mcap ? m->mcap * 2 : 16;
        size_t *s = realloc(m->marks, cap * sizeof *s);
        if (!s)
            return out_of_memory(m);
        m->marks = s;
        m->mcap = cap;
    }
    m->marks[m->mp++] = m->sp;
    return CH_OK;
}

/* Removes the last mark; the items above it start at *from. */
static ch_status pop_mark(vm *m, size_t *from) {
    if (!m->mp)
        return bad(m, "no MARK to pop");
    *from = m->marks[--m->mp];
    return CH_OK;
}

static ch_status memo_put(vm *m, uint64_t index) {
    /* Python numbers its memo 0, 1, 2, ...: an index past the input's size
     * is damage, and refusing it keeps the table linear in the input. */
    if (index > m->n)
        return bad(m, "memo index %llu is larger than the pickle", (unsigned long long)index);
    int32_t v = -1;
    CH_TRY(top(m, &v));
    if (index >= m->memo_cap) {
        size_t cap = m->memo_cap ? m->memo_cap : 64;
        while (cap <= index) cap *= 2;
        int32_t *memo = realloc(m->memo, cap * sizeof *memo);
        if (!memo)
            return out_of_memory(m);
        for (size_t i = m->memo_cap; i < cap; i++) memo[i] = -1;
        m->memo = memo;
        m->memo_cap = cap;
    }
    if (m->memo[index] < 0)
        m->memo_count++;
    m->memo[index] = v;
    return CH_OK;
}

static ch_status memo_get(vm *m, uint64_t index) {
    if (index >= m->memo_cap || m->memo[index] < 0)
        return bad(m, "memo index %llu was never stored", (unsigned long long)index);
    return push(m, m->memo[index]);
}

/* ---- reading the input ------------------------------------------------- */

static ch_status need(vm *m, uint64_t k) {
    if (k > m->n - m->pos)
        return bad(m, "the pickle is truncated (%llu bytes wanted, %zu left)", (unsigned long long)k, m->n - m->pos);
    return CH_OK;
}

static uint64_t le(const unsigned char *s, int k) {
    uint64_t v = 0;
    for (int i = k - 1; i >= 0; i--) v = (v << 8) | s[i];
    return v;
}

/* Reads a k-byte little-endian unsigned argument. */
static ch_status arg_uint(vm *m, int k, uint64_t *v) {
    CH_TRY(need(m, (uint64_t)k));
    *v = le(m->b + m->pos, k);
    m->pos += (size_t)k;
    return CH_OK;
}

/* A length-prefixed str/bytes argument (k-byte length). */
static ch_status push_counted(vm *m, int k, int kind) {
    uint64_t len;
    CH_TRY(arg_uint(m, k, &len));
    CH_TRY(need(m, len));
    int32_t v = -1;
    CH_TRY(new_string(m, kind, m->b + m->pos, (size_t)len, &v));
    m->pos += (size_t)len;
    return push(m, v);
}

/* A newline-terminated text argument (GLOBAL's module and name). */
static ch_status arg_line(vm *m, char *out, size_t cap) {
    const unsigned char *s = m->b + m->pos;
    const unsigned char *nl = memchr(s, '\n', m->n - m->pos);
    if (!nl)
        return bad(m, "the pickle is truncated (no newline after GLOBAL's argument)");
    size_t len = (size_t)(nl - s);
    if (len >= cap)
        return bad(m, "GLOBAL's argument is longer than %zu bytes", cap - 1);
    memcpy(out, s, len);
    out[len] = 0;
    m->pos += len + 1;
    return CH_OK;
}

static ch_status push_int(vm *m, int64_t i) {
    int32_t v = -1;
    CH_TRY(new_node(m, CH_PICKLE_INT, &v));
    at(m, v)->u.i = i;
    return push(m, v);
}

static ch_status push_global(vm *m, const char *module, const char *name) {
    for (size_t k = 0; k < sizeof allowed_globals / sizeof allowed_globals[0]; k++)
        if (!strcmp(module, allowed_globals[k].module) && !strcmp(name, allowed_globals[k].name)) {
            int32_t v = -1;
            CH_TRY(new_node(m, PK_GLOBAL, &v));
            at(m, v)->sub = (uint8_t)allowed_globals[k].id;
            return push(m, v);
        }
    return bad(m, "refusing the global '%.100s.%.100s': a pickle dataset holds data (numbers, strings, bytes, "
               "tuples, lists, dicts, NumPy arrays), and loading any other object would run code from the file",
               module, name);
}

/* ---- NumPy ------------------------------------------------------------- */

static int is_kind(vm *m, int32_t v, int kind) { return at(m, v)->kind == kind; }

/* The tuple's items (NULL with an error when v is not a tuple of n items). */
static const int32_t *tuple_of(vm *m, int32_t v, int64_t n) {
    node *x = at(m, v);
    if (x->kind != CH_PICKLE_TUPLE || x->u.c.n != n)
        return NULL;
    return x->u.c.items;
}

/* A shape tuple of non-negative ints into info's nd/dim/numel. */
static ch_status read_shape(vm *m, int32_t v, ch_npy_info *info) {
    node *x = at(m, v);
    if (x->kind != CH_PICKLE_TUPLE)
        return bad(m, "a NumPy array's shape must be a tuple of ints");
    if (x->u.c.n > CH_MAX_DIMS)
        return bad(m, "a NumPy array of %lld dimensions (chainlua tensors have at most %d)", (long long)x->u.c.n,
                   CH_MAX_DIMS);
    info->nd = (int)x->u.c.n;
    info->numel = 1;
    for (int i = 0; i < info->nd; i++) {
        node *d = at(m, x->u.c.items[i]);
        if (d->kind != CH_PICKLE_INT || d->u.i < 0)
            return bad(m, "a NumPy array's shape must be a tuple of non-negative ints");
        info->dim[i] = d->u.i;
        if (d->u.i && info->numel > INT64_MAX / d->u.i)
            return bad(m, "a NumPy array's shape overflows 64 bits");
        info->numel *= d->u.i;
    }
    return CH_OK;
}

/* info's element type from a dtype node. */
static ch_status read_dtype(vm *m, int32_t v, ch_npy_info *info) {
    if (!is_kind(m, v, PK_DTYPE))
        return bad(m, "expected a numpy.dtype");
    char what[160];
    snprintf(what, sizeof what, "%s: pickle at offset %zu", m->what, m->base + m->op_at);
    CH_TRY(ch_npy_parse_descr(at(m, v)->u.s.p, what, info));
    if (info->str_kind)
        return bad(m, "NumPy string arrays (dtype '%s') are not supported", at(m, v)->u.s.p);
    return CH_OK;
}

/* The tensor that `data` (n bytes, numel elements of info) holds. */
static ch_status decode_array(vm *m, ch_npy_info *info, int32_t data, ch_tensor **t) {
    node *d = at(m, data);
    if (d->kind != CH_PICKLE_BYTES)
        return bad(m, "a NumPy array's data must be bytes (object arrays are not supported)");
    if (info->numel > INT64_MAX / (info->src_size ? info->src_size : 1) ||
        d->u.s.n != (uint64_t)info->numel * (uint64_t)info->src_size)
        return bad(m, "a NumPy array of %lld elements of %d bytes holds %zu bytes of data", (long long)info->numel,
                   info->src_size, d->u.s.n);
    char what[160];
    snprintf(what, sizeof what, "%s: pickle at offset %zu", m->what, m->base + m->op_at);
    return ch_npy_decode(info, d->u.s.p, what, t);
}

/* Turns node v into the tensor t (in place: the memo refers to it). */
static void become_tensor(vm *m, int32_t v, ch_tensor *t) {
    node_clear(at(m, v));
    at(m, v)->kind = CH_PICKLE_TENSOR;
    at(m, v)->u.t = t;
}

/* numpy.dtype(descr, align, copy): the byte order comes with BUILD. */
static ch_status reduce_dtype(vm *m, int32_t args) {
    const int32_t *a = tuple_of(m, args, 3);
    if (!a || !is_kind(m, a[0], CH_PICKLE_STR))
        return bad(m, "numpy.dtype's arguments must be (str, bool, bool)");
    node *s = at(m, a[0]);
    if (s->u.s.n == 0 || s->u.s.n > 30 || memchr(s->u.s.p, 0, s->u.s.n))
        return bad(m, "numpy.dtype's type string is empty or too long");
    char descr[40];
    snprintf(descr, sizeof descr, "=%s", s->u.s.p);
    int32_t v = -1;
    CH_TRY(new_string(m, PK_DTYPE, descr, strlen(descr), &v));
    return push(m, v);
}

/* dtype.__setstate__((version, byteorder, subarray, names, fields, ...)). */
static ch_status build_dtype(vm *m, int32_t dt, int32_t state) {
    node *s = at(m, state);
    if (s->kind != CH_PICKLE_TUPLE || s->u.c.n < 5 || !is_kind(m, s->u.c.items[1], CH_PICKLE_STR))
        return bad(m, "a numpy.dtype's state must be a tuple (version, byteorder, subarray, names, fields, ...)");
    node *order = at(m, s->u.c.items[1]);
    if (order->u.s.n != 1 || !strchr("<>|=", order->u.s.p[0]))
        return bad(m, "a numpy.dtype's byte order must be one of '<', '>', '|', '='");
    for (int k = 2; k < 5; k++)
        if (!is_kind(m, s->u.c.items[k], CH_PICKLE_NONE))
            return bad(m, "structured and sub-array NumPy dtypes are not supported");
    at(m, dt)->u.s.p[0] = order->u.s.p[0];
    return CH_OK;
}

/* ndarray.__setstate__(([version,] shape, dtype, is_fortran, data)). */
static ch_status build_ndarray(vm *m, int32_t arr, int32_t state) {
    node *s = at(m, state);
    if (s->kind != CH_PICKLE_TUPLE || (s->u.c.n != 4 && s->u.c.n != 5))
        return bad(m, "a NumPy array's state must be a tuple (version, shape, dtype, is_fortran, data)");
    const int32_t *a = s->u.c.items + (s->u.c.n == 5);
    ch_npy_info info;
    memset(&info, 0, sizeof info);
    CH_TRY(read_shape(m, a[0], &info));
    CH_TRY(read_dtype(m, a[1], &info));
    if (!is_kind(m, a[2], CH_PICKLE_BOOL))
        return bad(m, "a NumPy array's is_fortran flag must be a bool");
    info.fortran = at(m, a[2])->u.i != 0;
    ch_tensor *t = NULL;
    CH_TRY(decode_array(m, &info, a[3], &t));
    become_tensor(m, arr, t);
    return CH_OK;
}

/* _frombuffer(buffer, dtype, shape, order): protocol 5's in-band array. */
static ch_status reduce_frombuffer(vm *m, int32_t args) {
    const int32_t *a = tuple_of(m, args, 4);
    if (!a)
        return bad(m, "numpy's _frombuffer takes (buffer, dtype, shape, order)");
    ch_npy_info info;
    memset(&info, 0, sizeof info);
    CH_TRY(read_dtype(m, a[1], &info));
    CH_TRY(read_shape(m, a[2], &info));
    node *order = at(m, a[3]);
    if (order->kind != CH_PICKLE_STR || order->u.s.n != 1 || (order->u.s.p[0] != 'C' && order->u.s.p[0] != 'F'))
        return bad(m, "numpy's _frombuffer order must be 'C' or 'F'");
    info.fortran = order->u.s.p[0] == 'F';
    ch_tensor *t = NULL;
    CH_TRY(decode_array(m, &info, a[0], &t));
    int32_t v = -1;
    ch_status st = new_node(m, CH_PICKLE_TENSOR, &v);
    if (st != CH_OK) {
        ch_tensor_release(t);
        return st;
    }
    at(m, v)->u.t = t;
    return push(m, v);
}

/* numpy.core.multiarray.scalar(dtype, bytes): a number (or bool). */
static ch_status reduce_scalar(vm *m, int32_t args) {
    const int32_t *a = tuple_of(m, args, 2);
    if (!a)
        return bad(m, "numpy's scalar takes (dtype, bytes)");
    ch_npy_info info;
    memset(&info, 0, sizeof info);
    CH_TRY(read_dtype(m, a[0], &info));
    info.nd = 0;
    info.numel = 1;
    ch_tensor *t = NULL;
    CH_TRY(decode_array(m, &info, a[1], &t));
    const char *e = ch_base(t);
    int kind = CH_PICKLE_INT;
    int64_t i = 0;
    double f = 0;
    switch (t->dt) {
    case CH_BOOL: kind = CH_PICKLE_BOOL; i = *(const uint8_t *)e != 0; break;
    case CH_INT8: i = *(const int8_t *)e; break;
    case CH_UINT8: i = *(const uint8_t *)e; break;
    case CH_INT16: i = *(const int16_t *)e; break;
    case CH_INT32: i = *(const int32_t *)e; break;
    case CH_INT64: i = *(const int64_t *)e; break;
    default: kind = CH_PICKLE_FLOAT; (void)ch_get_flat(t, 0, &f); break;
    }
    ch_tensor_release(t);
    int32_t v = -1;
    CH_TRY(new_node(m, kind, &v));
    if (kind == CH_PICKLE_FLOAT)
        at(m, v)->u.f = f;
    else
        at(m, v)->u.i = i;
    return push(m, v);
}

/* _codecs.encode(text, 'latin1'): bytes as protocol 2 spells them. */
static ch_status reduce_encode(vm *m, int32_t args) {
    const int32_t *a = tuple_of(m, args, 2);
    if (!a || !is_kind(m, a[0], CH_PICKLE_STR) || !is_kind(m, a[1], CH_PICKLE_STR) ||
        (strcmp(at(m, a[1])->u.s.p, "latin1") && strcmp(at(m, a[1])->u.s.p, "latin-1")))
        return bad(m, "_codecs.encode is only accepted as encode(str, 'latin1'), how protocol 2 writes bytes");
    const unsigned char *s = (const unsigned char *)at(m, a[0])->u.s.p;
    size_t n = at(m, a[0])->u.s.n, k = 0;
    unsigned char *out = malloc(n + 1);
    if (!out)
        return out_of_memory(m);
    for (size_t i = 0; i < n; k++) { /* UTF-8 of code points below 256 */
        if (s[i] < 0x80) {
            out[k] = s[i++];
        } else if ((s[i] == 0xC2 || s[i] == 0xC3) && i + 1 < n && (s[i + 1] & 0xC0) == 0x80) {
            out[k] = (unsigned char)(((s[i] & 0x03) << 6) | (s[i + 1] & 0x3F));
            i += 2;
        } else {
            free(out);
            return bad(m, "_codecs.encode's text is not latin-1 (byte %zu)", i);
        }
    }
    int32_t v = -1;
    ch_status st = new_string(m, CH_PICKLE_BYTES, out, k, &v);
    free(out);
    CH_TRY(st);
    return push(m, v);
}

static ch_status op_reduce(vm *m) {
    int32_t args = -1, fn = -1;
    CH_TRY(pop(m, &args));
    CH_TRY(pop(m, &fn));
    if (!is_kind(m, fn, PK_GLOBAL))
        return bad(m, "only NumPy's array, dtype and scalar constructors may be called");
    if (!is_kind(m, args, CH_PICKLE_TUPLE))
        return bad(m, "the arguments of a call must be a tuple");
    switch (at(m, fn)->sub) {
    case G_RECONSTRUCT: {
        const int32_t *a = tuple_of(m, args, 3);
        if (!a || !is_kind(m, a[0], PK_GLOBAL) || at(m, a[0])->sub != G_NDARRAY)
            return bad(m, "numpy's _reconstruct is only accepted for numpy.ndarray");
        int32_t v = -1;
        CH_TRY(new_node(m, PK_NDARRAY_EMPTY, &v));
        return push(m, v);
    }
    case G_DTYPE: return reduce_dtype(m, args);
    case G_SCALAR: return reduce_scalar(m, args);
    case G_FROMBUFFER: return reduce_frombuffer(m, args);
    case G_ENCODE: return reduce_encode(m, args);
    case G_BYTES: { /* bytes() / bytearray() or bytearray(b'...'): bytes (Lua has one string type) */
        node *a = at(m, args);
        if (a->u.c.n > 1 || (a->u.c.n == 1 && !is_kind(m, a->u.c.items[0], CH_PICKLE_BYTES)))
            return bad(m, "bytes and bytearray are only accepted with no argument or one bytes argument");
        int32_t v = -1;
        if (a->u.c.n == 0)
            CH_TRY(new_string(m, CH_PICKLE_BYTES, "", 0, &v));
        else
            CH_TRY(new_string(m, CH_PICKLE_BYTES, at(m, a->u.c.items[0])->u.s.p, at(m, a->u.c.items[0])->u.s.n, &v));
        return push(m, v);
    }
    default: return bad(m, "numpy.ndarray cannot be called directly");
    }
}

static ch_status op_build(vm *m) {
    int32_t state = -1, obj = -1;
    CH_TRY(pop(m, &state));
    CH_TRY(top(m, &obj));
    if (is_kind(m, obj, PK_NDARRAY_EMPTY))
        return build_ndarray(m, obj, state);
    if (is_kind(m, obj, PK_DTYPE))
        return build_dtype(m, obj, state);
    return bad(m, "BUILD is only accepted for NumPy arrays and dtypes");
}

/* ---- containers -------------------------------------------------------- */

/* A tuple (or list) of the stack's items from `from` up, replacing them. */
static ch_status collect(vm *m, int kind, size_t from) {
    int32_t v = -1;
    CH_TRY(new_node(m, kind, &v));
    for (size_t i = from; i < m->sp; i++)
        CH_TRY(append_item(m, v, m->stack[i]));
    m->sp = from;
    return push(m, v);
}

static ch_status tuple_n(vm *m, size_t k) {
    if (m->sp - mark_base(m) < k)
        return bad(m, "fewer than %zu items on the stack", k);
    return collect(m, CH_PICKLE_TUPLE, m->sp - k);
}

/* APPEND(S)/SETITEM(S): the stack's items from `from` go into the list or
 * dict just below them. */
static ch_status add_items(vm *m, size_t from, int dict) {
    if (from == 0 || from <= mark_base(m))
        return bad(m, "no %s below the items", dict ? "dict" : "list");
    int32_t target = m->stack[from - 1];
    if (!is_kind(m, target, dict ? CH_PICKLE_DICT : CH_PICKLE_LIST))
        return bad(m, "the target is not a %s", dict ? "dict" : "list");
    if (dict && (m->sp - from) % 2)
        return bad(m, "a key without a value");
    for (size_t i = from; i < m->sp; i++)
        CH_TRY(append_item(m, target, m->stack[i]));
    m->sp = from;
    return CH_OK;
}

/* ---- the machine ------------------------------------------------------- */

/* A value the caller may see: the internal kinds (a bare dtype, an array
 * never built, a global) are refused once the pickle is complete. */
static ch_status check_public(vm *m, int32_t root) {
    ch_pickle *p = m->p;
    uint8_t *seen = calloc((size_t)p->count, 1);
    int32_t *todo = malloc((size_t)p->count * sizeof *todo);
    if (!seen || !todo) {
        free(seen);
        free(todo);
        return out_of_memory(m);
    }
    size_t n = 0;
    todo[n++] = root;
    seen[root] = 1;
    ch_status st = CH_OK;
    while (n && st == CH_OK) {
        node *x = &p->nodes[todo[--n]];
        if (x->kind == PK_GLOBAL || x->kind == PK_DTYPE || x->kind == PK_NDARRAY_EMPTY) {
            st = bad(m, "the pickle holds %s, not data", x->kind == PK_GLOBAL ? "a bare function or class"
                     : x->kind == PK_DTYPE ? "a bare numpy.dtype" : "a NumPy array without its state");
        } else if (x->kind == CH_PICKLE_TUPLE || x->kind == CH_PICKLE_LIST || x->kind == CH_PICKLE_DICT) {
            for (int64_t i = 0; i < x->u.c.n; i++)
                if (!seen[x->u.c.items[i]]) {
                    seen[x->u.c.items[i]] = 1;
                    todo[n++] = x->u.c.items[i];
                }
        }
    }
    free(seen);
    free(todo);
    return st;
}

static ch_status step(vm *m, int *done) {
    m->op_at = m->pos;
    m->op = m->b[m->pos++];
    uint64_t u;
    int32_t v = -1, w = -1;
    size_t from = 0;
    switch (m->op) {
    case 0x80: /* PROTO */
        CH_TRY(arg_uint(m, 1, &u));
        if (u < 2 || u > 5)
            return bad(m, "pickle protocol %llu (this reader takes protocols 2 to 5)", (unsigned long long)u);
        return CH_OK;
    case 0x95: /* FRAME: a hint about buffering; the bytes follow inline */
        CH_TRY(arg_uint(m, 8, &u));
        return need(m, u);
    case '.': /* STOP */
        CH_TRY(pop(m, &v));
        if (m->sp || m->mp)
            return bad(m, "values or marks are left on the stack");
        CH_TRY(check_public(m, v));
        m->p->root = v;
        *done = 1;
        return CH_OK;
    case '(': return push_mark(m);
    case '0': return pop(m, &v);
    case '1': CH_TRY(pop_mark(m, &from)); m->sp = from; return CH_OK;
    case '2': CH_TRY(top(m, &v)); return push(m, v);
    case 'N': return push(m, m->none);
    case 0x88: return push(m, m->yes);
    case 0x89: return push(m, m->no);
    case 'K': CH_TRY(arg_uint(m, 1, &u)); return push_int(m, (int64_t)u);
    case 'M': CH_TRY(arg_uint(m, 2, &u)); return push_int(m, (int64_t)u);
    case 'J': CH_TRY(arg_uint(m, 4, &u)); return push_int(m, (int32_t)(uint32_t)u);
    case 0x8a: case 0x8b: { /* LONG1, LONG4: little-endian two's complement */
        CH_TRY(arg_uint(m, m->op == 0x8a ? 1 : 4, &u));
        CH_TRY(need(m, u));
        if (u > 8)
            return bad(m, "an integer of %llu bytes does not fit in 64 bits", (unsigned long long)u);
        uint64_t x = le(m->b + m->pos, (int)u);
        if (u > 0 && u < 8 && (m->b[m->pos + u - 1] & 0x80)) /* sign-extend */
            x |= ~(uint64_t)0 << (8 * u);
        m->pos += (size_t)u;
        return push_int(m, (int64_t)x);
    }
    case 'G': { /* BINFLOAT: big-endian IEEE double */
        CH_TRY(need(m, 8));
        uint64_t x = 0;
        for (int k = 0; k < 8; k++) x = (x << 8) | m->b[m->pos + k];
        m->pos += 8;
        CH_TRY(new_node(m, CH_PICKLE_FLOAT, &v));
        memcpy(&at(m, v)->u.f, &x, 8);
        return push(m, v);
    }
    case 0x8c: return push_counted(m, 1, CH_PICKLE_STR);
    case 'X': return push_counted(m, 4, CH_PICKLE_STR);
    case 0x8d: return push_counted(m, 8, CH_PICKLE_STR);
    case 'C': return push_counted(m, 1, CH_PICKLE_BYTES);
    case 'B': return push_counted(m, 4, CH_PICKLE_BYTES);
    case 0x8e: case 0x96: return push_counted(m, 8, CH_PICKLE_BYTES); /* BINBYTES8, BYTEARRAY8 */
    case ')': return collect(m, CH_PICKLE_TUPLE, m->sp);
    case 0x85: return tuple_n(m, 1);
    case 0x86: return tuple_n(m, 2);
    case 0x87: return tuple_n(m, 3);
    case 't': CH_TRY(pop_mark(m, &from)); return collect(m, CH_PICKLE_TUPLE, from);
    case ']': return collect(m, CH_PICKLE_LIST, m->sp);
    case 'l': CH_TRY(pop_mark(m, &from)); return collect(m, CH_PICKLE_LIST, from);
    case '}': return collect(m, CH_PICKLE_DICT, m->sp);
    case 'd':
        CH_TRY(pop_mark(m, &from));
        if ((m->sp - from) % 2)
            return bad(m, "a key without a value");
        return collect(m, CH_PICKLE_DICT, from);
    case 'a':
        if (m->sp == mark_base(m))
            return bad(m, "APPEND needs a value");
        return add_items(m, m->sp - 1, 0);
    case 'e': CH_TRY(pop_mark(m, &from)); return add_items(m, from, 0);
    case 's':
        if (m->sp - mark_base(m) < 2)
            return bad(m, "SETITEM needs a key and a value");
        return add_items(m, m->sp - 2, 1);
    case 'u': CH_TRY(pop_mark(m, &from)); return add_items(m, from, 1);
    case 'q': CH_TRY(arg_uint(m, 1, &u)); return memo_put(m, u);
    case 'r': CH_TRY(arg_uint(m, 4, &u)); return memo_put(m, u);
    case 0x94: return memo_put(m, m->memo_count); /* MEMOIZE: index len(memo), as Python */
    case 'h': CH_TRY(arg_uint(m, 1, &u)); return memo_get(m, u);
    case 'j': CH_TRY(arg_uint(m, 4, &u)); return memo_get(m, u);
    case 'c': {
        char module[256], name[256];
        CH_TRY(arg_line(m, module, sizeof module));
        CH_TRY(arg_line(m, name, sizeof name));
        return push_global(m, module, name);
    }
    case 0x93: /* STACK_GLOBAL */
        CH_TRY(pop(m, &w));
        CH_TRY(pop(m, &v));
        if (!is_kind(m, v, CH_PICKLE_STR) || !is_kind(m, w, CH_PICKLE_STR) ||
            strlen(at(m, v)->u.s.p) != at(m, v)->u.s.n || strlen(at(m, w)->u.s.p) != at(m, w)->u.s.n)
            return bad(m, "STACK_GLOBAL needs two strings (module and name)");
        return push_global(m, at(m, v)->u.s.p, at(m, w)->u.s.p);
    case 'R': return op_reduce(m);
    case 'b': return op_build(m);
    case 0x8f: case 0x90: case 0x91:
        return bad(m, "sets are not supported (a pickle dataset's examples hold tuples, lists and dicts)");
    case 0x97: case 0x98:
        return bad(m, "out-of-band buffers are not supported (write with buffer_callback=None)");
    default:
        return bad(m, "this opcode is not part of the data subset this reader accepts (protocol 2 to 5 data: "
                   "numbers, strings, bytes, tuples, lists, dicts, NumPy arrays)");
    }
}

ch_status ch_pickle_parse(const void *bytes, size_t n, size_t base, const char *what, ch_pickle **out, size_t *used) {
    *out = NULL;
    if (used)
        *used = 0;
    if (!what)
        what = "pickle";
    vm m;
    memset(&m, 0, sizeof m);
    m.b = bytes;
    m.n = n;
    m.base = base;
    m.what = what;
    m.p = calloc(1, sizeof *m.p);
    if (!m.p)
        return ch_fail(CH_ERR_MEMORY, "%s: out of memory", what);
    ch_status st = new_node(&m, CH_PICKLE_NONE, &m.none);
    if (st == CH_OK && (st = new_node(&m, CH_PICKLE_BOOL, &m.yes)) == CH_OK)
        at(&m, m.yes)->u.i = 1;
    if (st == CH_OK)
        st = new_node(&m, CH_PICKLE_BOOL, &m.no);
    if (st == CH_OK && n == 0)
        st = ch_fail(CH_ERR_FORMAT, "%s: pickle at offset %zu: no data (an empty pickle)", what, base);
    int done = 0;
    while (st == CH_OK && !done) {
        if (m.pos >= n) {
            st = ch_fail(CH_ERR_FORMAT, "%s: pickle at offset %zu is truncated: it ends at offset %zu without a STOP "
                         "opcode", what, base, base + n);
            break;
        }
        st = step(&m, &done);
    }
    free(m.stack);
    free(m.marks);
    free(m.memo);
    if (st != CH_OK) {
        ch_pickle_free(m.p);
        return st;
    }
    *out = m.p;
    if (used)
        *used = m.pos;
    return CH_OK;
}

/* ---- reading a parsed value -------------------------------------------- */

static const node *get(const ch_pickle *p, int32_t v) {
    return p && v >= 0 && v < p->count ? &p->nodes[v] : NULL;
}

int32_t ch_pickle_root(const ch_pickle *p) { return p ? p->root : -1; }
int32_t ch_pickle_size(const ch_pickle *p) { return p ? p->count : 0; }

int ch_pickle_kind(const ch_pickle *p, int32_t v) {
    const node *x = get(p, v);
    return x && x->kind < PK_GLOBAL ? x->kind : -1;
}

int64_t ch_pickle_int(const ch_pickle *p, int32_t v) {
    const node *x = get(p, v);
    return x && (x->kind == CH_PICKLE_INT || x->kind == CH_PICKLE_BOOL) ? x->u.i : 0;
}

double ch_pickle_float(const ch_pickle *p, int32_t v) {
    const node *x = get(p, v);
    return x && x->kind == CH_PICKLE_FLOAT ? x->u.f : 0;
}

const char *ch_pickle_string(const ch_pickle *p, int32_t v, size_t *len) {
    const node *x = get(p, v);
    if (!x || (x->kind != CH_PICKLE_STR && x->kind != CH_PICKLE_BYTES)) {
        if (len)
            *len = 0;
        return NULL;
    }
    if (len)
        *len = x->u.s.n;
    return x->u.s.p;
}

int64_t ch_pickle_length(const ch_pickle *p, int32_t v) {
    const node *x = get(p, v);
    if (!x || (x->kind != CH_PICKLE_TUPLE && x->kind != CH_PICKLE_LIST && x->kind != CH_PICKLE_DICT))
        return 0;
    return x->kind == CH_PICKLE_DICT ? x->u.c.n / 2 : x->u.c.n;
}

int32_t ch_pickle_item(const ch_pickle *p, int32_t v, int64_t i) {
    const node *x = get(p, v);
    if (!x || (x->kind != CH_PICKLE_TUPLE && x->kind != CH_PICKLE_LIST && x->kind != CH_PICKLE_DICT) || i < 0 ||
        i >= x->u.c.n)
        return -1;
    return x->u.c.items[i];
}

ch_tensor *ch_pickle_tensor(const ch_pickle *p, int32_t v) {
    const node *x = get(p, v);
    return x && x->kind == CH_PICKLE_TENSOR ? x->u.t : NULL;
}

/* ---- a file of consecutive pickles ------------------------------------- */

struct ch_pickle_file {
    char *path;
    const unsigned char *map;   /* the whole file, read only (NULL when empty) */
    size_t size;
    size_t *start;              /* count + 1 offsets: example i is [start[i], start[i+1]) */
    int64_t count;
};

void ch_pickle_file_close(ch_pickle_file *f) {
    if (!f)
        return;
    if (f->map)
        munmap((void *)f->map, f->size);
    free(f->start);
    free(f->path);
    free(f);
}

ch_status ch_pickle_file_open(const char *path, ch_pickle_file **out) {
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return ch_fail(CH_ERR_IO, "'%s': cannot open: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return ch_fail(CH_ERR_IO, "'%s': not a regular file", path);
    }
    ch_pickle_file *f = calloc(1, sizeof *f);
    if (f)
        f->path = strdup(path);
    if (!f || !f->path) {
        close(fd);
        ch_pickle_file_close(f);
        return ch_fail(CH_ERR_MEMORY, "'%s': out of memory", path);
    }
    f->size = (size_t)sb.st_size;
    if (f->size) {
        void *map = mmap(NULL, f->size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map == MAP_FAILED) {
            close(fd);
            ch_pickle_file_close(f);
            return ch_fail(CH_ERR_IO, "'%s': cannot map the file: %s", path, strerror(errno));
        }
        f->map = map;
    }
    close(fd);
    /* every example is read once, as Python's PickleDataset does: a damaged
     * file fails here, naming the offset */
    char what[1100];
    snprintf(what, sizeof what, "'%s'", path);
    size_t pos = 0, cap = 0;
    for (;;) {
        if (f->count + 1 >= (int64_t)cap) {
            cap = cap ? cap * 2 : 64;
            size_t *start = realloc(f->start, cap * sizeof *start);
            if (!start) {
                ch_pickle_file_close(f);
                return ch_fail(CH_ERR_MEMORY, "'%s': out of memory", path);
            }
            f->start = start;
        }
        f->start[f->count] = pos;
        if (pos == f->size)
            break;
        ch_pickle *p = NULL;
        size_t used = 0;
        ch_status st = ch_pickle_parse(f->map + pos, f->size - pos, pos, what, &p, &used);
        if (st != CH_OK) {
            ch_pickle_file_close(f);
            return st;
        }
        ch_pickle_free(p);
        pos += used;
        f->count++;
    }
    *out = f;
    return CH_OK;
}

int64_t ch_pickle_file_count(const ch_pickle_file *f) { return f ? f->count : 0; }

ch_status ch_pickle_file_get(const ch_pickle_file *f, int64_t i, ch_pickle **out) {
    *out = NULL;
    if (!f || i < 0 || i >= f->count)
        return ch_fail(CH_ERR_ARG, "pickle file: example %lld is out of range (0..%lld)", (long long)i,
                       f ? (long long)f->count - 1 : -1LL);
    char what[1100];
    snprintf(what, sizeof what, "'%s'", f->path);
    /* The same extent as at open (the rest of the file; the parse stops at
     * the example's STOP): the checks that bound a pickle by its input's
     * size (memo indices) then decide as they did there.  With only the
     * example's own bytes, an example that open accepted could fail here
     * (found by fuzz_pickle). */
    return ch_pickle_parse(f->map + f->start[i], f->size - f->start[i], f->start[i], what, out, NULL);
}
