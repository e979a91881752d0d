/* fuzz_input.h -- what every fuzz target shares: the input as a file.
 *
 * The readers take paths (libhdf5, libpng and zlib's gz* open files
 * themselves), so each input is written to one scratch file per process
 * (in /dev/shm when it exists: no disk traffic) and read back from there. */
#ifndef CHAINLUA_FUZZ_INPUT_H
#define CHAINLUA_FUZZ_INPUT_H

#include "chainlua.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* The scratch file's path, with `suffix` (readers that go by extension). */
static inline const char *fuzz_path(const char *suffix) {
    static char path[256];
    if (!path[0]) {
        const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
        snprintf(path, sizeof path, "%s/chainlua-fuzz-%d%s", dir, (int)getpid(), suffix);
    }
    return path;
}

/* Writes the input to the scratch file; returns its path (NULL: cannot). */
static inline const char *fuzz_file(const uint8_t *data, size_t size, const char *suffix) {
    const char *path = fuzz_path(suffix);
    FILE *f = fopen(path, "wb");
    if (!f) return NULL;
    if (size && fwrite(data, 1, size, f) != size) {
        fclose(f);
        return NULL;
    }
    fclose(f);
    return path;
}

/* A reader's result must be released; a failure must leave a message. */
static inline void fuzz_done(ch_status st, ch_tensor *t) {
    if (st == CH_OK) {
        ch_tensor_release(t);
    } else if (!ch_last_error() || !ch_last_error()[0]) {
        fprintf(stderr, "fuzz: a reader failed without a message\n");
        abort();
    }
}

#endif
