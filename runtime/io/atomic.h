/* atomic.h -- write-to-temporary-then-rename for the file writers (internal). */
#ifndef CHAINLUA_IO_ATOMIC_H
#define CHAINLUA_IO_ATOMIC_H

#include "../core/internal.h"

#include <stdio.h>

typedef struct ch_atomic_file {
    char *path;      /* the target */
    char *tmp;       /* PATH.tmp-XXXXXX in the same folder (same file system) */
    FILE *fp;        /* NULL when the caller opens tmp itself (HDF5) */
} ch_atomic_file;

/* Creates the temporary beside `path`; with want_fp, opens it as fp ("w+b").
 * Errors are CH_ERR_IO naming fn and path. */
ch_status ch_atomic_open(ch_atomic_file *af, const char *path, int want_fp, const char *fn);
/* Flushes, closes and renames the temporary onto the target. */
ch_status ch_atomic_commit(ch_atomic_file *af, const char *fn);
/* Closes and deletes the temporary. */
void ch_atomic_abort(ch_atomic_file *af);

#endif
