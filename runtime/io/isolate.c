/* isolate.c -- a risky library call in a forked child; see isolate.h.
 *
 * The child writes its result into a pipe and leaves with exit_group, which
 * skips atexit handlers (libhdf5 would flush the parent's files from the
 * child otherwise).  The parent reads the pipe until end of file or the
 * deadline, then reaps the child: exit 0 with data is a result, exit 1 a
 * message from `work`, anything else (a signal, a sanitizer's exit code, a
 * timeout) an error that says so. */
#include "isolate.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct ch_isolated_out {
    int fd;
};

int ch_isolated_write(ch_isolated_out *o, const void *p, size_t n) {
    const char *c = (const char *)p;
    while (n > 0) {
        ssize_t w = write(o->fd, c, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

static double timeout_seconds(void) {
    const char *s = getenv("CHAINLUA_ISOLATE_TIMEOUT");
    double t = s ? atof(s) : 0;
    return t > 0 ? t : 30;
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void child_main(int fd, int (*work)(ch_isolated_out *, void *), void *arg) {
    /* a crash is expected here now and then: no core file, and the default
     * action (a sanitizer's handler would print a report for libhdf5's bug) */
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    signal(SIGSEGV, SIG_DFL);
    signal(SIGBUS, SIG_DFL);
    signal(SIGFPE, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    ch_isolated_out o = {fd};
    int rc = work(&o, arg);
    close(fd);
    syscall(SYS_exit_group, rc == 0 ? 0 : 1);
}

ch_status ch_isolated_run(int (*work)(ch_isolated_out *o, void *arg), void *arg, const char *what, char **data,
                          size_t *len) {
    *data = NULL;
    *len = 0;
    int fds[2];
    if (pipe(fds) != 0) return ch_fail(CH_ERR_IO, "%s: cannot create a pipe for the isolated read", what);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return ch_fail(CH_ERR_IO, "%s: cannot start a process for the isolated read", what);
    }
    if (pid == 0) {
        close(fds[0]);
        child_main(fds[1], work, arg);
    }
    close(fds[1]);
    double limit = timeout_seconds(), deadline = now() + limit;
    size_t cap = 4096, n = 0;
    char *buf = (char *)malloc(cap);
    int timed_out = 0, oom = !buf;
    while (!oom) {
        double left = deadline - now();
        if (left <= 0) { timed_out = 1; break; }
        struct pollfd pfd = {fds[0], POLLIN, 0};
        int pr = poll(&pfd, 1, (int)(left * 1000) + 1);
        if (pr < 0 && errno == EINTR) continue;
        if (pr == 0) { timed_out = 1; break; }
        if (pr < 0) break;
        if (n == cap) {
            char *p = (char *)realloc(buf, cap * 2);
            if (!p) { oom = 1; break; }
            buf = p;
            cap *= 2;
        }
        ssize_t r = read(fds[0], buf + n, cap - n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;   /* end of file: the child is done */
        n += (size_t)r;
    }
    close(fds[0]);
    if (timed_out || oom) kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    ch_status st = CH_OK;
    if (oom)
        st = ch_fail(CH_ERR_MEMORY, "%s: out of memory", what);
    else if (timed_out)
        st = ch_fail(CH_ERR_FORMAT, "%s: the read did not finish within %g s (damaged file?  "
                     "CHAINLUA_ISOLATE_TIMEOUT sets the limit)", what, limit);
    else if (WIFSIGNALED(status))
        st = ch_fail(CH_ERR_FORMAT, "%s: the library crashed reading it (signal %d; damaged file?)", what,
                     WTERMSIG(status));
    else if (WIFEXITED(status) && WEXITSTATUS(status) == 1)
        st = ch_fail(CH_ERR_FORMAT, "%s: %.*s", what, (int)(n < 400 ? n : 400), buf ? buf : "");
    else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        st = ch_fail(CH_ERR_FORMAT, "%s: the reading process failed (exit status %d; damaged file?)", what,
                     WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    if (st != CH_OK) {
        free(buf);
        return st;
    }
    *data = buf;
    *len = n;
    return CH_OK;
}
