/* atomic.c -- file writers write a temporary beside the target and rename it
 * into place when complete: a crash or an error mid-write never leaves a
 * truncated checkpoint under the real name. */
#include "atomic.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char *dup_str(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = (char *)malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

ch_status ch_atomic_open(ch_atomic_file *af, const char *path, int want_fp, const char *fn) {
    memset(af, 0, sizeof *af);
    if (!path || !*path)
        return ch_fail(CH_ERR_ARG, "%s: the file path is empty", fn);
    size_t n = strlen(path);
    af->path = dup_str(path);
    af->tmp = (char *)malloc(n + 16);
    if (!af->path || !af->tmp) {
        free(af->path);
        free(af->tmp);
        af->path = af->tmp = NULL;
        return ch_fail(CH_ERR_MEMORY, "%s: out of memory", fn);
    }
    snprintf(af->tmp, n + 16, "%s.tmp-XXXXXX", path);
    int fd = mkstemp(af->tmp);
    if (fd < 0) {
        int e = errno;
        free(af->path);
        free(af->tmp);
        af->path = af->tmp = NULL;
        return ch_fail(CH_ERR_IO, "%s: cannot create '%s' (%s)", fn, path, strerror(e));
    }
    /* mkstemp makes the file 0600; give it the mode a plain fopen would */
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    if (want_fp) {
        af->fp = fdopen(fd, "w+b");
        if (!af->fp) {
            int e = errno;
            close(fd);
            ch_atomic_abort(af);
            return ch_fail(CH_ERR_IO, "%s: cannot open '%s' for writing (%s)", fn, path, strerror(e));
        }
    } else {
        close(fd);
    }
    return CH_OK;
}

ch_status ch_atomic_commit(ch_atomic_file *af, const char *fn) {
    ch_status st = CH_OK;
    if (af->fp) {
        int bad = fflush(af->fp) != 0 || ferror(af->fp);
        bad |= fclose(af->fp) != 0;
        af->fp = NULL;
        if (bad)
            st = ch_fail(CH_ERR_IO, "%s: writing '%s' failed (%s)", fn, af->path, strerror(errno));
    }
    if (st == CH_OK && rename(af->tmp, af->path) != 0)
        st = ch_fail(CH_ERR_IO, "%s: cannot rename the temporary file onto '%s' (%s)", fn, af->path, strerror(errno));
    if (st != CH_OK)
        remove(af->tmp);
    free(af->path);
    free(af->tmp);
    af->path = af->tmp = NULL;
    return st;
}

void ch_atomic_abort(ch_atomic_file *af) {
    if (af->fp)
        fclose(af->fp);
    af->fp = NULL;
    if (af->tmp)
        remove(af->tmp);
    free(af->path);
    free(af->tmp);
    af->path = af->tmp = NULL;
}

ch_status ch_write_file_atomic(const char *path, const void *data, size_t nbytes) {
    const char *fn = "write_file";
    if (nbytes > 0 && !data)
        return ch_fail(CH_ERR_ARG, "%s: data is NULL", fn);
    ch_atomic_file af;
    CH_TRY(ch_atomic_open(&af, path, 1, fn));
    if (nbytes > 0 && fwrite(data, 1, nbytes, af.fp) != nbytes) {
        int e = errno;
        ch_atomic_abort(&af);
        return ch_fail(CH_ERR_IO, "%s: writing '%s' failed (%s)", fn, path, strerror(e));
    }
    return ch_atomic_commit(&af, fn);
}
