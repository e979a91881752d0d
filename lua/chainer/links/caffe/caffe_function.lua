-- links/caffe/caffe_function.lua: chainer.links.caffe.CaffeFunction(model_path),
-- a Chain that runs a Caffe model read from a binary .caffemodel.
--
--   local func = CaffeFunction('bvlc_reference_caffenet.caffemodel')
--   local y = func{ inputs = { data = x }, outputs = { 'fc8' } }[1]
--
-- Every supported layer becomes a forward function (forwards[name]); layers
-- with parameters (Convolution, Deconvolution, InnerProduct, BatchNorm,
-- Scale) become child links under the layer's name, holding the model's
-- weights.  forward(inputs, outputs, disable) runs the layers in file order,
-- each one whose bottom blobs are all known, and returns the blobs named in
-- `outputs` as a Lua array.  Chainer 7.8.1's semantics (its caffe_function.py);
-- the differences are listed in docs/caffe.md.
local Chain = require('chainer.link').Chain
local F = require 'chainer.functions'
local T = require 'chainer.tensor'
local args = require 'chainer._args'
local net_reader = require 'chainer.links.caffe._net'

local CaffeFunction = Chain:extend('CaffeFunction')

-- Where warnings about skipped layers go (Chainer's warnings.warn); a spec
-- may swap it for a capture.
CaffeFunction.warnings = io.stderr

local list = net_reader.list

local function fail(layer, fmt, ...)
  args.fail(string.format("CaffeFunction: layer '%s' (%s): " .. fmt, layer.name, layer.type, ...), 4)
end

---------------------------------------------------------------------------
-- kernel, stride and pad as Chainer's _get_ksize / _get_stride / _get_pad
---------------------------------------------------------------------------
local function one_or_pair(values)
  if #values == 1 then return values[1] end
  return values
end

local function conv_ksize(layer)
  local p = layer.params
  if p.conv_kernel_h > 0 then return { tonumber(p.conv_kernel_h), tonumber(p.conv_kernel_w) } end
  local ks = list(p.conv_kernel_size, p.conv_nkernel_size)
  if #ks == 0 then fail(layer, 'no kernel size') end
  if #ks > 2 then fail(layer, 'only 2-D convolutions are supported (kernel_size has %d values)', #ks) end
  return one_or_pair(ks)
end

local function conv_stride(p)
  if p.conv_stride_h > 0 then return { tonumber(p.conv_stride_h), tonumber(p.conv_stride_w) } end
  local s = list(p.conv_stride, p.conv_nstride)
  if #s == 0 then return 1 end
  return one_or_pair(s)
end

local function conv_pad(p)
  if p.conv_pad_h > 0 or p.conv_pad_w > 0 then return { tonumber(p.conv_pad_h), tonumber(p.conv_pad_w) } end
  local s = list(p.conv_pad, p.conv_npad)
  if #s == 0 then return 0 end
  return one_or_pair(s)
end

local function conv_dilate(p)
  local d = list(p.conv_dilation, p.conv_ndilation)
  if #d == 0 then return 1 end
  return one_or_pair(d)
end

---------------------------------------------------------------------------
-- weights
---------------------------------------------------------------------------
-- A (rows, cols, kh, kw) weight that is block-diagonal over `group` groups
-- (Chainer's _ConvolutionBlob): group i's block is rows i*r/group.. of the
-- blob, placed at columns i*c/group..; the rest is zero.
local function block_diagonal(layer, blob, group, rows, cols)
  if rows % group ~= 0 or cols % group ~= 0 then
    fail(layer, 'group %d does not divide the weight shape (%d, %d)', group, rows, cols)
  end
  local s = blob.shape
  local part_r, part_c = rows / group, cols / group
  if s[1] ~= rows or s[2] ~= part_c then
    fail(layer, 'weight blob has shape (%s) but (%d, %d, kh, kw) was expected', table.concat(s, ', '), rows, part_c)
  end
  if group == 1 then return blob end
  local W = T.zeros({ rows, cols, s[3], s[4] }, 'float32')
  for g = 0, group - 1 do
    W:slice({ g * part_r, (g + 1) * part_r }, { g * part_c, (g + 1) * part_c })
      :copy_(blob:slice({ g * part_r, (g + 1) * part_r }))
  end
  return W
end

local function weight_4d(layer)
  local W = layer.blob(1)
  if W.ndim ~= 4 then fail(layer, 'the weight blob has %d dimensions (expected 4)', W.ndim) end
  return W
end

-- Height and width of an InnerProduct weight (Chainer's _get_height/_get_width).
local function matrix_dims(layer, W)
  local s = W.shape
  if #s == 2 then return s[1], s[2] end
  if #s == 4 then return s[3], s[4] end
  fail(layer, '%d-dimensional weight blobs are not supported', #s)
end

---------------------------------------------------------------------------
-- layer setups: each registers forwards[name] and the layer's blobs
---------------------------------------------------------------------------
local SETUP = {}

local function add_layer(self, layer)
  local bottom = {}
  for k, b in ipairs(layer.bottom) do bottom[k] = self.split_map[b] or b end
  local top = {}
  for k, t in ipairs(layer.top) do top[k] = t end
  self.layers[#self.layers + 1] = { layer.name, bottom, top }
end

local function add_child(self, layer, link)
  self:add_link(layer.name, link)
  local name = layer.name
  self.forwards[name] = function(...) return self[name](...) end
  add_layer(self, layer)
end

function SETUP.Concat(self, layer)
  local p = layer.params
  local axis = tonumber(p.concat_axis)
  if axis == 1 and p.concat_concat_dim ~= 1 then axis = tonumber(p.concat_concat_dim) end
  self.forwards[layer.name] = function(...) return F.concat({ ... }, axis) end
  add_layer(self, layer)
end

-- Convolution and Deconvolution: the blob is (num, channels, kh, kw); a
-- convolution maps channels * group inputs to num outputs, a deconvolution
-- num inputs to channels * group outputs.
local function setup_convolution(self, layer, deconv)
  local p = layer.params
  local blob = weight_4d(layer)
  local group = tonumber(p.conv_group)
  local num, wide = blob.shape[1], blob.shape[2] * group
  local n_in, n_out = wide, num
  if deconv then n_in, n_out = num, wide end
  local bias = p.conv_bias_term ~= 0
  local W = block_diagonal(layer, blob, group, num, wide)
  local b = bias and layer.blob(2):reshape({ n_out }) or nil
  local L = require 'chainer.links'
  local ksize, stride, pad, opts = conv_ksize(layer), conv_stride(p), conv_pad(p), { dilate = conv_dilate(p) }
  local link
  if deconv then
    link = L.Deconvolution2D(n_in, n_out, ksize, stride, pad, not bias, nil, W, b, opts)
  else
    link = L.Convolution2D(n_in, n_out, ksize, stride, pad, not bias, W, b, opts)
  end
  add_child(self, layer, link)
end

function SETUP.Convolution(self, layer) setup_convolution(self, layer, false) end
function SETUP.Deconvolution(self, layer) setup_convolution(self, layer, true) end

-- Data layers are skipped silently, as in Chainer.
function SETUP.Data() end

function SETUP.Dropout(self, layer)
  local ratio = tonumber(layer.params.dropout_ratio)
  self.forwards[layer.name] = function(x) return F.dropout(x, ratio) end
  add_layer(self, layer)
end

function SETUP.InnerProduct(self, layer)
  local p = layer.params
  if p.ip_axis ~= 1 then fail(layer, 'Non-default axis in InnerProduct is not supported') end
  local W = layer.blob(1)
  local height, width = matrix_dims(layer, W)
  W = W:reshape({ height, width })
  -- transpose = true stores the weight as (in, out)
  if p.ip_transpose ~= 0 then W, height, width = W:transpose():contiguous(), width, height end
  local bias = p.ip_bias_term ~= 0
  local b = bias and layer.blob(2):reshape({ height }) or nil
  add_child(self, layer, require('chainer.links').Linear(width, height, not bias, W, b))
end

function SETUP.LRN(self, layer)
  local p = layer.params
  if p.lrn_norm_region ~= 0 then fail(layer, 'Within-channel LRN is not supported') end
  local n = tonumber(p.lrn_local_size)
  local opts = { n = n, k = tonumber(p.lrn_k), alpha = tonumber(p.lrn_alpha) / n, beta = tonumber(p.lrn_beta) }
  self.forwards[layer.name] = function(x) return F.local_response_normalization(x, opts) end
  add_layer(self, layer)
end

function SETUP.Pooling(self, layer)
  local p = layer.params
  local ksize
  if p.pool_kernel_h > 0 then
    ksize = { tonumber(p.pool_kernel_h), tonumber(p.pool_kernel_w) }
  else
    ksize = tonumber(p.pool_kernel_size)
  end
  local stride = tonumber(p.pool_stride)
  if p.pool_stride_h > 0 then stride = { tonumber(p.pool_stride_h), tonumber(p.pool_stride_w) } end
  local pad = tonumber(p.pool_pad)
  if p.pool_pad_h > 0 or p.pool_pad_w > 0 then pad = { tonumber(p.pool_pad_h), tonumber(p.pool_pad_w) } end
  local pool
  if p.pool_method == 0 then
    pool = F.max_pooling_2d
  elseif p.pool_method == 1 then
    pool = F.average_pooling_2d
  else
    fail(layer, 'Stochastic pooling is not supported')
  end
  local opts = { stride = stride, pad = pad }
  if p.pool_global_pooling ~= 0 and ksize == 0 then
    -- the window covers the whole input map, whatever its size
    self.forwards[layer.name] = function(x)
      local s = x.shape
      return pool(x, { s[3], s[4] }, opts)
    end
  else
    if ksize == 0 then fail(layer, 'no kernel size (and global_pooling is off)') end
    self.forwards[layer.name] = function(x) return pool(x, ksize, opts) end
  end
  add_layer(self, layer)
end

function SETUP.ReLU(self, layer)
  local slope = tonumber(layer.params.relu_negative_slope)
  if slope ~= 0 then
    self.forwards[layer.name] = function(x) return F.leaky_relu(x, slope) end
  else
    self.forwards[layer.name] = function(x) return F.relu(x) end
  end
  add_layer(self, layer)
end

function SETUP.Reshape(self, layer)
  local p = layer.params
  if p.reshape_axis ~= 0 or p.reshape_num_axes ~= -1 then
    fail(layer, 'Reshape with axis or num_axes is not supported')
  end
  local dims = list(p.reshape_dim, p.reshape_ndim)
  self.forwards[layer.name] = function(x)
    -- Caffe's 0 copies the input's dimension at that position
    local shape, s = {}, x.shape
    for k, d in ipairs(dims) do shape[k] = d == 0 and s[k] or d end
    return F.reshape(x, shape)
  end
  add_layer(self, layer)
end

function SETUP.BatchNorm(self, layer)
  local p = layer.params
  local mean, var = layer.blob(1), layer.blob(2)
  local size = mean.size
  local link = require('chainer.links').BatchNormalization(size, tonumber(p.bn_moving_average_fraction),
    tonumber(p.bn_eps), nil, false, false)
  mean, var = mean:reshape({ size }), var:reshape({ size })
  -- a third blob scales the running averages (Caffe keeps them unnormalised);
  -- Caffe reads a factor of 0 as 0
  if layer.nblobs >= 3 then
    local factor = layer.blob(3):reshape({ -1 }):slice(0):item()
    local inv = factor == 0 and 0 or 1 / factor
    mean, var = mean * inv, var * inv
  end
  link.avg_mean:copy_(mean)
  link.avg_var:copy_(var)
  self:add_link(layer.name, link)
  local name = layer.name
  if p.bn_use_global_stats ~= 0 then
    self.forwards[name] = function(x)
      return require('chainer').using_config('train', false, function() return self[name](x, { finetune = false }) end)
    end
  else
    self.forwards[name] = function(x) return self[name](x, { finetune = false }) end
  end
  add_layer(self, layer)
end

-- Eltwise's operations: PROD, SUM, MAX folded over the inputs.
local ELTWISE = {
  [0] = function(a, b) return a * b end,
  [1] = function(a, b) return a + b end,
  [2] = function(a, b) return F.maximum(a, b) end,
}

function SETUP.Eltwise(self, layer)
  local p = layer.params
  local combine = ELTWISE[tonumber(p.eltwise_operation)]
  if combine == nil then fail(layer, 'invalid EltwiseOp value %d', tonumber(p.eltwise_operation)) end
  -- SUM's coefficients weigh the inputs
  local coeffs = p.eltwise_operation == 1 and p.eltwise_ncoeff > 0 and list(p.eltwise_coeff, p.eltwise_ncoeff) or nil
  self.forwards[layer.name] = function(...)
    local xs = { ... }
    if coeffs then
      if #coeffs ~= #xs then fail(layer, '%d coefficients for %d inputs', #coeffs, #xs) end
      for k = 1, #xs do xs[k] = xs[k] * coeffs[k] end
    end
    local y = xs[1]
    for k = 2, #xs do y = combine(y, xs[k]) end
    return y
  end
  add_layer(self, layer)
end

function SETUP.Scale(self, layer)
  local p = layer.params
  local axis = tonumber(p.scale_axis)
  local bias = p.scale_bias_term ~= 0
  local L = require('chainer.links')
  local link
  if #layer.bottom == 1 then
    local W = layer.blob(1)
    link = L.Scale(axis, W.shape, bias, nil, W, bias and layer.blob(2):reshape(W.shape) or nil)
  else
    local b = bias and layer.blob(1) or nil
    link = L.Scale(axis, nil, bias, b and b.shape or nil, nil, b)
  end
  add_child(self, layer, link)
end

function SETUP.Slice(self, layer)
  local p = layer.params
  local axis = 1
  if p.slice_has_axis ~= 0 then
    axis = tonumber(p.slice_axis)
  elseif p.slice_has_slice_dim ~= 0 then
    axis = tonumber(p.slice_slice_dim)
  end
  local points = list(p.slice_point, p.slice_npoint)
  local how = #points > 0 and points or #layer.top
  self.forwards[layer.name] = function(x) return F.split_axis(x, how, axis) end
  add_layer(self, layer)
end

function SETUP.Softmax(self, layer)
  if layer.params.softmax_axis ~= 1 then fail(layer, 'Softmax along non-channel axis is not supported') end
  self.forwards[layer.name] = function(x) return F.softmax(x) end
  add_layer(self, layer)
end

function SETUP.Sigmoid(self, layer)
  self.forwards[layer.name] = function(x) return F.sigmoid(x) end
  add_layer(self, layer)
end

function SETUP.SoftmaxWithLoss(self, layer)
  if layer.params.softmax_axis ~= 1 then fail(layer, 'Softmax along non-channel axis is not supported') end
  self.forwards[layer.name] = function(x, t) return F.softmax_cross_entropy(x, t) end
  add_layer(self, layer)
end

function SETUP.Split(self, layer)
  for _, top in ipairs(layer.top) do self.split_map[top] = layer.bottom[1] end
end

CaffeFunction.supported_types = {}
for k in pairs(SETUP) do CaffeFunction.supported_types[#CaffeFunction.supported_types + 1] = k end
table.sort(CaffeFunction.supported_types)

---------------------------------------------------------------------------
-- construction and forward
---------------------------------------------------------------------------
function CaffeFunction:init(model_path)
  local net = net_reader.open(model_path)
  self.forwards = {}
  self.split_map = {}
  self.layers = {}
  for _, layer in ipairs(net.layers) do
    local setup = SETUP[layer.type]
    if setup then
      setup(self, layer)
    elseif net.v1 then
      CaffeFunction.warnings:write(string.format('CaffeFunction: skip the layer "%s", since CaffeFunction does ' ..
        'not support it\n', layer.name))
    else
      CaffeFunction.warnings:write(string.format('CaffeFunction: skip the layer "%s", since CaffeFunction does ' ..
        'not support %s layer\n', layer.name, layer.type))
    end
  end
end

local SIGNATURE = args.signature({ 'inputs', 'outputs', 'disable' }, { 'train' })

local function is_list(v) return type(v) == 'table' and getmetatable(v) == nil end

-- forward(inputs, outputs, disable) or forward{inputs =, outputs =, disable =}:
-- inputs a table blob name -> Variable or tensor, outputs a Lua array of blob
-- names, disable a Lua array of layer names to leave out.
function CaffeFunction:forward(...)
  local a = args.parse('CaffeFunction', SIGNATURE, select('#', ...), ...)
  if a.train ~= nil then
    args.fail('CaffeFunction: train argument is not supported anymore. Use chainer.using_config', 2)
  end
  if not is_list(a.inputs) then
    args.fail(string.format('CaffeFunction: inputs must be a table blob name -> Variable (got %s)',
      type(a.inputs)), 2)
  end
  if not is_list(a.outputs) then
    args.fail(string.format('CaffeFunction: outputs must be a Lua array of blob names (got %s)', type(a.outputs)), 2)
  end
  local disabled = {}
  for _, name in ipairs(a.disable or {}) do disabled[name] = true end
  local variables = {}
  for k, v in pairs(a.inputs) do variables[k] = v end
  for _, entry in ipairs(self.layers) do
    local name, bottom, top = entry[1], entry[2], entry[3]
    local fn = self.forwards[name]
    local ready = fn ~= nil and not disabled[name]
    if ready then
      for _, b in ipairs(bottom) do
        if variables[b] == nil then ready = false break end
      end
    end
    if ready then
      local xs = {}
      for k, b in ipairs(bottom) do xs[k] = variables[b] end
      local out = fn(unpack(xs, 1, #bottom))
      if not is_list(out) then out = { out } end
      for k, t in ipairs(top) do variables[t] = out[k] end
    end
  end
  self.variables = variables
  local results = {}
  for k, name in ipairs(a.outputs) do
    local v = variables[name]
    if v == nil then
      args.fail(string.format("CaffeFunction: blob '%s' was not computed (its layers are missing, disabled, or " ..
        'lack inputs)', tostring(name)), 2)
    end
    results[k] = v
  end
  return results
end

return { CaffeFunction = CaffeFunction }
