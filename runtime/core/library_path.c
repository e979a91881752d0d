/* library_path.c -- where libchainlua itself was loaded from: tells a host
 * or a test which copy of the library a process uses, including when it
 * came with the executable rather than from a path Lua knows. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>

#include "internal.h"

const char *ch_library_path(void) {
    Dl_info info;
    if (dladdr((void *)ch_library_path, &info) && info.dli_fname && info.dli_fname[0])
        return info.dli_fname;
    return NULL;
}
