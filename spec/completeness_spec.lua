-- completeness_spec.lua: every function, link, initializer, optimizer and
-- optimizer hook that issues 4 and 5 require (plus the names of Chainer's
-- API inventory, chainer-api-v2.md §4) exists where users look for it.
-- Only presence is checked here; each name has its own behaviour spec.
local chainer = require 'chainer'
local F = require 'chainer.functions'
local L = require 'chainer.links'

local function words(s)
  local t = {}
  for w in s:gmatch('%S+') do t[#t + 1] = w end
  return t
end

-- issue 4, family by family.  Lua keywords appear under their alias
-- (`repeat` is F.repeat_, and also F['repeat']).
local functions = {
  activation = words [[
    clipped_relu crelu elu hard_sigmoid leaky_relu log_softmax lstm maxout prelu relu relu6 rrelu
    selu sigmoid slstm softmax softplus swish tanh tree_lstm ]],
  array = words [[
    broadcast broadcast_to cast concat copy depth2space space2depth diagonal dstack expand_dims
    flatten flip fliplr flipud get_item hstack im2col moveaxis pad pad_sequence permutate repeat_
    reshape resize_images rollaxis scatter_add select_item separate spatial_transformer_grid
    spatial_transformer_sampler split_axis squeeze stack swapaxes tile transpose transpose_sequence
    vstack where ]],
  connection = words [[
    bilinear convolution_1d convolution_2d convolution_3d convolution_nd deconvolution_1d
    deconvolution_2d deconvolution_3d deconvolution_nd depthwise_convolution_2d
    dilated_convolution_2d embed_id linear local_convolution_2d n_step_lstm n_step_bilstm
    n_step_gru n_step_bigru n_step_rnn n_step_birnn shift ]],
  evaluation = words [[ accuracy binary_accuracy classification_summary r2_score ]],
  loss = words [[
    absolute_error bernoulli_nll black_out connectionist_temporal_classification contrastive crf1d
    argmax_crf1d cross_covariance decov gaussian_kl_divergence gaussian_nll hinge huber_loss
    mean_absolute_error mean_squared_error negative_sampling sigmoid_cross_entropy
    softmax_cross_entropy squared_error triplet ]],
  math = words [[
    absolute add arccos arcsin arctan arctan2 argmax argmin average batch_det batch_inv
    batch_l2_norm_squared batch_matmul bias ceil clip cos cosh cumprod cumsum det einsum erf erfc
    erfinv exp expm1 fix floor fmod identity inv lgamma digamma linear_interpolate log log10 log1p
    log2 logsumexp matmul max maximum mean min minimum prod rsqrt scale sign sin sinh sqrt square
    squared_difference sum sum_to tan tanh tensordot ndtr erfcinv erfcx ndtri log_ndtr polygamma zeta ]],
  noise = words [[ dropout gaussian gumbel_softmax simplified_dropconnect zoneout ]],
  normalization = words [[
    batch_normalization batch_renormalization fixed_batch_normalization group_normalization
    layer_normalization local_response_normalization normalize ]],
  pooling = words [[
    average_pooling_1d average_pooling_2d average_pooling_3d average_pooling_nd max_pooling_1d
    max_pooling_2d max_pooling_3d max_pooling_nd roi_pooling_2d roi_average_align_2d
    spatial_pyramid_pooling_2d unpooling_1d unpooling_2d unpooling_nd upsampling_2d ]],
  -- Chainer's reference lists (chainer-api-v2.md §4) and the oracle name
  -- a few more
  inventory = words [[
    as_strided deformable_convolution_2d_sampler f1_score precision recall arctanh
    discriminative_margin_based_clustering_loss forget cholesky fft ifft ]],
}

local links = words [[
  Bias Bilinear ChildSumTreeLSTM Convolution1D Convolution2D Convolution3D ConvolutionND
  Deconvolution1D Deconvolution2D Deconvolution3D DeconvolutionND DeformableConvolution2D
  DepthwiseConvolution2D DilatedConvolution2D EmbedID GRU StatefulGRU StatelessGRU Highway Inception
  InceptionBN Linear LocalConvolution2D LSTM StatelessLSTM StatefulPeepholeLSTM StatefulMGU
  StatelessMGU MLPConvolution2D NaryTreeLSTM NStepLSTM NStepBiLSTM NStepGRU NStepBiGRU NStepRNNTanh
  NStepRNNReLU NStepBiRNNTanh NStepBiRNNReLU Scale BatchNormalization BatchRenormalization
  GroupNormalization LayerNormalization BinaryHierarchicalSoftmax BlackOut CRF1d
  SimplifiedDropconnect PReLU Maxout NegativeSampling Swish Classifier VGG16Layers VGG19Layers ResNet50Layers
  ResNet101Layers ResNet152Layers GoogLeNet ]]

local initializers = words [[
  Constant Zero One NaN Identity Normal LeCunNormal GlorotNormal HeNormal Orthogonal Uniform
  LeCunUniform GlorotUniform HeUniform generate_array ]]

local optimizers = words [[
  SGD MomentumSGD CorrectedMomentumSGD NesterovAG AdaGrad AdaDelta Adam AdaBound AMSGrad AdamW
  RMSprop RMSpropGraves SMORMS3 MSVAG ]]

local hooks = words [[ WeightDecay Lasso GradientClipping GradientHardClipping GradientNoise GradientLARS ]]

-- The names of `list` that `ns` lacks (kind: 'function' or anything callable).
local function missing(ns, list, callable)
  local out = {}
  for _, name in ipairs(list) do
    local v = ns[name]
    local ok = v ~= nil
    if ok and callable then
      local mt = type(v) == 'table' and getmetatable(v)
      ok = type(v) == 'function' or (mt and mt.__call ~= nil) or false
    end
    if not ok then out[#out + 1] = name end
  end
  return out
end

local function assert_none(what, miss)
  assert(#miss == 0, what .. ' missing: ' .. table.concat(miss, ', '))
end

describe('completeness', function()
  local families = { 'activation', 'array', 'connection', 'evaluation', 'loss', 'math', 'noise',
    'normalization', 'pooling' }
  for _, fam in ipairs(families) do
    it('F has every ' .. fam .. ' function', function()
      assert_none('F (' .. fam .. ')', missing(F, functions[fam], true))
    end)
  end

  -- names beyond the issue's list (once only reported, as pending, until
  -- as_strided and discriminative_margin_based_clustering_loss arrived)
  it('F has the further names of the API inventory', function()
    assert_none('F (API inventory)', missing(F, functions.inventory, true))
  end)

  it('F.repeat_ is also reachable as F["repeat"]', function()
    assert.are.equal(F.repeat_, F['repeat'])
  end)

  it('L has every link', function()
    assert_none('L', missing(L, links, true))
  end)

  it('chainer.initializers has every initializer', function()
    assert_none('chainer.initializers', missing(chainer.initializers, initializers, true))
  end)

  it('chainer.optimizers has every optimizer', function()
    assert_none('chainer.optimizers', missing(chainer.optimizers, optimizers, true))
  end)

  it('chainer.optimizer_hooks has every hook', function()
    assert_none('chainer.optimizer_hooks', missing(chainer.optimizer_hooks, hooks, true))
  end)

  it('every lower-case entry of F is a function', function()
    local bad = {}
    for k, v in pairs(require('chainer.functions._index').all()) do
      if type(k) == 'string' and k:match('^[a-z]') and type(v) ~= 'function' then bad[#bad + 1] = k end
    end
    table.sort(bad)
    assert_none('non-function F entries', bad)
  end)
end)
