/* fuzz_text.c -- text datasets (TextDataset: line offsets, lines, several
 * files of equal line counts) through the embedded Lua state, as a script
 * uses them.  The readers are Lua, which LuaJIT keeps memory-safe; this
 * target checks that what reaches the runtime from them stays so, and that
 * every failure is a Lua error.  (libFuzzer sees the C side's coverage only:
 * its guidance here is weak, its mutations still count.) */
#include "chainlua_host.h"
#include "fuzz_input.h"

static const char *script =
    "local path = ...\n"
    "local D = require('chainer').datasets\n"
    "local d = D.TextDataset(path)\n"
    "for i = 1, #d do local _ = d[i] end\n"
    "local two = D.TextDataset({path, path}, {filter_func = function(a, b) return #a % 2 == 0 end})\n"
    "for i = 1, #two do local _ = two[i] end\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static chainlua_state *S;
    if (!S) {   /* a state that cannot load the datasets would test nothing */
        if (!(S = chainlua_open()) || chainlua_dostring(S, "assert(require('chainer').datasets.TextDataset)", "=init")) {
            fprintf(stderr, "fuzz_text: %s\n", chainlua_error(S));
            abort();
        }
    }
    const char *path = fuzz_file(data, size, ".txt");
    if (!path) return 0;
    char code[1024];
    snprintf(code, sizeof code, "return (function(...) %s end)('%s')", script, path);
    chainlua_dostring(S, code, "=fuzz_text");   /* a Lua error is a clean result */
    return 0;
}
