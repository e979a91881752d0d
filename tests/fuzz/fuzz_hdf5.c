/* fuzz_hdf5.c -- HDF5 files as a model load reads them: the dataset list,
 * then every dataset as numbers (a model load never reads strings; the
 * string path forks a child per read, see runtime/io/isolate.c, and has its
 * own spec: spec/io/hdf5_damage_spec.lua). */
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_file(data, size, ".h5");
    if (!path) return 0;
    ch_h5_file *f = NULL;
    if (ch_h5_open(path, 'r', &f) != CH_OK) return 0;
    int n = ch_h5_count(f);
    for (int i = 0; i < n; i++) {
        ch_tensor *t = NULL;
        const char *name = ch_h5_name(f, i);
        ch_h5_exists(f, name);
        ch_status st = ch_h5_read(f, name, &t);
        fuzz_done(st, t);
    }
    ch_h5_close(f);
    return 0;
}
