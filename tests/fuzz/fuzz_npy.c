/* fuzz_npy.c -- .npy files: the path reader and the in-memory parser, both
 * with string arrays allowed ('<U', '|S'). */
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    ch_tensor *t = NULL;
    ch_status st = ch_npy_from_memory(data, size, "fuzz.npy", &t);
    fuzz_done(st, t);
    const char *path = fuzz_file(data, size, ".npy");
    if (!path) return 0;
    char kind = 0;
    t = NULL;
    st = ch_npy_load_ex(path, &t, &kind);
    fuzz_done(st, t);
    return 0;
}
