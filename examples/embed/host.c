/*
 * examples/embed/host.c -- a C program that embeds chainlua: it makes a
 * tensor in C, lets a Lua chunk compute with it, takes the result back and
 * prints it.  Build: `make build` (target embed_host); run:
 * build/embed_host.  See docs/embedding.md for the ownership rules.
 */
#include <stdio.h>

#include "chainlua_host.h"

static void print_tensor(const char *name, const ch_tensor *t) {
    printf("%s: shape (", name);
    for (int i = 0; i < t->nd; i++)
        printf(i ? ", %lld" : "%lld", (long long)t->dim[i]);
    printf(") dtype %s values", ch_dtype_name((ch_dtype)t->dt));
    for (int64_t k = 0; k < t->numel; k++) {
        double v;
        if (ch_get_flat(t, k, &v) != CH_OK) {
            printf(" <%s>", ch_last_error());
            break;
        }
        printf(" %g", v);
    }
    printf("\n");
}

int main(void) {
    chainlua_state *S = chainlua_open();
    if (!S) {
        fprintf(stderr, "embed_host: %s\n", chainlua_error(NULL));
        return 1;
    }

    /* x = [[0, 1, 2], [3, 4, 5]] made in C; we own this reference. */
    const float data[6] = {0, 1, 2, 3, 4, 5};
    const int64_t shape[2] = {2, 3};
    ch_tensor *x = NULL;
    if (ch_from_buffer(CH_FLOAT32, 2, shape, data, &x) != CH_OK) {
        fprintf(stderr, "embed_host: %s\n", ch_last_error());
        chainlua_close(S);
        return 1;
    }

    /* Lua takes its own reference; ours stays valid. */
    if (chainlua_set_global_tensor(S, "x", x) != 0 ||
        chainlua_dostring(S,
                          "y = (x * 2 + 1):transpose()\n"
                          "print('Lua computed y = (x * 2 + 1):transpose():')\n"
                          "print(y)\n",
                          "=compute") != 0) {
        fprintf(stderr, "embed_host: %s\n", chainlua_error(S));
        ch_tensor_release(x);
        chainlua_close(S);
        return 1;
    }

    /* A new reference: ours to release. */
    ch_tensor *y = chainlua_get_global_tensor(S, "y");
    if (!y) {
        fprintf(stderr, "embed_host: %s\n", chainlua_error(S));
        ch_tensor_release(x);
        chainlua_close(S);
        return 1;
    }
    print_tensor("x (C)", x);
    print_tensor("y (C)", y);

    /* Errors come back as messages; the state stays usable. */
    if (chainlua_dostring(S, "local z = x:reshape{4, 4}", "=bad") != 0) {
        const char *msg = chainlua_error(S);
        int n = 0;
        while (msg[n] && msg[n] != '\n')
            n++;
        printf("error from Lua: %.*s\n", n, msg);
    }
    if (!chainlua_get_global_tensor(S, "print"))
        printf("error from C: %s\n", chainlua_error(S));

    ch_tensor_release(y);
    ch_tensor_release(x);
    chainlua_close(S);
    printf("live tensors after close: %lld\n", (long long)ch_live_tensors());
    return 0;
}
