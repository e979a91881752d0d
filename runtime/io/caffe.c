/* caffe.c -- binary Caffe models (.caffemodel) for CaffeFunction.
 *
 * The file is one NetParameter message.  protobuf-c parses it with the code
 * protoc-c generates from runtime/io/caffe.proto at build time (a reduced
 * schema: fields it does not declare are skipped), and this file presents
 * the layers -- from the `layer` list, or the V1 `layers` list of older
 * models -- as names, blobs (float32 tensors) and a flat parameter struct
 * that the Lua side reads through the FFI.  A damaged or truncated file is a
 * CH_ERR_FORMAT error naming it. */
#include "../core/internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef CHAINLUA_HAVE_PROTOBUF_C
#include "caffe.pb-c.h"

struct ch_caffe_net {
    Caffe__NetParameter *msg;
    char *path;
    int v1;
};

int ch_caffe_available(void) { return 1; }

static const char *FN = "CaffeFunction";

/* The whole file in memory: protobuf-c unpacks from a buffer. */
static ch_status read_file(const char *path, uint8_t **data, size_t *n) {
    FILE *fp = fopen(path, "rb");
    if (!fp) return ch_fail(CH_ERR_IO, "%s: cannot open '%s' (%s)", FN, path, strerror(errno));
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            cap = cap ? cap * 2 : (size_t)1 << 20;
            uint8_t *nb = (uint8_t *)realloc(buf, cap);
            if (!nb) {
                free(buf);
                fclose(fp);
                return ch_fail(CH_ERR_MEMORY, "%s: out of memory reading '%s'", FN, path);
            }
            buf = nb;
        }
        size_t got = fread(buf + len, 1, cap - len, fp);
        len += got;
        if (got == 0) break;
    }
    int err = ferror(fp);
    fclose(fp);
    if (err) {
        free(buf);
        return ch_fail(CH_ERR_IO, "%s: error reading '%s'", FN, path);
    }
    *data = buf;
    *n = len;
    return CH_OK;
}

ch_status ch_caffe_open(const char *path, ch_caffe_net **net) {
    if (!path || !net) return ch_fail(CH_ERR_ARG, "%s: NULL argument", FN);
    uint8_t *data = NULL;
    size_t n = 0;
    CH_TRY(read_file(path, &data, &n));
    Caffe__NetParameter *msg = caffe__net_parameter__unpack(NULL, n, data);
    free(data);
    if (!msg)
        return ch_fail(CH_ERR_FORMAT,
                       "%s: '%s' is not a valid Caffe model (the protobuf data is damaged or truncated)", FN, path);
    ch_caffe_net *nt = (ch_caffe_net *)calloc(1, sizeof *nt);
    char *p = nt ? strdup(path) : NULL;
    if (!nt || !p) {
        free(nt);
        caffe__net_parameter__free_unpacked(msg, NULL);
        return ch_fail(CH_ERR_MEMORY, "%s: out of memory", FN);
    }
    nt->msg = msg;
    nt->path = p;
    nt->v1 = msg->n_layer == 0 && msg->n_layers > 0;
    *net = nt;
    return CH_OK;
}

void ch_caffe_close(ch_caffe_net *net) {
    if (!net) return;
    caffe__net_parameter__free_unpacked(net->msg, NULL);
    free(net->path);
    free(net);
}

int ch_caffe_is_v1(const ch_caffe_net *net) { return net ? net->v1 : 0; }

int ch_caffe_layer_count(const ch_caffe_net *net) {
    if (!net) return 0;
    return (int)(net->v1 ? net->msg->n_layers : net->msg->n_layer);
}

static const Caffe__LayerParameter *layer_at(const ch_caffe_net *net, int i) {
    if (!net || net->v1 || i < 0 || (size_t)i >= net->msg->n_layer) return NULL;
    return net->msg->layer[i];
}

static const Caffe__V1LayerParameter *v1_at(const ch_caffe_net *net, int i) {
    if (!net || !net->v1 || i < 0 || (size_t)i >= net->msg->n_layers) return NULL;
    return net->msg->layers[i];
}

static int in_range(const ch_caffe_net *net, int i) { return i >= 0 && i < ch_caffe_layer_count(net); }

static const char *or_empty(const char *s) { return s ? s : ""; }

/* Field f of layer i in whichever of the two layer lists the net uses
 * (V1LayerParameter and LayerParameter share these field names). */
#define LAYER_FIELD(net, i, f) ((net)->v1 ? v1_at((net), (i))->f : layer_at((net), (i))->f)

/* The k-th of a layer's n blob names ("" when unnamed), NULL out of range. */
static const char *nth_name(char *const *names, size_t n, int k) {
    return k >= 0 && (size_t)k < n ? or_empty(names[k]) : NULL;
}

const char *ch_caffe_layer_name(const ch_caffe_net *net, int i) {
    if (!in_range(net, i)) return NULL;
    return or_empty(LAYER_FIELD(net, i, name));
}

/* V1 layer types under the names the `layer` list uses. */
static const char *v1_type_name(int t) {
    switch (t) {
    case CAFFE__V1_LAYER_PARAMETER__LAYER_TYPE__CONCAT: return "Concat";
    case CAFFE__V1_LAYER_PARAMETER__LAYER_TYPE__CONVOLUTION: return "Convolution";
    case CAFFE__V1_LAYER_PARAMETER__LAYER_TYPE__DATA: return "Data";
    case CAFFE__V1_LAYER_PARAMETER__LAYER_TYPE__DECONVOLUTION: return "Deconvolution";
    case CAFFE__V1_LAYER_PARAMETER__LAYER_TYPE__DROPOUT: return "Dropout";
    case CAFFE__V1_LAYER_PARAMETER__LAYER_TYPE__ELTWISE: return "Eltwise";
    case CAFFE__V1_LAYER_PARAMETER__LAYER_TYPE__INNER_PRODUCT: return "InnerProduct";
    case CAFFE__V1_LAYER_PARAMETER__LAYER_TYPE__LRN: return "LRN";
    case CAFFE__V1_LAYER_PARAMETER__LAYER_TYPE__POOLING: return "Pooling";
    case CAFFE__V1_LAYER_PARAMETER__LAYER_TYPE__RELU: return "ReLU";
    case CAFFE__V1_LAYER_PARAMETER__LAYER_TYPE__SIGMOID: return "Sigmoid";
    case CAFFE__V1_LAYER_PARAMETER__LAYER_TYPE__SOFTMAX: return "Softmax";
    case CAFFE__V1_LAYER_PARAMETER__LAYER_TYPE__SOFTMAX_LOSS: return "SoftmaxWithLoss";
    case CAFFE__V1_LAYER_PARAMETER__LAYER_TYPE__SPLIT: return "Split";
    case CAFFE__V1_LAYER_PARAMETER__LAYER_TYPE__SLICE: return "Slice";
    default: return NULL;
    }
}

const char *ch_caffe_layer_type(const ch_caffe_net *net, int i) {
    if (!in_range(net, i)) return NULL;
    if (!net->v1) return or_empty(layer_at(net, i)->type);
    const Caffe__V1LayerParameter *l = v1_at(net, i);
    const char *name = v1_type_name((int)l->type);
    if (name) return name;
    /* unknown V1 types: a per-thread buffer the caller copies before its next call */
    static __thread char buf[32];
    snprintf(buf, sizeof buf, "V1:%d", (int)l->type);
    return buf;
}

int ch_caffe_layer_bottom_count(const ch_caffe_net *net, int i) {
    return in_range(net, i) ? (int)LAYER_FIELD(net, i, n_bottom) : 0;
}

const char *ch_caffe_layer_bottom(const ch_caffe_net *net, int i, int k) {
    return in_range(net, i) ? nth_name(LAYER_FIELD(net, i, bottom), LAYER_FIELD(net, i, n_bottom), k) : NULL;
}

int ch_caffe_layer_top_count(const ch_caffe_net *net, int i) {
    return in_range(net, i) ? (int)LAYER_FIELD(net, i, n_top) : 0;
}

const char *ch_caffe_layer_top(const ch_caffe_net *net, int i, int k) {
    return in_range(net, i) ? nth_name(LAYER_FIELD(net, i, top), LAYER_FIELD(net, i, n_top), k) : NULL;
}

int ch_caffe_layer_blob_count(const ch_caffe_net *net, int i) {
    return in_range(net, i) ? (int)LAYER_FIELD(net, i, n_blobs) : 0;
}

static const char *layer_name(const ch_caffe_net *net, int i) { return ch_caffe_layer_name(net, i); }

ch_status ch_caffe_layer_blob(const ch_caffe_net *net, int i, int k, ch_tensor **result) {
    if (!net || !result) return ch_fail(CH_ERR_ARG, "%s: NULL argument", FN);
    if (k < 0 || k >= ch_caffe_layer_blob_count(net, i))
        return ch_fail(CH_ERR_ARG, "%s: layer %d has no blob %d", FN, i, k);
    const Caffe__BlobProto *b = LAYER_FIELD(net, i, blobs[k]);
    int64_t dim[CH_MAX_DIMS];
    int nd;
    if (b->shape && b->shape->n_dim > 0) {
        if (b->shape->n_dim > CH_MAX_DIMS)
            return ch_fail(CH_ERR_FORMAT, "%s: '%s' layer '%s' blob %d has %zu dimensions (at most %d)", FN,
                           net->path, layer_name(net, i), k, b->shape->n_dim, CH_MAX_DIMS);
        nd = (int)b->shape->n_dim;
        for (int d = 0; d < nd; d++) dim[d] = b->shape->dim[d];
    } else if (b->num > 0 || b->channels > 0 || b->height > 0 || b->width > 0) {
        nd = 4;
        dim[0] = b->num;
        dim[1] = b->channels;
        dim[2] = b->height;
        dim[3] = b->width;
    } else {
        nd = 1;
        dim[0] = (int64_t)(b->n_data ? b->n_data : b->n_double_data);
    }
    uint64_t count = 1;
    for (int d = 0; d < nd; d++) {
        if (dim[d] < 0 || (dim[d] > 0 && count > UINT64_MAX / (uint64_t)dim[d]))
            return ch_fail(CH_ERR_FORMAT, "%s: '%s' layer '%s' blob %d has an invalid shape", FN, net->path,
                           layer_name(net, i), k);
        count *= (uint64_t)dim[d];
    }
    size_t have = b->n_data ? b->n_data : b->n_double_data;
    if (count != have)
        return ch_fail(CH_ERR_FORMAT, "%s: '%s' layer '%s' blob %d holds %zu values but its shape needs %llu", FN,
                       net->path, layer_name(net, i), k, have, (unsigned long long)count);
    ch_tensor *t;
    CH_TRY(ch_tensor_new(CH_FLOAT32, nd, dim, CH_CPU, &t));
    float *dst = (float *)t->data;
    if (b->n_data)
        memcpy(dst, b->data, have * sizeof(float));
    else
        for (size_t j = 0; j < have; j++) dst[j] = (float)b->double_data[j];
    *result = t;
    return CH_OK;
}

/* Defaults for absent sub-messages, as Python's protobuf shows them. */
static const Caffe__ConvolutionParameter CONV0 = CAFFE__CONVOLUTION_PARAMETER__INIT;
static const Caffe__PoolingParameter POOL0 = CAFFE__POOLING_PARAMETER__INIT;
static const Caffe__InnerProductParameter IP0 = CAFFE__INNER_PRODUCT_PARAMETER__INIT;
static const Caffe__LRNParameter LRN0 = CAFFE__LRNPARAMETER__INIT;
static const Caffe__ReLUParameter RELU0 = CAFFE__RE_LUPARAMETER__INIT;
static const Caffe__DropoutParameter DROP0 = CAFFE__DROPOUT_PARAMETER__INIT;
static const Caffe__EltwiseParameter ELT0 = CAFFE__ELTWISE_PARAMETER__INIT;
static const Caffe__ConcatParameter CAT0 = CAFFE__CONCAT_PARAMETER__INIT;
static const Caffe__SoftmaxParameter SMAX0 = CAFFE__SOFTMAX_PARAMETER__INIT;
static const Caffe__SigmoidParameter SIG0 = CAFFE__SIGMOID_PARAMETER__INIT;
static const Caffe__BatchNormParameter BN0 = CAFFE__BATCH_NORM_PARAMETER__INIT;
static const Caffe__ScaleParameter SCALE0 = CAFFE__SCALE_PARAMETER__INIT;
static const Caffe__ReshapeParameter RESHAPE0 = CAFFE__RESHAPE_PARAMETER__INIT;
static const Caffe__SliceParameter SLICE0 = CAFFE__SLICE_PARAMETER__INIT;

#define OR(p, dflt) ((p) ? (p) : &(dflt))

ch_status ch_caffe_layer_params(const ch_caffe_net *net, int i, ch_caffe_params *out) {
    if (!net || !out) return ch_fail(CH_ERR_ARG, "%s: NULL argument", FN);
    if (!in_range(net, i)) return ch_fail(CH_ERR_ARG, "%s: layer %d out of range", FN, i);
    const Caffe__ConvolutionParameter *cv = OR(LAYER_FIELD(net, i, convolution_param), CONV0);
    const Caffe__PoolingParameter *pl = OR(LAYER_FIELD(net, i, pooling_param), POOL0);
    const Caffe__InnerProductParameter *ip = OR(LAYER_FIELD(net, i, inner_product_param), IP0);
    const Caffe__LRNParameter *lrn = OR(LAYER_FIELD(net, i, lrn_param), LRN0);
    const Caffe__ReLUParameter *relu = OR(LAYER_FIELD(net, i, relu_param), RELU0);
    const Caffe__DropoutParameter *dr = OR(LAYER_FIELD(net, i, dropout_param), DROP0);
    const Caffe__EltwiseParameter *el = OR(LAYER_FIELD(net, i, eltwise_param), ELT0);
    const Caffe__ConcatParameter *ct = OR(LAYER_FIELD(net, i, concat_param), CAT0);
    const Caffe__SoftmaxParameter *sm = OR(LAYER_FIELD(net, i, softmax_param), SMAX0);
    const Caffe__SigmoidParameter *sg = OR(LAYER_FIELD(net, i, sigmoid_param), SIG0);
    const Caffe__SliceParameter *sl = OR(LAYER_FIELD(net, i, slice_param), SLICE0);
    const Caffe__BatchNormParameter *bn = &BN0;
    const Caffe__ScaleParameter *sc = &SCALE0;
    const Caffe__ReshapeParameter *rs = &RESHAPE0;
    if (!net->v1) { /* V1 layers have none of these three */
        const Caffe__LayerParameter *l = layer_at(net, i);
        bn = OR(l->batch_norm_param, BN0);
        sc = OR(l->scale_param, SCALE0);
        rs = OR(l->reshape_param, RESHAPE0);
    }
    memset(out, 0, sizeof *out);
    out->conv_num_output = cv->num_output;
    out->conv_bias_term = cv->bias_term;
    out->conv_group = cv->group;
    out->conv_axis = cv->axis;
    out->conv_pad_h = cv->pad_h;
    out->conv_pad_w = cv->pad_w;
    out->conv_kernel_h = cv->kernel_h;
    out->conv_kernel_w = cv->kernel_w;
    out->conv_stride_h = cv->stride_h;
    out->conv_stride_w = cv->stride_w;
    out->conv_npad = (int32_t)cv->n_pad;
    out->conv_pad = cv->pad;
    out->conv_nkernel_size = (int32_t)cv->n_kernel_size;
    out->conv_kernel_size = cv->kernel_size;
    out->conv_nstride = (int32_t)cv->n_stride;
    out->conv_stride = cv->stride;
    out->conv_ndilation = (int32_t)cv->n_dilation;
    out->conv_dilation = cv->dilation;
    out->pool_method = pl->pool;
    out->pool_pad = pl->pad;
    out->pool_pad_h = pl->pad_h;
    out->pool_pad_w = pl->pad_w;
    out->pool_kernel_size = pl->kernel_size;
    out->pool_kernel_h = pl->kernel_h;
    out->pool_kernel_w = pl->kernel_w;
    out->pool_stride = pl->stride;
    out->pool_stride_h = pl->stride_h;
    out->pool_stride_w = pl->stride_w;
    out->pool_global_pooling = pl->global_pooling;
    out->ip_num_output = ip->num_output;
    out->ip_bias_term = ip->bias_term;
    out->ip_axis = ip->axis;
    out->ip_transpose = ip->transpose;
    out->lrn_local_size = lrn->local_size;
    out->lrn_norm_region = lrn->norm_region;
    out->lrn_alpha = lrn->alpha;
    out->lrn_beta = lrn->beta;
    out->lrn_k = lrn->k;
    out->relu_negative_slope = relu->negative_slope;
    out->dropout_ratio = dr->dropout_ratio;
    out->eltwise_operation = el->operation;
    out->eltwise_ncoeff = (int32_t)el->n_coeff;
    out->eltwise_coeff = el->coeff;
    out->concat_axis = ct->axis;
    out->concat_concat_dim = ct->concat_dim;
    out->softmax_axis = sm->axis;
    out->softmax_engine = sm->engine;
    out->sigmoid_engine = sg->engine;
    out->bn_use_global_stats = bn->use_global_stats;
    out->bn_moving_average_fraction = bn->moving_average_fraction;
    out->bn_eps = bn->eps;
    out->scale_axis = sc->axis;
    out->scale_num_axes = sc->num_axes;
    out->scale_bias_term = sc->bias_term;
    out->reshape_axis = rs->axis;
    out->reshape_num_axes = rs->num_axes;
    out->reshape_ndim = rs->shape ? (int32_t)rs->shape->n_dim : 0;
    out->reshape_dim = rs->shape ? rs->shape->dim : NULL;
    out->slice_axis = sl->axis;
    out->slice_has_axis = sl->has_axis;
    out->slice_slice_dim = sl->slice_dim;
    out->slice_has_slice_dim = sl->has_slice_dim;
    out->slice_npoint = (int32_t)sl->n_slice_point;
    out->slice_point = sl->slice_point;
    return CH_OK;
}

#else /* built without protobuf-c */

struct ch_caffe_net {
    int unused;
};

int ch_caffe_available(void) { return 0; }

ch_status ch_caffe_open(const char *path, ch_caffe_net **net) {
    CH_UNUSED(path);
    CH_UNUSED(net);
    return ch_fail(CH_ERR_UNSUPPORTED,
                   "CaffeFunction: this chainlua was built without protobuf-c; install protobuf-c-compiler and "
                   "libprotobuf-c-dev (scripts/install-deps does) and rebuild");
}

void ch_caffe_close(ch_caffe_net *net) { CH_UNUSED(net); }
int ch_caffe_is_v1(const ch_caffe_net *net) { CH_UNUSED(net); return 0; }
int ch_caffe_layer_count(const ch_caffe_net *net) { CH_UNUSED(net); return 0; }
const char *ch_caffe_layer_name(const ch_caffe_net *net, int i) { CH_UNUSED(net); CH_UNUSED(i); return NULL; }
const char *ch_caffe_layer_type(const ch_caffe_net *net, int i) { CH_UNUSED(net); CH_UNUSED(i); return NULL; }
int ch_caffe_layer_bottom_count(const ch_caffe_net *net, int i) { CH_UNUSED(net); CH_UNUSED(i); return 0; }
const char *ch_caffe_layer_bottom(const ch_caffe_net *net, int i, int k) {
    CH_UNUSED(net); CH_UNUSED(i); CH_UNUSED(k);
    return NULL;
}
int ch_caffe_layer_top_count(const ch_caffe_net *net, int i) { CH_UNUSED(net); CH_UNUSED(i); return 0; }
const char *ch_caffe_layer_top(const ch_caffe_net *net, int i, int k) {
    CH_UNUSED(net); CH_UNUSED(i); CH_UNUSED(k);
    return NULL;
}
int ch_caffe_layer_blob_count(const ch_caffe_net *net, int i) { CH_UNUSED(net); CH_UNUSED(i); return 0; }
ch_status ch_caffe_layer_blob(const ch_caffe_net *net, int i, int k, ch_tensor **result) {
    CH_UNUSED(net); CH_UNUSED(i); CH_UNUSED(k); CH_UNUSED(result);
    return ch_fail(CH_ERR_UNSUPPORTED, "CaffeFunction: built without protobuf-c");
}
ch_status ch_caffe_layer_params(const ch_caffe_net *net, int i, ch_caffe_params *out) {
    CH_UNUSED(net); CH_UNUSED(i); CH_UNUSED(out);
    return ch_fail(CH_ERR_UNSUPPORTED, "CaffeFunction: built without protobuf-c");
}

#endif
