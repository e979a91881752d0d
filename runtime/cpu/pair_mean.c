/* pair_mean.c -- the mean of two ranks' gradients as an MPI reduction
 * operator, for chainermn (lua/chainermn/model_sync.lua).
 *
 * With two ranks an allreduce combines every element exactly once, whatever
 * the algorithm, so an operator computing (a + b) * 0.5 gives the mean in
 * the same pass that sums: no separate pass times 1/size over the buffer
 * afterwards.  The result has the same bits as the sum followed by the
 * halving (both are exact roundings of a + b, halved exactly).
 *
 * The signature is MPI_User_function's (in, inout, len, datatype); the
 * datatype is not read: the Lua side creates one operator per dtype.  No
 * MPI header is needed, so the runtime builds without MPI.
 */
#include "chainlua.h"

CH_API void ch_pair_mean_f32(void *in, void *inout, int *len, void *datatype) {
    const float *restrict a = in;
    float *restrict b = inout;
    int n = *len;
    (void)datatype;
    for (int i = 0; i < n; i++) b[i] = (a[i] + b[i]) * 0.5f;
}

CH_API void ch_pair_mean_f64(void *in, void *inout, int *len, void *datatype) {
    const double *restrict a = in;
    double *restrict b = inout;
    int n = *len;
    (void)datatype;
    for (int i = 0; i < n; i++) b[i] = (a[i] + b[i]) * 0.5;
}
