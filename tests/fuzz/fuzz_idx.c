/* fuzz_idx.c -- MNIST's IDX files, plain or gzip-compressed. */
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_file(data, size, "-idx");
    if (!path) return 0;
    ch_tensor *t = NULL;
    ch_status st = ch_idx_load(path, &t);
    fuzz_done(st, t);
    return 0;
}
