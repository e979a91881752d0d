/* fuzz_caffe.c -- .caffemodel files (protobuf NetParameter): every layer's
 * strings, parameters and blobs as CaffeFunction reads them.  A build
 * without protobuf-c rejects every input (ch_caffe_open fails). */
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_file(data, size, ".caffemodel");
    if (!path) return 0;
    ch_caffe_net *net = NULL;
    if (ch_caffe_open(path, &net) != CH_OK) return 0;
    int n = ch_caffe_layer_count(net);
    for (int i = 0; i < n; i++) {
        (void)ch_caffe_layer_name(net, i);
        (void)ch_caffe_layer_type(net, i);
        for (int k = 0; k < ch_caffe_layer_bottom_count(net, i); k++) (void)ch_caffe_layer_bottom(net, i, k);
        for (int k = 0; k < ch_caffe_layer_top_count(net, i); k++) (void)ch_caffe_layer_top(net, i, k);
        ch_caffe_params p;
        (void)ch_caffe_layer_params(net, i, &p);
        for (int k = 0; k < p.eltwise_ncoeff; k++) (void)p.eltwise_coeff[k];
        for (int k = 0; k < p.reshape_ndim; k++) (void)p.reshape_dim[k];
        for (int k = 0; k < ch_caffe_layer_blob_count(net, i); k++) {
            ch_tensor *t = NULL;
            ch_status st = ch_caffe_layer_blob(net, i, k, &t);
            fuzz_done(st, t);
        }
    }
    ch_caffe_close(net);
    return 0;
}
