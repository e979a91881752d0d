/*
 * lua_heap.c -- the memory of the Lua states that the chainlua executable
 * and embedding hosts create (chainlua_host_newstate in host.c).
 *
 * Why not LuaJIT's own allocator: a define-by-run program makes and drops
 * several small Lua objects per graph node (the node, its Variable and
 * their hash parts), and LuaJIT's general-purpose allocator (a dlmalloc
 * derivative that coalesces neighbours on every free) spends ~100
 * instructions per allocation and ~150 per free on them: 16 % of the
 * autograd's per-node time (bench/README.md, session 13).  LuaJIT always
 * says how large a block is when it frees or resizes it, so blocks need no
 * header, and a state is only ever used by one thread at a time, so no
 * lock: small blocks come from per-size free lists (last freed, first
 * reused, which keeps the next object in the cache) refilled from large
 * chunks; larger ones from malloc.  The chunks are kept until the state
 * is closed: a Lua heap's peak is a few MB here (tensors live in C memory),
 * and what lua_close frees last is the state itself, at which point the
 * heap frees its chunks and itself.
 *
 * CHAINLUA_LUA_HEAP=luajit selects LuaJIT's allocator instead (A/B
 * measurements, or to rule this one out when chasing a bug); it is the
 * default under AddressSanitizer (below).
 */
#include "host_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#define GRAIN 16                     /* sizes rounded up to 16 bytes: malloc's alignment */
#define SMALL_MAX 512                /* larger blocks come from malloc */
#define NCLASSES (SMALL_MAX / GRAIN) /* class c holds blocks of c * GRAIN bytes (1..NCLASSES) */
#define CHUNK_BYTES (256 * 1024)

typedef struct free_block {
    struct free_block *next;
} free_block;

typedef struct chunk {
    struct chunk *next;
    char pad[GRAIN - sizeof(struct chunk *)]; /* blocks start GRAIN-aligned after it */
} chunk;

typedef struct lua_heap {
    free_block *free[NCLASSES + 1];
    char *bump, *bump_end; /* the rest of the newest chunk */
    chunk *chunks;
    int *destroyed; /* while lua_newstate runs: set when a failure freed the heap */
    size_t live; /* bytes the state holds: 0 again only after lua_close */
} lua_heap;

#ifndef CHAINLUA_LUAJIT_GC64
#define CHAINLUA_LUAJIT_GC64 1
#endif

/* Under AddressSanitizer (make asan, make fuzz) LuaJIT's allocator stays the
 * default: LuaJIT refers to strings and other objects through tagged values,
 * which LeakSanitizer does not read as pointers, so a block of ours that is
 * malloc'd and still in use by a state alive at exit (a fuzz target's)
 * would be reported as leaked; LuaJIT's mmap'd arenas are not tracked. */
#if defined(__SANITIZE_ADDRESS__)
#define HEAP_DEFAULT_IS_LUAJIT 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HEAP_DEFAULT_IS_LUAJIT 1
#endif
#endif
#ifndef HEAP_DEFAULT_IS_LUAJIT
#define HEAP_DEFAULT_IS_LUAJIT 0
#endif

static size_t class_of(size_t n) { return (n + GRAIN - 1) / GRAIN; }

static void *small_alloc(lua_heap *h, size_t c) {
    free_block *b = h->free[c];
    if (b) {
        h->free[c] = b->next;
        return b;
    }
    size_t bytes = c * GRAIN;
    if ((size_t)(h->bump_end - h->bump) < bytes) {
        chunk *k = malloc(CHUNK_BYTES);
        if (!k)
            return NULL;
        k->next = h->chunks;
        h->chunks = k;
        h->bump = (char *)(k + 1);
        h->bump_end = (char *)k + CHUNK_BYTES;
    }
    void *p = h->bump;
    h->bump += bytes;
    return p;
}

static void small_free(lua_heap *h, void *p, size_t c) {
    free_block *b = p;
    b->next = h->free[c];
    h->free[c] = b;
}

static void heap_destroy(lua_heap *h) {
    if (h->destroyed)
        *h->destroyed = 1;
    chunk *k = h->chunks;
    while (k) {
        chunk *next = k->next;
        free(k);
        k = next;
    }
    free(h);
}

/* lua_Alloc: nsize 0 frees ptr (osize bytes), otherwise ptr (NULL for a
 * new block) is resized from osize to nsize bytes. */
static void *heap_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
    lua_heap *h = ud;
    if (!ptr)
        osize = 0;
    size_t oc = osize <= SMALL_MAX ? class_of(osize) : 0; /* 0: large (or none) */
    if (nsize == 0) {
        if (ptr) {
            if (oc)
                small_free(h, ptr, oc);
            else
                free(ptr);
            h->live -= osize;
            if (h->live == 0) /* the state itself was the last block: lua_close */
                heap_destroy(h);
        }
        return NULL;
    }
    size_t nc = nsize <= SMALL_MAX ? class_of(nsize) : 0;
    void *q;
    if (ptr && oc == nc && nc) {
        q = ptr; /* same size class */
    } else if (ptr && !oc && !nc) {
        q = realloc(ptr, nsize);
        if (!q)
            return NULL;
    } else {
        q = nc ? small_alloc(h, nc) : malloc(nsize);
        if (!q)
            return NULL; /* LuaJIT raises its memory error; ptr stays valid */
        if (ptr) {
            memcpy(q, ptr, osize < nsize ? osize : nsize);
            if (oc)
                small_free(h, ptr, oc);
            else
                free(ptr);
        }
    }
    h->live += nsize;
    h->live -= osize;
    return q;
}

lua_State *chainlua_host_lua_state(const char **why) {
    const char *dummy;
    if (!why)
        why = &dummy;
    *why = "out of memory";
    const char *choice = getenv("CHAINLUA_LUA_HEAP");
    if (!choice || !*choice)
        choice = HEAP_DEFAULT_IS_LUAJIT ? "luajit" : "chainlua";
    if (strcmp(choice, "luajit") == 0)
        return luaL_newstate();
    if (strcmp(choice, "chainlua") != 0) {
        *why = "the environment variable CHAINLUA_LUA_HEAP must be 'chainlua' or 'luajit'";
        return NULL;
    }
    /* A LuaJIT built without 64-bit GC references refuses any allocator
     * but its own (CMake's probe sets CHAINLUA_LUAJIT_GC64 to 0 there). */
    if (!CHAINLUA_LUAJIT_GC64)
        return luaL_newstate();
    lua_heap *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    int destroyed = 0;
    h->destroyed = &destroyed;
    lua_State *L = lua_newstate(heap_alloc, h);
    if (L)
        h->destroyed = NULL;
    else if (!destroyed) /* (a failure after allocating frees all, and the heap with it) */
        heap_destroy(h);
    return L;
}
