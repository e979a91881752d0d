/* fuzz_npz.c -- .npz files (zip, stored or deflated): the central
 * directory, then every member as load_npz reads it. */
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_file(data, size, ".npz");
    if (!path) return 0;
    ch_npz_reader *r = NULL;
    if (ch_npz_reader_open(path, &r) != CH_OK) return 0;
    int n = ch_npz_reader_count(r);
    for (int i = 0; i < n; i++) {
        ch_tensor *t = NULL;
        char kind = 0;
        ch_status st = ch_npz_reader_load_ex(r, ch_npz_reader_name(r, i), &t, &kind);
        fuzz_done(st, t);
    }
    ch_npz_reader_close(r);
    return 0;
}
