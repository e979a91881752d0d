/* error.c -- the thread-local last-error message behind ch_last_error(). */
#include "internal.h"

#include <stdarg.h>

static _Thread_local char last_error[2048];

const char *ch_last_error(void) { return last_error; }

void ch_clear_error(void) { last_error[0] = '\0'; }

ch_status ch_fail(ch_status st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return st;
}

const char *ch_shape_str(char *buf, size_t n, int nd, const int64_t *dim) {
    size_t used = 0;
    used += (size_t)snprintf(buf, n, "(");
    for (int i = 0; i < nd && used < n; i++)
        used += (size_t)snprintf(buf + used, n - used, i ? ", %lld" : "%lld", (long long)dim[i]);
    if (used < n)
        snprintf(buf + used, n - used, nd == 1 ? ",)" : ")");
    return buf;
}

ch_status ch_bad_tensor(const ch_tensor *t, const char *fn, const char *arg) {
    if (!t)
        return ch_fail(CH_ERR_ARG, "%s: argument '%s' is NULL (expected a tensor)", fn, arg);
    if (!t->data && t->numel > 0)
        return ch_fail(CH_ERR_ARG, "%s: argument '%s' was freed (tensor:free() was called on it)", fn, arg);
    return CH_OK;
}

ch_status ch_check_cpu(const ch_tensor *t, const char *fn, const char *arg) {
    if (t->dev != CH_CPU)
        return ch_fail(CH_ERR_DEVICE, "%s: argument '%s' is on cuda:%d, but this operation runs only on the CPU "
                       "(move it with :to_cpu())", fn, arg, t->dev);
    return CH_OK;
}
