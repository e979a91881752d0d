/* zip.h -- a small zip container reader/writer for .npz (internal).
 *
 * Writer: stored or deflate members, CRC32, zip64 records when sizes or
 * offsets need them.  Reader: central directory, stored and deflate members,
 * data descriptors, zip64 extra fields; every length and offset is checked
 * against the file size and any inconsistency is CH_ERR_FORMAT. */
#ifndef CHAINLUA_IO_ZIP_H
#define CHAINLUA_IO_ZIP_H

#include "../core/internal.h"

#include <stdio.h>

typedef struct ch_zip_writer ch_zip_writer;
/* Writes into fp (seekable, owned by the caller); `what` prefixes errors. */
ch_status ch_zip_writer_new(FILE *fp, const char *what, ch_zip_writer **w);
/* One member whose bytes are the concatenation of nparts buffers. */
ch_status ch_zip_writer_add(ch_zip_writer *w, const char *name, int nparts, const void *const *parts,
                            const size_t *sizes, int compress);
/* Whether a member of that name was added already. */
int ch_zip_writer_has(const ch_zip_writer *w, const char *name);
/* Writes the central directory (and zip64 end records when needed). */
ch_status ch_zip_writer_finish(ch_zip_writer *w);
void ch_zip_writer_free(ch_zip_writer *w);

typedef struct ch_zip_entry {
    char *name;
    uint64_t csize, usize, local_offset;
    uint32_t crc;
    uint16_t method, flags;
} ch_zip_entry;

/* ch_zip (typedef'd in chainlua.h, where its public readers are declared). */
struct ch_zip {
    FILE *fp;
    char *path;
    uint64_t size;       /* file size */
    int count;
    ch_zip_entry *entries;
};

/* `fn` names the calling function in errors ("load_npz"). */
ch_status ch_zip_open(const char *path, const char *fn, ch_zip **z);
/* Index of the member called name, or -1. */
int ch_zip_find(const ch_zip *z, const char *name);
/* Reads, inflates and CRC-checks member i into a malloc'ed buffer. */
ch_status ch_zip_read(ch_zip *z, int i, const char *fn, void **data, size_t *n);
void ch_zip_close(ch_zip *z);

#endif
