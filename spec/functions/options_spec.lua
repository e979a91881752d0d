-- Every function of chainer.functions that takes options checks them
-- through chainer._args: a misspelled key is an error naming the function,
-- the key and the accepted keys (issue 14).  One row per function: its call
-- with valid inputs (the options go where the function takes them), a valid
-- options table that must work, and the accepted keys.  A row whose
-- function stops checking fails: the misspelled call would then succeed.
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor

local function U(shape, lo, hi) return T.random.uniform(lo or -1, hi or 1, shape, 'float32') end
local function I(values) return T.array(values, 'int32') end

local x23 = U { 2, 3 }
local t2 = I { 0, 2 }
local img = U { 1, 1, 4, 4 }
local img1d, img3d = U { 1, 1, 4 }, U { 1, 1, 4, 4, 4 }
local rois, roi_idx = T.array({ { 0, 0, 3, 3 } }, 'float32'), I { 0 }

-- one recurrent layer (H = 2 units, 3 inputs), two steps of batch 1
local function rnn_args(directions)
  local ws, bs = {}, {}
  for d = 1, directions do
    ws[d] = { U { 2, 3 }, U { 2, 2 } }
    bs[d] = { U { 2 }, U { 2 } }
  end
  return 1, 0, U { directions, 1, 2 }, ws, bs, { U { 1, 3 }, U { 1, 3 } }
end

-- { F name, call(opts), valid options, accepted keys [, misspelled key] }
local rows = {
  -- activation
  { 'clipped_relu', function(o) return F.clipped_relu(x23, o) end, { z = 1 }, { 'z' } },
  { 'crelu', function(o) return F.crelu(x23, o) end, { axis = 1 }, { 'axis' } },
  { 'elu', function(o) return F.elu(x23, o) end, { alpha = 2 }, { 'alpha' }, 'alpah' },
  { 'selu', function(o) return F.selu(x23, o) end, { scale = 1 }, { 'alpha', 'scale' } },
  { 'leaky_relu', function(o) return F.leaky_relu(x23, o) end, { slope = 0.1 }, { 'slope' } },
  { 'log_softmax', function(o) return F.log_softmax(x23, o) end, { axis = 0 }, { 'axis' } },
  { 'maxout', function(o) return F.maxout(U { 2, 6 }, 3, o) end, { axis = 1 }, { 'pool_size', 'axis' } },
  { 'rrelu', function(o) return F.rrelu(x23, o) end, { l = 0.1, u = 0.2 }, { 'l', 'u', 'r', 'return_r' } },
  { 'softmax', function(o) return F.softmax(x23, o) end, { axis = 0 }, { 'axis' } },
  { 'softplus', function(o) return F.softplus(x23, o) end, { beta = 2 }, { 'beta' } },
  -- array
  { 'as_strided', function(o) return F.as_strided(U { 6 }, o) end, { shape = { 2, 3 }, strides = { 3, 1 } },
    { 'shape', 'strides', 'storage_offset' } },
  { 'broadcast_to', function(o) return F.broadcast_to(U { 1, 3 }, o) end, { shape = { 2, 3 } }, { 'shape' } },
  { 'cast', function(o) return F.cast(x23, o) end, { typ = 'float64' }, { 'typ' } },
  { 'concat', function(o) return F.concat({ x23, x23 }, o) end, { axis = 0 }, { 'axis' } },
  { 'copy', function(o) return F.copy(x23, o) end, { dst = -1 }, { 'dst' } },
  { 'deformable_convolution_2d_sampler', function(o)
    return F.deformable_convolution_2d_sampler(U { 1, 1, 3, 3 }, T.zeros({ 1, 8, 2, 2 }, 'float32'), U { 1, 1, 2, 2 },
      o)
  end, { stride = 1 }, { 'stride', 'pad' } },
  { 'depth2space', function(o) return F.depth2space(U { 1, 4, 2, 2 }, o) end, { r = 2 }, { 'r' } },
  { 'diagonal', function(o) return F.diagonal(U { 3, 3 }, o) end, { offset = 1 }, { 'offset', 'axis1', 'axis2' } },
  { 'expand_dims', function(o) return F.expand_dims(x23, o) end, { axis = 0 }, { 'axis' }, 'axes' },
  { 'flip', function(o) return F.flip(x23, o) end, { axis = 0 }, { 'axis' } },
  { 'get_item', function(o) return F.get_item(x23, o) end, { slices = 0 }, { 'slices' } },
  { 'im2col', function(o) return F.im2col(img, o) end, { ksize = 2 }, { 'ksize', 'stride', 'pad', 'cover_all', 'dilate' } },
  { 'moveaxis', function(o) return F.moveaxis(x23, o) end, { source = 0, destination = 1 }, { 'source', 'destination' } },
  { 'pad', function(o) return F.pad(x23, o) end, { pad_width = 1 }, { 'pad_width', 'mode', 'constant_values' } },
  { 'pad_sequence', function(o) return F.pad_sequence({ U { 2 }, U { 1 } }, o) end, { length = 3 }, { 'length', 'padding' } },
  { 'permutate', function(o) return F.permutate(U { 3 }, o) end, { indices = I { 2, 0, 1 } }, { 'indices', 'axis', 'inv' } },
  { 'repeat', function(o) return F['repeat'](U { 3 }, o) end, { repeats = 2 }, { 'repeats', 'axis' } },
  { 'reshape', function(o) return F.reshape(x23, o) end, { shape = { 3, 2 } }, { 'shape' } },
  { 'resize_images', function(o) return F.resize_images(U { 1, 1, 2, 2 }, o) end, { output_shape = { 4, 4 } },
    { 'output_shape', 'mode', 'align_corners' } },
  { 'rollaxis', function(o) return F.rollaxis(x23, o) end, { axis = 1, start = 0 }, { 'axis', 'start' } },
  { 'separate', function(o) return F.separate(x23, o) end, { axis = 1 }, { 'axis' } },
  { 'space2depth', function(o) return F.space2depth(img, o) end, { r = 2 }, { 'r' } },
  { 'spatial_transformer_grid', function(o) return F.spatial_transformer_grid(U { 1, 2, 3 }, o) end,
    { output_shape = { 2, 2 } }, { 'output_shape' } },
  { 'split_axis', function(o) return F.split_axis(U { 2, 4 }, o) end, { indices_or_sections = 2, axis = 1 },
    { 'indices_or_sections', 'axis', 'force_tuple' } },
  { 'squeeze', function(o) return F.squeeze(U { 1, 3 }, o) end, { axis = 0 }, { 'axis' } },
  { 'stack', function(o) return F.stack({ x23, x23 }, o) end, { axis = 1 }, { 'axis' } },
  { 'swapaxes', function(o) return F.swapaxes(x23, o) end, { axis1 = 0, axis2 = 1 }, { 'axis1', 'axis2' } },
  { 'tile', function(o) return F.tile(x23, o) end, { reps = 2 }, { 'reps' } },
  { 'transpose', function(o) return F.transpose(x23, o) end, { axes = { 1, 0 } }, { 'axes' } },
  -- connection
  { 'convolution_1d', function(o) return F.convolution_1d(img1d, U { 1, 1, 3 }, o) end, { pad = 1 },
    { 'stride', 'pad', 'cover_all', 'dilate', 'groups' } },
  { 'convolution_2d', function(o) return F.convolution_2d(img, U { 1, 1, 3, 3 }, o) end, { stride = 2 },
    { 'stride', 'pad', 'cover_all', 'dilate', 'groups' }, 'strid' },
  { 'convolution_3d', function(o) return F.convolution_3d(img3d, U { 1, 1, 3, 3, 3 }, o) end, { pad = 1 },
    { 'stride', 'pad', 'cover_all', 'dilate', 'groups' } },
  { 'convolution_nd', function(o) return F.convolution_nd(img, U { 1, 1, 3, 3 }, o) end, { groups = 1 },
    { 'stride', 'pad', 'cover_all', 'dilate', 'groups' } },
  { 'deconvolution_1d', function(o) return F.deconvolution_1d(img1d, U { 1, 1, 2 }, o) end, { stride = 2 },
    { 'stride', 'pad', 'outsize', 'dilate', 'groups' } },
  { 'deconvolution_2d', function(o) return F.deconvolution_2d(img, U { 1, 1, 2, 2 }, o) end, { stride = 2 },
    { 'stride', 'pad', 'outsize', 'dilate', 'groups' } },
  { 'deconvolution_3d', function(o) return F.deconvolution_3d(img3d, U { 1, 1, 2, 2, 2 }, o) end, { stride = 2 },
    { 'stride', 'pad', 'outsize', 'dilate', 'groups' } },
  { 'deconvolution_nd', function(o) return F.deconvolution_nd(img, U { 1, 1, 2, 2 }, o) end, { stride = 2 },
    { 'stride', 'pad', 'outsize', 'dilate', 'groups' } },
  { 'depthwise_convolution_2d', function(o) return F.depthwise_convolution_2d(U { 1, 2, 4, 4 }, U { 1, 2, 3, 3 }, o) end,
    { pad = 1 }, { 'stride', 'pad' } },
  { 'dilated_convolution_2d', function(o) return F.dilated_convolution_2d(img, U { 1, 1, 2, 2 }, o) end, { dilate = 2 },
    { 'stride', 'pad', 'dilate', 'cover_all' }, 'groups' },
  { 'embed_id', function(o) return F.embed_id(t2, U { 3, 4 }, o) end, { ignore_label = -1 }, { 'ignore_label' } },
  { 'linear', function(o) return F.linear(x23, U { 4, 3 }, o) end, { n_batch_axes = 1 }, { 'n_batch_axes' } },
  { 'local_convolution_2d', function(o) return F.local_convolution_2d(U { 1, 1, 3, 3 }, U { 1, 2, 2, 1, 2, 2 }, o) end,
    { stride = 1 }, { 'stride' } },
  { 'shift', function(o) return F.shift(U { 1, 2, 3, 3 }, o) end, { ksize = 3 }, { 'ksize', 'dilate' } },
  -- evaluation
  { 'accuracy', function(o) return F.accuracy(x23, t2, o) end, { ignore_label = -1 }, { 'ignore_label' }, 'ignore_labels' },
  { 'classification_summary', function(o) return F.classification_summary(x23, t2, o) end, { label_num = 3 },
    { 'label_num', 'beta', 'ignore_label' } },
  { 'f1_score', function(o) return F.f1_score(x23, t2, o) end, { label_num = 3 }, { 'label_num', 'ignore_label' }, 'beta' },
  { 'fbeta_score', function(o) return F.fbeta_score(x23, t2, o) end, { beta = 2 }, { 'label_num', 'beta', 'ignore_label' } },
  { 'precision', function(o) return F.precision(x23, t2, o) end, { label_num = 3 }, { 'label_num', 'beta', 'ignore_label' } },
  { 'r2_score', function(o) return F.r2_score(U { 4, 1 }, U { 4, 1 }, o) end, { multioutput = 'raw_values' },
    { 'sample_weight', 'multioutput' } },
  { 'recall', function(o) return F.recall(x23, t2, o) end, { label_num = 3 }, { 'label_num', 'beta', 'ignore_label' } },
  -- loss
  { 'bernoulli_nll', function(o) return F.bernoulli_nll(U({ 2, 3 }, 0, 1), x23, o) end, { reduce = 'no' }, { 'reduce' } },
  { 'black_out', function(o) return F.black_out(x23, t2, U { 5, 3 }, I { { 1, 3 }, { 4, 0 } }, o) end, { reduce = 'no' },
    { 'reduce' } },
  { 'connectionist_temporal_classification', function(o)
    return F.connectionist_temporal_classification({ U { 1, 3 }, U { 1, 3 }, U { 1, 3 }, U { 1, 3 } }, I { { 1, 2 } }, 0, o)
  end, { reduce = 'no' }, { 'blank_symbol', 'input_length', 'label_length', 'reduce' } },
  { 'contrastive', function(o) return F.contrastive(x23, U { 2, 3 }, I { 0, 1 }, o) end, { margin = 2 }, { 'margin', 'reduce' } },
  { 'crf1d', function(o) return F.crf1d(U { 3, 3 }, { x23, U { 2, 3 } }, { t2, I { 1, 1 } }, o) end, { reduce = 'no' },
    { 'reduce' } },
  { 'cross_covariance', function(o) return F.cross_covariance(x23, U { 2, 3 }, o) end, { reduce = 'no' }, { 'reduce' } },
  { 'decov', function(o) return F.decov(x23, o) end, { reduce = 'no' }, { 'reduce' } },
  { 'discriminative_margin_based_clustering_loss', function(o)
    return F.discriminative_margin_based_clustering_loss(U { 1, 2, 2, 2 }, I { { { 0, 1 }, { 1, 2 } } }, o)
  end, { delta_v = 0.5, delta_d = 1.5, max_embedding_dim = 2 },
    { 'delta_v', 'delta_d', 'max_embedding_dim', 'norm', 'alpha', 'beta', 'gamma' } },
  { 'gaussian_kl_divergence', function(o) return F.gaussian_kl_divergence(x23, U { 2, 3 }, o) end, { reduce = 'mean' },
    { 'reduce' } },
  { 'gaussian_nll', function(o) return F.gaussian_nll(x23, U { 2, 3 }, U { 2, 3 }, o) end, { reduce = 'no' }, { 'reduce' } },
  { 'hinge', function(o) return F.hinge(x23, t2, o) end, { norm = 'L2' }, { 'norm', 'reduce' } },
  { 'huber_loss', function(o) return F.huber_loss(x23, U { 2, 3 }, o) end, { delta = 1 }, { 'delta', 'reduce' } },
  { 'negative_sampling', function(o)
    return F.negative_sampling(x23, t2, U { 5, 3 }, function(shape) return T.zeros(shape, 'int32') end, 2, o)
  end, { reduce = 'no' }, { 'reduce', 'return_samples' } },
  { 'sigmoid_cross_entropy', function(o) return F.sigmoid_cross_entropy(x23, I { { 0, 1, 1 }, { 1, 0, -1 } }, o) end,
    { reduce = 'no' }, { 'normalize', 'reduce' } },
  { 'softmax_cross_entropy', function(o) return F.softmax_cross_entropy(x23, t2, o) end, { reduce = 'no' },
    { 'normalize', 'cache_score', 'class_weight', 'ignore_label', 'reduce', 'enable_double_backprop' }, 'ignore_labels' },
  { 'softmax_cross_entropy', function(o) return F.softmax_cross_entropy(x23, t2, o) end, { ignore_label = 0 },
    { 'normalize', 'cache_score', 'class_weight', 'ignore_label', 'reduce', 'enable_double_backprop' }, 'reduc' },
  { 'triplet', function(o) return F.triplet(x23, U { 2, 3 }, U { 2, 3 }, o) end, { margin = 1 }, { 'margin', 'reduce' } },
  -- math
  { 'argmax', function(o) return F.argmax(x23, o) end, { axis = 0 }, { 'axis' } },
  { 'argmin', function(o) return F.argmin(x23, o) end, { axis = 0 }, { 'axis' } },
  { 'average', function(o) return F.average(x23, o) end, { axis = 0 }, { 'axis', 'weights', 'returned', 'keepdims' } },
  { 'batch_matmul', function(o) return F.batch_matmul(U { 2, 2, 3 }, U { 2, 3, 2 }, o) end, { transb = false },
    { 'transa', 'transb' } },
  { 'bias', function(o) return F.bias(x23, U { 3 }, o) end, { axis = 1 }, { 'axis' } },
  { 'clip', function(o) return F.clip(x23, o) end, { x_min = 0, x_max = 1 }, { 'x_min', 'x_max' } },
  { 'cumprod', function(o) return F.cumprod(x23, o) end, { axis = 1 }, { 'axis' } },
  { 'cumsum', function(o) return F.cumsum(x23, o) end, { axis = 1 }, { 'axis' } },
  { 'logsumexp', function(o) return F.logsumexp(x23, o) end, { axis = 1 }, { 'axis' } },
  { 'matmul', function(o) return F.matmul(x23, U { 2, 3 }, o) end, { transb = true }, { 'transa', 'transb' } },
  { 'max', function(o) return F.max(x23, o) end, { axis = 0 }, { 'axis', 'keepdims' } },
  { 'mean', function(o) return F.mean(x23, o) end, { keepdims = true }, { 'axis', 'weights', 'returned', 'keepdims' } },
  { 'min', function(o) return F.min(x23, o) end, { axis = 0 }, { 'axis', 'keepdims' } },
  { 'prod', function(o) return F.prod(x23, o) end, { axis = 0 }, { 'axis', 'keepdims' } },
  { 'scale', function(o) return F.scale(x23, U { 3 }, o) end, { axis = 1 }, { 'axis' } },
  { 'sum', function(o) return F.sum(x23, o) end, { axis = 1 }, { 'axis', 'keepdims' }, 'axes' },
  { 'sum_to', function(o) return F.sum_to(x23, o) end, { shape = { 1, 3 } }, { 'shape' } },
  { 'tensordot', function(o) return F.tensordot(x23, U { 3, 2 }, o) end, { axes = 1 }, { 'axes' } },
  -- noise
  { 'dropout', function(o) return F.dropout(x23, o) end, { ratio = 0.1 }, { 'ratio', 'mask', 'return_mask' } },
  { 'gaussian', function(o) return F.gaussian(x23, U { 2, 3 }, o) end, { return_eps = true }, { 'eps', 'return_eps' } },
  { 'gumbel_softmax', function(o) return F.gumbel_softmax(x23, o) end, { tau = 0.5 }, { 'tau', 'axis' } },
  { 'simplified_dropconnect', function(o) return F.simplified_dropconnect(x23, U { 4, 3 }, o) end, { ratio = 0.1 },
    { 'ratio', 'train', 'mask', 'use_batchwise_mask' } },
  { 'zoneout', function(o) return F.zoneout(x23, U { 2, 3 }, o) end, { ratio = 0.1 }, { 'ratio' } },
  -- normalization
  { 'batch_normalization', function(o) return F.batch_normalization(U { 4, 3 }, U { 3 }, U { 3 }, o) end, { eps = 1e-5 },
    { 'eps', 'running_mean', 'running_var', 'decay', 'axis' } },
  { 'batch_renormalization', function(o)
    return F.batch_renormalization(U { 4, 3 }, U { 3 }, U { 3 }, 3, 5, o)
  end, { eps = 1e-5 }, { 'eps', 'running_mean', 'running_var', 'decay', 'update_statistics', 'axis' } },
  { 'fixed_batch_normalization', function(o)
    return F.fixed_batch_normalization(U { 4, 3 }, U { 3 }, U { 3 }, U { 3 }, U({ 3 }, 1, 2), o)
  end, { eps = 1e-5 }, { 'eps', 'axis' } },
  { 'group_normalization', function(o) return F.group_normalization(U { 2, 4, 2 }, 2, U { 4 }, U { 4 }, o) end,
    { eps = 1e-3 }, { 'eps' } },
  { 'layer_normalization', function(o) return F.layer_normalization(x23, U { 3 }, U { 3 }, o) end, { eps = 1e-3 }, { 'eps' } },
  { 'local_response_normalization', function(o) return F.local_response_normalization(U { 1, 3, 2, 2 }, o) end, { n = 3 },
    { 'n', 'k', 'alpha', 'beta' } },
  { 'normalize', function(o) return F.normalize(x23, o) end, { axis = 0 }, { 'eps', 'axis' } },
  -- pooling
  { 'average_pooling_1d', function(o) return F.average_pooling_1d(img1d, o) end, { ksize = 2 },
    { 'ksize', 'stride', 'pad', 'pad_value' } },
  { 'average_pooling_2d', function(o) return F.average_pooling_2d(img, o) end, { ksize = 2 }, { 'ksize', 'stride', 'pad' },
    'pad_value' },
  { 'average_pooling_3d', function(o) return F.average_pooling_3d(img3d, o) end, { ksize = 2 },
    { 'ksize', 'stride', 'pad', 'pad_value' } },
  { 'average_pooling_nd', function(o) return F.average_pooling_nd(img, o) end, { ksize = 2 },
    { 'ksize', 'stride', 'pad', 'pad_value' } },
  { 'max_pooling_1d', function(o) return F.max_pooling_1d(img1d, o) end, { ksize = 2 },
    { 'ksize', 'stride', 'pad', 'cover_all', 'return_indices' } },
  { 'max_pooling_2d', function(o) return F.max_pooling_2d(img, o) end, { ksize = 2 },
    { 'ksize', 'stride', 'pad', 'cover_all', 'return_indices' }, 'strde' },
  { 'max_pooling_3d', function(o) return F.max_pooling_3d(img3d, o) end, { ksize = 2 },
    { 'ksize', 'stride', 'pad', 'cover_all', 'return_indices' } },
  { 'max_pooling_nd', function(o) return F.max_pooling_nd(img, o) end, { ksize = 2 },
    { 'ksize', 'stride', 'pad', 'cover_all', 'return_indices' } },
  { 'roi_average_align_2d', function(o) return F.roi_average_align_2d(img, rois, roi_idx, 2, 1.0, o) end,
    { sampling_ratio = 2 }, { 'sampling_ratio' } },
  { 'roi_pooling_2d', function(o) return F.roi_pooling_2d(img, rois, roi_idx, 2, 1.0, o) end, {}, {} },
  { 'spatial_pyramid_pooling_2d', function(o) return F.spatial_pyramid_pooling_2d(img, o) end, { pyramid_height = 2 },
    { 'pyramid_height', 'pool_type', 'pooling' } },
  { 'unpooling_1d', function(o) return F.unpooling_1d(U { 1, 1, 2 }, o) end, { ksize = 2 },
    { 'ksize', 'stride', 'pad', 'outsize', 'cover_all' } },
  { 'unpooling_2d', function(o) return F.unpooling_2d(U { 1, 1, 2, 2 }, o) end, { ksize = 2 },
    { 'ksize', 'stride', 'pad', 'outsize', 'cover_all' } },
  { 'unpooling_3d', function(o) return F.unpooling_3d(U { 1, 1, 2, 2, 2 }, o) end, { ksize = 2 },
    { 'ksize', 'stride', 'pad', 'outsize', 'cover_all' } },
  { 'unpooling_nd', function(o) return F.unpooling_nd(U { 1, 1, 2, 2 }, o) end, { ksize = 2 },
    { 'ksize', 'stride', 'pad', 'outsize', 'cover_all' } },
  { 'upsampling_2d', function(o) return F.upsampling_2d(U { 1, 1, 2, 2 }, T.zeros({ 1, 1, 2, 2 }, 'int32'), o) end,
    { ksize = 2 }, { 'ksize', 'stride', 'pad', 'outsize', 'cover_all' } },
  -- rnn
  { 'n_step_birnn', function(o)
    local n, r, hx, ws, bs, xs = rnn_args(2)
    return F.n_step_birnn(n, r, hx, ws, bs, xs, o)
  end, { activation = 'relu' }, { 'activation' } },
  { 'n_step_rnn', function(o)
    local n, r, hx, ws, bs, xs = rnn_args(1)
    return F.n_step_rnn(n, r, hx, ws, bs, xs, o)
  end, { activation = 'relu' }, { 'activation' } },
}

-- The accepted keys named in a message "(accepted: a, b)", as a set.
local function accepted_in(msg)
  local list = msg:match('%(accepted: ([^)]*)%)')
  local set = {}
  if list and list ~= 'none' then for k in list:gmatch('[%w_]+') do set[k] = true end end
  return list, set
end

describe('options of chainer.functions', function()
  for _, row in ipairs(rows) do
    local name, call, valid, accepted, bad = row[1], row[2], row[3], row[4], row[5] or 'bogus_option'
    it(name .. ' rejects the misspelled option ' .. bad, function()
      assert.is_function(F[name], 'F.' .. name .. ' is missing')
      local ok, err = pcall(call, valid)
      assert(ok, name .. ' with valid options ' .. tostring(err))
      local ok2, msg = pcall(call, { [bad] = 1 })
      assert.is_false(ok2, name .. ' accepted the misspelled option ' .. bad)
      msg = tostring(msg)
      assert.truthy(msg:find(name .. ": unknown option '" .. bad .. "'", 1, true), msg)
      local list, set = accepted_in(msg)
      assert.truthy(list, 'no accepted list in: ' .. msg)
      local n = 0
      for _ in pairs(set) do n = n + 1 end
      assert.equal(#accepted, n, msg)
      for _, k in ipairs(accepted) do assert.truthy(set[k], k .. ' missing from: ' .. msg) end
    end)
  end

  it('takes a list in the options place as the positional axis tuple', function()
    local x = T.arange(24):astype('float32'):reshape { 2, 3, 4 }
    for _, name in ipairs { 'sum', 'max', 'min', 'prod', 'logsumexp', 'mean', 'average' } do
      local by_list, by_name = F[name](x, { 0, 2 }), F[name](x, { axis = { 0, 2 } })
      assert.same({ 3 }, by_list.array.shape, name)
      assert.same(by_name.array:totable(), by_list.array:totable(), name)
    end
  end)

  it('blames the caller', function()
    local ok, msg = pcall(function()
      local y = F.sum(x23, { axes = 1 }) -- not a tail call: this line is the caller
      return y
    end)
    assert.is_false(ok)
    assert.truthy(tostring(msg):find('options_spec.lua', 1, true), msg)
  end)
end)
