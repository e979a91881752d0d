-- Bad-input audit across chainer.functions: wrong ndim, mismatched
-- channels and shapes, float labels where integers are needed, labels out
-- of range, integer tensors into float-only functions.  Every call must
-- raise a Lua error whose message names the function (and, where given,
-- matches `arg`, the argument or the problem) -- never crash, never return
-- a silently wrong result.
local chainer = require 'chainer'
local T = chainer.tensor
local F = chainer.functions

local function f32(shape) return T.random.uniform(-1, 1, shape, 'float32') end
local function i32(values) return T.array(values, 'int32') end
local function ints(shape) return T.zeros(shape, 'int32') end

-- { family, function name, call, arg pattern (Lua pattern, optional) }
local cases = {
  -- activation
  { 'activation', 'relu', function() return F.relu(ints({ 2, 3 })) end, 'float' },
  { 'activation', 'leaky_relu', function() return F.leaky_relu(ints({ 2, 3 })) end, 'float' },
  { 'activation', 'log_softmax', function() return F.log_softmax(ints({ 2, 3 })) end, 'float' },
  { 'activation', 'softmax', function() return F.softmax(f32({ 2, 3 }), { axis = 3 }) end, 'axis' },
  { 'activation', 'prelu', function() return F.prelu(f32({ 2, 3, 4 }), f32({ 5 })) end, 'W' },
  { 'activation', 'maxout', function() return F.maxout(f32({ 2, 6 }), 4) end, 'pool_size' },
  { 'activation', 'lstm', function() return F.lstm(f32({ 2, 3 }), f32({ 2, 10 })) end, 'x' },
  { 'activation', 'crelu', function() return F.crelu(f32({ 2, 3 }), { axis = 5 }) end, 'axis' },
  { 'activation', 'sigmoid', function() return F.sigmoid(ints({ 2 })) end, 'float' },
  -- array
  { 'array', 'reshape', function() return F.reshape(f32({ 2, 3 }), { 4, 2 }) end },
  { 'array', 'transpose', function() return F.transpose(f32({ 2, 3 }), { 0, 2 }) end, 'axis' },
  { 'array', 'concat', function() return F.concat({ f32({ 2, 3 }), f32({ 3, 4 }) }, 1) end },
  { 'array', 'split_axis', function() return F.split_axis(f32({ 2, 6 }), 4, 1) end },
  { 'array', 'select_item', function() return F.select_item(f32({ 3, 4 }), T.zeros({ 3 }, 'float32')) end, 't' },
  { 'array', 'select_item', function() return F.select_item(f32({ 3, 4 }), i32({ 0, 7, 1 })) end, 't' },
  { 'array', 'broadcast_to', function() return F.broadcast_to(f32({ 2, 3 }), { 4, 3 }) end },
  { 'array', 'get_item', function() return F.get_item(f32({ 2, 3 }), 5) end },
  { 'array', 'stack', function() return F.stack({ f32({ 2, 3 }), f32({ 2, 4 }) }) end },
  { 'array', 'where', function() return F.where(f32({ 2, 3 }), f32({ 2, 3 }), f32({ 2, 3 })) end, 'condition' },
  { 'array', 'expand_dims', function() return F.expand_dims(f32({ 2, 3 }), 5) end, 'axis' },
  { 'array', 'swapaxes', function() return F.swapaxes(f32({ 2, 3 }), 0, 4) end, 'axis' },
  { 'array', 'depth2space', function() return F.depth2space(f32({ 1, 5, 2, 2 }), 2) end },
  { 'array', 'im2col', function() return F.im2col(f32({ 3, 5 }), 2) end, 'x' },
  { 'array', 'permutate', function() return F.permutate(f32({ 3, 2 }), T.array({ 2, 0, 1 }, 'float32')) end,
    'indices' },
  { 'array', 'pad_sequence', function() return F.pad_sequence({ f32({ 2, 3 }), f32({ 2, 4 }) }) end },
  { 'array', 'spatial_transformer_sampler', function()
    return F.spatial_transformer_sampler(f32({ 1, 2, 4, 4 }), f32({ 1, 3, 2, 2 })) end, 'grid' },
  { 'array', 'resize_images', function() return F.resize_images(f32({ 2, 4, 4 }), { 3, 3 }) end, 'x' },
  { 'array', 'scatter_add', function() return F.scatter_add(f32({ 3, 2 }), 5, f32({ 2 })) end },
  { 'array', 'split_axis', function() return F.split_axis(f32({ 2, 6 }), 2, 5) end, 'axis' },
  { 'array', 'tile', function() return F.tile(f32({ 2, 3 }), -1) end, 'reps' },
  { 'array', 'repeat', function() return F.repeat_(f32({ 2, 3 }), -1) end, 'repeats' },
  { 'array', 'diagonal', function() return F.diagonal(f32({ 2, 3 }), 0, 0, 5) end, 'axis2' },
  { 'array', 'flip', function() return F.flip(f32({ 2, 3 }), 4) end, 'axis' },
  { 'array', 'squeeze', function() return F.squeeze(f32({ 2, 3 }), 0) end, 'axis' },
  { 'array', 'cast', function() return F.cast(f32({ 2, 3 }), 'complex') end, 'dtype' },
  { 'array', 'space2depth', function() return F.space2depth(f32({ 1, 1, 3, 3 }), 2) end, 'divisible' },
  { 'array', 'permutate', function() return F.permutate(f32({ 3, 2 }), i32({ 0, 0, 1 })) end, 'indices' },
  { 'array', 'select_item', function() return F.select_item(f32({ 3, 4 }), i32({ 0, -1, 1 })) end, 't' },
  { 'array', 'get_item', function() return F.get_item(f32({ 2, 3 }), { 0, 7 }) end },
  { 'array', 'deformable_convolution_2d_sampler', function()
    return F.deformable_convolution_2d_sampler(f32({ 1, 2, 4, 4 }), f32({ 1, 6, 3, 3 }), f32({ 3, 2, 2, 2 })) end,
    'offset' },
  -- connection
  { 'connection', 'linear', function() return F.linear(f32({ 2, 3 }), f32({ 4, 5 })) end, 'W' },
  { 'connection', 'convolution_2d', function() return F.convolution_2d(f32({ 1, 3, 5, 5 }), f32({ 2, 4, 3, 3 })) end,
    'channel' },
  { 'connection', 'convolution_2d', function() return F.convolution_2d(f32({ 3, 5, 5 }), f32({ 2, 3, 3, 3 })) end,
    'x' },
  { 'connection', 'deconvolution_2d', function()
    return F.deconvolution_2d(f32({ 1, 3, 5, 5 }), f32({ 4, 2, 3, 3 })) end, 'channel' },
  { 'connection', 'embed_id', function() return F.embed_id(T.zeros({ 3 }, 'float32'), f32({ 5, 3 })) end, 'x' },
  { 'connection', 'embed_id', function() return F.embed_id(i32({ 0, 10 }), f32({ 5, 3 })) end, 'range' },
  { 'connection', 'bilinear', function() return F.bilinear(f32({ 2, 3 }), f32({ 2, 4 }), f32({ 3, 5, 2 })) end, 'W' },
  { 'connection', 'depthwise_convolution_2d', function()
    return F.depthwise_convolution_2d(f32({ 1, 3, 5, 5 }), f32({ 2, 4, 3, 3 })) end, 'channel' },
  { 'connection', 'embed_id', function() return F.embed_id(i32({ 0, -1 }), f32({ 5, 3 })) end, 'range' },
  { 'connection', 'linear', function() return F.linear(ints({ 2, 3 }), f32({ 4, 3 })) end, 'x' },
  { 'connection', 'shift', function() return F.shift(f32({ 1, 3, 3 }), 3) end, 'x' },
  { 'connection', 'n_step_lstm', function()
    return F.n_step_lstm(1, 0.0, f32({ 1, 2, 3 }), f32({ 1, 2, 3 }), {}, {}, { f32({ 2, 4 }) }) end, 'ws' },
  -- evaluation
  { 'evaluation', 'binary_accuracy', function() return F.binary_accuracy(f32({ 3 }), T.zeros({ 3 }, 'float32')) end,
    't' },
  { 'evaluation', 'accuracy', function() return F.accuracy(f32({ 3, 4 }), T.zeros({ 3 }, 'float32')) end, 't' },
  { 'evaluation', 'accuracy', function() return F.accuracy(f32({ 3, 4 }), i32({ 0, 1, 2, 3 })) end, 't' },
  { 'evaluation', 'binary_accuracy', function() return F.binary_accuracy(f32({ 3 }), i32({ 0, 1, 1, 0 })) end, 't' },
  { 'evaluation', 'r2_score', function() return F.r2_score(f32({ 3 }), f32({ 4 })) end },
  { 'evaluation', 'classification_summary', function()
    return F.classification_summary(f32({ 3, 4 }), T.zeros({ 3 }, 'float32')) end, 't' },
  -- loss
  { 'loss', 'softmax_cross_entropy', function()
    return F.softmax_cross_entropy(f32({ 3, 4 }), T.zeros({ 3 }, 'float32')) end, 't' },
  { 'loss', 'softmax_cross_entropy', function() return F.softmax_cross_entropy(f32({ 3, 4 }), i32({ 0, 4, 1 })) end,
    't' },
  { 'loss', 'softmax_cross_entropy', function() return F.softmax_cross_entropy(f32({ 3, 4 }), i32({ 0, 1 })) end,
    't' },
  { 'loss', 'softmax_cross_entropy', function() return F.softmax_cross_entropy(ints({ 3, 4 }), i32({ 0, 1, 2 })) end,
    'x' },
  { 'loss', 'sigmoid_cross_entropy', function()
    return F.sigmoid_cross_entropy(f32({ 3, 4 }), T.zeros({ 3, 4 }, 'float32')) end, 't' },
  { 'loss', 'sigmoid_cross_entropy', function() return F.sigmoid_cross_entropy(f32({ 3, 4 }), ints({ 4, 3 })) end,
    't' },
  { 'loss', 'mean_squared_error', function() return F.mean_squared_error(f32({ 2, 3 }), f32({ 3, 2 })) end },
  { 'loss', 'mean_absolute_error', function() return F.mean_absolute_error(f32({ 2, 3 }), f32({ 2, 4 })) end },
  { 'loss', 'squared_error', function() return F.squared_error(f32({ 2, 3 }), f32({ 2, 4 })) end },
  { 'loss', 'hinge', function() return F.hinge(f32({ 3, 4 }), i32({ 0, 5, 1 })) end, 't' },
  { 'loss', 'hinge', function() return F.hinge(f32({ 3, 4 }), T.zeros({ 3 }, 'float32')) end, 't' },
  { 'loss', 'contrastive', function() return F.contrastive(f32({ 3, 4 }), f32({ 3, 5 }), i32({ 0, 1, 0 })) end },
  { 'loss', 'triplet', function() return F.triplet(f32({ 3, 4 }), f32({ 3, 4 }), f32({ 3, 5 })) end },
  { 'loss', 'huber_loss', function() return F.huber_loss(f32({ 2, 3 }), f32({ 2, 4 }), 1) end },
  { 'loss', 'gaussian_kl_divergence', function() return F.gaussian_kl_divergence(f32({ 2, 3 }), f32({ 2, 4 })) end },
  { 'loss', 'bernoulli_nll', function() return F.bernoulli_nll(f32({ 2, 3 }), f32({ 3, 2 })) end },
  { 'loss', 'gaussian_nll', function() return F.gaussian_nll(f32({ 2, 3 }), f32({ 2, 3 }), f32({ 2, 4 })) end },
  { 'loss', 'crf1d', function() return F.crf1d(f32({ 3, 3 }), { f32({ 2, 4 }) }, { i32({ 0, 1 }) }) end },
  { 'loss', 'connectionist_temporal_classification', function()
    return F.connectionist_temporal_classification({ f32({ 2, 3 }), f32({ 2, 3 }) }, T.zeros({ 2, 1 }, 'float32'), 0)
  end, 't' },
  { 'loss', 'softmax_cross_entropy', function() return F.softmax_cross_entropy(f32({ 3, 4 }), i32({ 0, -2, 1 })) end,
    'out of range' },
  { 'loss', 'negative_sampling', function()
    return F.negative_sampling(f32({ 2, 3 }), i32({ 0, 9 }), f32({ 5, 3 }),
      function(shape) return T.zeros(shape, 'int32') end, 2) end, 'out of range' },
  { 'loss', 'black_out', function() return F.black_out(f32({ 2, 3 }), i32({ 0, 9 }), f32({ 5, 3 }), ints({ 2, 2 })) end,
    'out of range' },
  { 'loss', 'crf1d', function() return F.crf1d(f32({ 3, 3 }), { f32({ 2, 3 }) }, { i32({ 0, 5 }) }) end, 'ys' },
  { 'loss', 'argmax_crf1d', function() return F.argmax_crf1d(f32({ 3, 3 }), { f32({ 2, 4 }) }) end, 'xs' },
  { 'loss', 'connectionist_temporal_classification', function()
    return F.connectionist_temporal_classification({ f32({ 2, 3 }), f32({ 2, 3 }), f32({ 2, 3 }) },
      i32({ { 1 }, { 7 } }), 0) end, 'out of range' },
  { 'loss', 'connectionist_temporal_classification', function()
    return F.connectionist_temporal_classification({ ints({ 2, 3 }) }, i32({ { 1 }, { 1 } }), 0) end, 'float' },
  { 'loss', 'sigmoid_cross_entropy', function() return F.sigmoid_cross_entropy(f32({ 3 }), i32({ 0, 2, 1 })) end, 't' },
  { 'loss', 'triplet', function() return F.triplet(ints({ 2, 3 }), ints({ 2, 3 }), ints({ 2, 3 })) end, 'float' },
  { 'loss', 'mean_squared_error', function() return F.mean_squared_error(ints({ 2, 3 }), ints({ 2, 3 })) end,
    'float' },
  { 'loss', 'absolute_error', function() return F.absolute_error(f32({ 2 }), f32({ 3 })) end },
  { 'loss', 'cross_covariance', function() return F.cross_covariance(f32({ 2, 3 }), f32({ 3, 3 })) end },
  -- math
  { 'math', 'matmul', function() return F.matmul(f32({ 2, 3 }), f32({ 4, 5 })) end },
  { 'math', 'batch_matmul', function() return F.batch_matmul(f32({ 2, 2, 3 }), f32({ 2, 4, 5 })) end },
  { 'math', 'inv', function() return F.inv(f32({ 2, 3 })) end },
  { 'math', 'batch_inv', function() return F.batch_inv(f32({ 2, 3 })) end },
  { 'math', 'det', function() return F.det(f32({ 2, 3 })) end },
  { 'math', 'sum', function() return F.sum(f32({ 2, 3 }), { axis = 2 }) end, 'axis' },
  { 'math', 'exp', function() return F.exp(ints({ 2, 3 })) end, 'float' },
  { 'math', 'log', function() return F.log(ints({ 2, 3 })) end, 'float' },
  { 'math', 'sqrt', function() return F.sqrt(ints({ 2 })) end, 'float' },
  { 'math', 'arctan2', function() return F.arctan2(f32({ 2, 3 }), f32({ 3, 2 })) end },
  { 'math', 'linear_interpolate', function() return F.linear_interpolate(f32({ 2, 3 }), f32({ 2, 3 }), f32({ 2, 4 }))
  end },
  { 'math', 'einsum', function() return F.einsum('ij,jk->ik', f32({ 2, 3 }), f32({ 4, 5 })) end },
  { 'math', 'clip', function() return F.clip(f32({ 2 }), 2, 1) end },
  { 'math', 'maximum', function() return F.maximum(f32({ 2, 3 }), f32({ 3, 2 })) end },
  { 'math', 'logsumexp', function() return F.logsumexp(f32({ 2, 3 }), { axis = 3 }) end, 'axis' },
  { 'math', 'cumsum', function() return F.cumsum(f32({ 2, 3 }), { axis = 3 }) end, 'axis' },
  { 'math', 'tensordot', function() return F.tensordot(f32({ 2, 3 }), f32({ 4, 5 }), 1) end },
  { 'math', 'batch_l2_norm_squared', function() return F.batch_l2_norm_squared(ints({ 2, 3 })) end, 'float' },
  { 'math', 'bias', function() return F.bias(f32({ 2, 3, 4 }), f32({ 5 })) end },
  { 'math', 'scale', function() return F.scale(f32({ 2, 3, 4 }), f32({ 5 })) end },
  { 'math', 'average', function() return F.average(f32({ 2, 3 }), { axis = 1, weights = f32({ 4 }) }) end,
    'weights' },
  { 'math', 'squared_difference', function() return F.squared_difference(f32({ 2, 3 }), f32({ 3, 2 })) end },
  { 'math', 'matmul', function() return F.matmul(f32({ 2, 3 }), T.zeros({ 3, 2 }, 'float64')) end, 'dtype' },
  { 'math', 'sin', function() return F.sin(ints({ 2 })) end, 'float' },
  { 'math', 'erf', function() return F.erf(ints({ 2 })) end, 'float' },
  { 'math', 'logsumexp', function() return F.logsumexp(ints({ 2 })) end, 'float' },
  -- noise
  { 'noise', 'dropout', function() return F.dropout(f32({ 2, 3 }), 1.5) end, 'ratio' },
  { 'noise', 'dropout', function() return F.dropout(ints({ 2, 3 })) end, 'float' },
  { 'noise', 'gaussian', function() return F.gaussian(f32({ 2, 3 }), f32({ 2, 4 })) end },
  { 'noise', 'zoneout', function() return F.zoneout(f32({ 2, 3 }), f32({ 2, 4 })) end },
  { 'noise', 'gumbel_softmax', function() return F.gumbel_softmax(ints({ 2, 3 })) end, 'float' },
  { 'noise', 'simplified_dropconnect', function() return F.simplified_dropconnect(f32({ 2, 3 }), f32({ 4, 5 })) end },
  { 'noise', 'dropout', function() return F.dropout(f32({ 2, 3 }), -0.5) end, 'ratio' },
  { 'noise', 'gaussian', function() return F.gaussian(ints({ 2, 3 }), ints({ 2, 3 })) end, 'float' },
  -- normalization
  { 'normalization', 'batch_normalization', function()
    return F.batch_normalization(ints({ 2, 3 }), f32({ 3 }), f32({ 3 })) end, 'float' },
  { 'normalization', 'group_normalization', function()
    return F.group_normalization(f32({ 2, 6, 4 }), 0, f32({ 6 }), f32({ 6 })) end, 'groups' },
  { 'normalization', 'batch_normalization', function()
    return F.batch_normalization(f32({ 2, 3, 4 }), f32({ 5 }), f32({ 5 })) end, 'gamma' },
  { 'normalization', 'layer_normalization', function()
    return F.layer_normalization(f32({ 2, 3 }), f32({ 4 }), f32({ 4 })) end, 'gamma' },
  { 'normalization', 'group_normalization', function()
    return F.group_normalization(f32({ 2, 6, 4 }), 4, f32({ 6 }), f32({ 6 })) end, 'groups' },
  { 'normalization', 'fixed_batch_normalization', function()
    return F.fixed_batch_normalization(f32({ 2, 3 }), f32({ 3 }), f32({ 3 }), f32({ 4 }), f32({ 3 })) end, 'mean' },
  { 'normalization', 'local_response_normalization', function() return F.local_response_normalization(f32({ 4 })) end,
    'x' },
  { 'normalization', 'normalize', function() return F.normalize(ints({ 2, 3 })) end, 'float' },
  { 'normalization', 'batch_renormalization', function()
    return F.batch_renormalization(f32({ 2, 3 }), f32({ 4 }), f32({ 3 }), 1, 0) end },
  -- pooling
  { 'pooling', 'max_pooling_2d', function() return F.max_pooling_2d(f32({ 3, 4, 4 }), 2) end, 'x' },
  { 'pooling', 'max_pooling_2d', function() return F.max_pooling_2d(ints({ 1, 1, 4, 4 }), 2) end, 'float' },
  { 'pooling', 'average_pooling_2d', function() return F.average_pooling_2d(f32({ 1, 1, 4, 4 }), 0) end, 'ksize' },
  { 'pooling', 'unpooling_2d', function() return F.unpooling_2d(f32({ 3, 4, 4 }), 2) end, 'x' },
  { 'pooling', 'upsampling_2d', function()
    return F.upsampling_2d(f32({ 1, 1, 2, 2 }), T.zeros({ 1, 1, 2, 2 }, 'float32'), 2) end, 'indexes' },
  { 'pooling', 'upsampling_2d', function()
    return F.upsampling_2d(f32({ 1, 1, 2, 2 }), T.full({ 1, 1, 2, 2 }, 9, 'int32'), 2) end, 'indexes' },
  { 'pooling', 'max_pooling_2d', function() return F.max_pooling_2d(f32({ 1, 1, 2, 2 }), 5, { cover_all = false }) end,
    'empty' },
  { 'pooling', 'spatial_pyramid_pooling_2d', function() return F.spatial_pyramid_pooling_2d(f32({ 3, 4, 4 }), 2) end,
    'x' },
  { 'pooling', 'roi_pooling_2d', function()
    return F.roi_pooling_2d(f32({ 1, 1, 4, 4 }), f32({ 1, 4 }), T.zeros({ 1 }, 'float32'), 2, 1) end, 'roi_indices' },
}

describe('bad inputs give clear errors', function()
  local families = {}
  for _, c in ipairs(cases) do families[c[1]] = (families[c[1]] or 0) + 1 end

  it('the audit covers every finished family with at least 40 calls', function()
    assert.is_true(#cases >= 40)
    for _, fam in ipairs({ 'activation', 'array', 'connection', 'evaluation', 'loss', 'math', 'noise',
      'normalization', 'pooling' }) do
      assert.is_true((families[fam] or 0) >= 1, fam)
    end
  end)

  for i, c in ipairs(cases) do
    local fam, name, call, arg = c[1], c[2], c[3], c[4]
    it(string.format('%s: F.%s (case %d)', fam, name, i), function()
      local ok, err = pcall(call)
      assert.is_false(ok, string.format('F.%s accepted bad input and returned %s', name, tostring(err)))
      err = tostring(err)
      assert.is_truthy(err:find(name, 1, true), string.format('the message does not name %s: %s', name, err))
      if arg then
        assert.is_truthy(err:find(arg), string.format('the message does not mention %q: %s', arg, err))
      end
      -- a Lua-level error, not an internal one
      assert.is_falsy(err:find('attempt to', 1, true), 'internal error: ' .. err)
    end)
  end
end)
