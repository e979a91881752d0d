/* fuzz_image.c -- PNG and JPEG images (ImageDataset's reader). */
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_file(data, size, ".img");
    if (!path) return 0;
    ch_tensor *t = NULL;
    ch_status st = ch_image_load(path, &t);
    fuzz_done(st, t);
    return 0;
}
