/* isolate.h -- running a risky library call in a forked child (internal).
 *
 * Some library code cannot be made safe from the outside: libhdf5 1.10
 * follows a damaged global heap wherever it points (H5HG_read crashes or
 * loops forever).  ch_isolated_run calls `work` in a child process that
 * shares a copy of everything the parent has open; what `work` writes to its
 * output comes back as one buffer.  A crash, a hang past the time limit or an
 * exit without a result becomes an error, never a dead or frozen parent. */
#ifndef CHAINLUA_IO_ISOLATE_H
#define CHAINLUA_IO_ISOLATE_H

#include "../core/internal.h"

#include <stddef.h>

typedef struct ch_isolated_out ch_isolated_out;
/* In the child: append n bytes to the result (returns 0, or -1 when the
 * parent went away). */
int ch_isolated_write(ch_isolated_out *o, const void *p, size_t n);

/* `work` runs in the child and returns 0 on success; on failure it writes a
 * message with ch_isolated_write and returns nonzero.  It must free what it
 * allocates (the child leaves without atexit handlers, so no library state
 * is flushed, but leak checkers still look).  On CH_OK *data (malloc'ed,
 * free it) holds the bytes written; otherwise ch_last_error() says why,
 * prefixed with `what` (e.g. "hdf5_read: 'f.h5': dataset 'x'").
 * The limit is CHAINLUA_ISOLATE_TIMEOUT seconds (default 30). */
ch_status ch_isolated_run(int (*work)(ch_isolated_out *o, void *arg), void *arg, const char *what, char **data,
                          size_t *len);

#endif
