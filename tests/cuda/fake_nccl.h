/* tests/cuda/fake_nccl.h: the record of the last collective that the fake
 * NCCL library (fake_nccl.c) keeps and test_nccl.cu reads back through
 * dlsym; one definition for both sides. */
#ifndef CHAINLUA_FAKE_NCCL_H
#define CHAINLUA_FAKE_NCCL_H
#include <stddef.h>

typedef struct fake_nccl_call {
    char what[32];
    const void *send;
    void *recv;
    size_t count;
    int dt, op, root;
    void *stream;
    int groups_open;
} fake_nccl_call;

#endif
