/*
 * chunks.c -- fresh memory for the CPU block cache (storage.c), carved out
 * of large chunks backed by transparent huge pages.
 *
 * Why: the cache keeps the blocks it hands out, so what a fresh block
 * really costs is its first touch, one page fault per 4 KiB.  On a virtual
 * machine every fault exits to the hypervisor: about 12 us per 4 KiB on the
 * dev VM (3 ms per MiB; the MLP's first 130 training steps took ~10,000 of
 * them, bench/README.md "Session 14").  A huge page is one fault per 2 MiB,
 * but glibc gives one only to a block it maps alone and that someone
 * advises: a 400 KB activation never gets one, and a 3.1 MB gradient gets
 * one for its first 2 MiB only.
 *
 * So the cache's misses of blocks up to CH_CARVE_MAX bytes are carved one
 * after the other out of CHUNK_BYTES chunks, mapped 2 MiB aligned and
 * advised MADV_HUGEPAGE.  A chunk is address space first: only the huge
 * pages that carved blocks touch become resident, and the end of a chunk
 * that no block reached costs nothing.  Carved blocks go back onto the
 * cache's free lists like any other (storage.c knows them by their size
 * class: every block of a carved class comes from a chunk), and a chunk is
 * unmapped once all its blocks sit in the cache and the cache is emptied
 * (ch_cache_free_all) or has grown past its limit (ch_chunks_release_idle).
 *
 * Bypassed under AddressSanitizer and with CHAINLUA_NO_BLOCK_CACHE set:
 * then every block is its own allocation, whose bounds memory checkers
 * see.  Where huge pages are off, the advice does nothing and the chunks
 * fault per 4 KiB as separate blocks did.
 *
 * Locking: every function here runs under storage.c's cache lock.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define HUGE_PAGE ((size_t)2 << 20)
#define CHUNK_BYTES ((size_t)64 << 20)
#define CARVE_ALIGN 64

typedef struct chunk {
    char *base;
    size_t used;     /* bytes carved so far, from base */
    size_t blocks;   /* blocks carved */
    size_t cached;   /* blocks found in the cache by the current count */
} chunk;

static chunk *chunks;        /* sorted by base */
static size_t nchunks, cap;
static chunk *current;       /* the one being carved (an entry of chunks) */

bool ch_chunk_carves(size_t rounded) { return rounded <= CH_CARVE_MAX && ch_block_cache_enabled(); }

/* Maps a new chunk, 2 MiB aligned (the excess of an oversized mapping is
 * unmapped again), and files it in `chunks`.  NULL when out of memory. */
static chunk *new_chunk(void) {
    if (nchunks == cap) {
        size_t n = cap ? 2 * cap : 16;
        chunk *grown = realloc(chunks, n * sizeof *grown);
        if (!grown) return NULL;
        chunks = grown;
        cap = n;
    }
    size_t span = CHUNK_BYTES + HUGE_PAGE;
    char *raw = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) return NULL;
    char *base = (char *)(((uintptr_t)raw + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
    if (base > raw) munmap(raw, (size_t)(base - raw));
    char *end = base + CHUNK_BYTES;
    if (raw + span > end) munmap(end, (size_t)(raw + span - end));
#ifdef MADV_HUGEPAGE
    madvise(base, CHUNK_BYTES, MADV_HUGEPAGE);   /* advice: works the same without */
#endif
    size_t at = 0;
    while (at < nchunks && chunks[at].base < base) at++;
    memmove(chunks + at + 1, chunks + at, (nchunks - at) * sizeof *chunks);
    chunks[at] = (chunk){ .base = base };
    nchunks++;
    return chunks + at;
}

void *ch_chunk_carve(size_t rounded) {
    size_t need = (rounded + CARVE_ALIGN - 1) / CARVE_ALIGN * CARVE_ALIGN;
    if (!current || current->used + need > CHUNK_BYTES) {
        /* (the rest of the old chunk stays unused: never touched, so never
         * resident) */
        chunk *c = new_chunk();
        if (!c) return NULL;
        current = c;
    }
    void *p = current->base + current->used;
    current->used += need;
    current->blocks++;
    return p;
}

/* The chunk holding p, or NULL. */
static chunk *chunk_of(const void *p) {
    size_t lo = 0, hi = nchunks;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if ((const char *)p < chunks[mid].base) hi = mid;
        else if ((const char *)p >= chunks[mid].base + CHUNK_BYTES) lo = mid + 1;
        else return chunks + mid;
    }
    return NULL;
}

void ch_chunks_count_begin(void) {
    for (size_t i = 0; i < nchunks; i++) chunks[i].cached = 0;
}

void ch_chunks_count_cached(const void *block) {
    chunk *c = chunk_of(block);
    if (c) c->cached++;
}

bool ch_chunk_idle(const void *block) {
    chunk *c = chunk_of(block);
    return c && c->cached == c->blocks;
}

size_t ch_chunks_unmap_idle(void) {
    size_t kept = 0, freed = 0;
    char *cur = current ? current->base : NULL;
    current = NULL;
    for (size_t i = 0; i < nchunks; i++) {
        chunk c = chunks[i];
        if (c.cached == c.blocks) {
            munmap(c.base, CHUNK_BYTES);
            freed++;
            continue;
        }
        chunks[kept] = c;
        if (c.base == cur) current = chunks + kept;
        kept++;
    }
    nchunks = kept;
    return freed;
}

