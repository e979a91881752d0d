-- chainer.links: every constructor and every call that takes options rejects
-- an unknown (e.g. misspelled) key, naming the link and the key; and
-- links/ keeps one public link class per file, as Chainer's chainer/links.
local chainer = require 'chainer'
local T = chainer.tensor
local L = chainer.links
local F = chainer.functions
local class = require 'chainer.class'
local Link = require('chainer.link').Link

local function unknown_option_error(fn, key)
  return string.format("%s: unknown option '%s' (accepted: ", fn, key)
end

local function assert_rejects(fn, key, call)
  local ok, err = pcall(call)
  assert.is_false(ok, fn .. ' accepted the unknown option ' .. key)
  local want = unknown_option_error(fn, key)
  assert.is_truthy(tostring(err):find(want, 1, true),
    string.format('expected an error starting %q, got %q', want, tostring(err)))
end

---------------------------------------------------------------------------
-- constructors: {class name, Chainer's positional arguments (n = count,
-- nil allowed), a misspelled key}; the options table comes last.
---------------------------------------------------------------------------
local constructors = {
  { 'Linear', { 3, 4, n = 2 }, 'outsize' },
  { 'Convolution1D', { 3, 2, 3, n = 3 }, 'strides' },
  { 'Convolution2D', { 3, 2, 3, n = 3 }, 'dilation' },
  { 'Convolution3D', { 3, 2, 3, n = 3 }, 'padding' },
  { 'ConvolutionND', { 2, 3, 2, 3, n = 4 }, 'group' },
  { 'DilatedConvolution2D', { 3, 2, 3, n = 3 }, 'dilation' },
  { 'DepthwiseConvolution2D', { 3, 2, 3, n = 3 }, 'multiplier' },
  { 'Deconvolution1D', { 3, 2, 3, n = 3 }, 'out_size' },
  { 'Deconvolution2D', { 3, 2, 3, n = 3 }, 'out_size' },
  { 'Deconvolution3D', { 3, 2, 3, n = 3 }, 'out_size' },
  { 'DeconvolutionND', { 2, 3, 2, 3, n = 4 }, 'out_size' },
  { 'EmbedID', { 10, 3, n = 2 }, 'ignore_labels' },
  { 'Bias', { 1, { 2 }, n = 2 }, 'initial_b' },
  { 'Scale', { 1, { 2 }, n = 2 }, 'initial_W' },
  { 'Bilinear', { 2, 3, 4, n = 3 }, 'no_bias' },
  { 'Parameter', { T.zeros({ 2 }), n = 1 }, 'volatile' },
  { 'Highway', { 2, n = 1 }, 'activation' },
  { 'Inception', { 3, 2, 2, 3, 2, 4, 1, n = 7 }, 'initialW' },
  { 'InceptionBN', { 3, 2, 2, 3, 2, 4, 'avg', 1, n = 8 }, 'pool_type' },
  { 'MLPConvolution2D', { 3, { 4, 5 }, 3, n = 3 }, 'activate' },
  { 'LocalConvolution2D', { 3, 2, { 5, 5 }, 3, n = 4 }, 'insize' },
  { 'DeformableConvolution2D', { 2, 3, 3, n = 3 }, 'offset_initial_W' },
  { 'DeformableConvolution2DSampler', { 2, 3, 3, n = 3 }, 'initial_W' },
  { 'BatchNormalization', { 3, n = 1 }, 'use_gama' },
  { 'BatchRenormalization', { 3, n = 1 }, 'r_max' },
  { 'LayerNormalization', { 3, n = 1 }, 'epsilon' },
  { 'GroupNormalization', { 2, 4, n = 2 }, 'epsilon' },
  { 'DecorrelatedBatchNormalization', { 4, 2, n = 2 }, 'group' },
  { 'LSTM', { 3, 2, n = 2 }, 'forget_bias' },
  { 'StatelessLSTM', { 3, 2, n = 2 }, 'lateral_initW' },
  { 'StatefulPeepholeLSTM', { 3, 2, n = 2 }, 'peephole' },
  { 'StatefulZoneoutLSTM', { 3, 2, n = 2 }, 'ratio' },
  { 'StatelessGRU', { 3, 2, n = 2 }, 'initW' },
  { 'StatefulGRU', { 3, 2, n = 2 }, 'inner_initW' },
  { 'GRU', { 3, 2, n = 2 }, 'bias' },
  { 'StatelessMGU', { 3, 2, n = 2 }, 'init' },
  { 'StatefulMGU', { 3, 2, n = 2 }, 'init' },
  { 'NStepLSTM', { 1, 3, 4, 0, n = 4 }, 'initial_W' },
  { 'NStepBiLSTM', { 1, 3, 4, 0, n = 4 }, 'initial_W' },
  { 'NStepGRU', { 1, 3, 4, 0, n = 4 }, 'activation' },
  { 'NStepBiGRU', { 1, 3, 4, 0, n = 4 }, 'activation' },
  { 'NStepRNNTanh', { 1, 3, 4, 0, n = 4 }, 'activation' },
  { 'NStepRNNReLU', { 1, 3, 4, 0, n = 4 }, 'dropout_ratio' },
  { 'NStepBiRNNTanh', { 1, 3, 4, 0, n = 4 }, 'use_bi_direction' },
  { 'NStepBiRNNReLU', { 1, 3, 4, 0, n = 4 }, 'initialb' },
  { 'ChildSumTreeLSTM', { 3, 2, n = 2 }, 'n_ary' },
  { 'NaryTreeLSTM', { 3, 2, n = 2 }, 'nary' },
  { 'PReLU', { n = 0 }, 'initial' },
  { 'Maxout', { 2, 3, 2, n = 3 }, 'poolsize' },
  { 'Swish', { { 3 }, n = 1 }, 'beta' },
  { 'SimplifiedDropconnect', { 3, 2, n = 2 }, 'dropout' },
  { 'CRF1d', { 3, n = 1 }, 'initial_costs' },
  { 'NegativeSampling', { 3, { 1, 2, 3 }, 2, n = 3 }, 'powr' },
  { 'BlackOut', { 3, { 1, 2, 3 }, 2, n = 3 }, 'power' },
  { 'BinaryHierarchicalSoftmax', { 3, { { 0, 1 }, 2 }, n = 2 }, 'trees' },
  { 'Classifier', { function(y) return y end, n = 1 }, 'label' },
  { 'BuildingBlock', { 2, 4, 2, 8, 2, n = 5 }, 'downsample' },
  { 'BottleneckA', { 4, 2, 8, n = 3 }, 'downsample' },
  { 'BottleneckB', { 4, 2, n = 2 }, 'initial_W' },
  { 'VGG16Layers', { n = 0 }, 'pretrained' },
  { 'VGG19Layers', { n = 0 }, 'initialw' },
  { 'ResNetLayers', { 50, n = 1 }, 'pretrained' },
  { 'ResNet50Layers', { n = 0 }, 'downsample' },
  { 'ResNet101Layers', { n = 0 }, 'pretrained' },
  { 'ResNet152Layers', { n = 0 }, 'initial_W' },
  { 'GoogLeNet', { n = 0 }, 'initial_bias' },
}

describe('chainer.links: an unknown constructor option', function()
  for _, row in ipairs(constructors) do
    local name, positional, key = row[1], row[2], row[3]
    it('is an error naming L.' .. name .. ' and ' .. key, function()
      local call_args = { unpack(positional, 1, positional.n) }
      call_args[positional.n + 1] = { [key] = 1 }
      assert_rejects('L.' .. name, key, function() return L[name](unpack(call_args, 1, positional.n + 1)) end)
    end)
  end

  it('has a row for every link of L', function()
    local rows = {}
    for _, row in ipairs(constructors) do rows[row[1]] = true end
    local missing = {}
    for k, v in pairs(require('chainer.links._index').all()) do
      if type(v) == 'table' and class.issubclass(v, Link) and not rows[k] then missing[#missing + 1] = k end
    end
    table.sort(missing)
    assert.same({}, missing)
  end)
end)

---------------------------------------------------------------------------
-- calls that take options: {what, call with a misspelled key, L.name, key}
---------------------------------------------------------------------------
describe('chainer.links: an unknown option of a call', function()
  local x = T.ones({ 2, 3 })
  local resnet
  local function model()
    resnet = resnet or L.ResNet50Layers { initialW = 0 }
    return resnet
  end
  local calls = {
    { 'Linear', function() return L.Linear(3, 2)(x, { n_batch_axis = 1 }) end, 'n_batch_axis' },
    { 'BatchNormalization', function() return L.BatchNormalization(3)(x, { fine_tune = true }) end, 'fine_tune' },
    { 'BatchRenormalization', function() return L.BatchRenormalization(3)(x, { fine_tune = true }) end,
      'fine_tune' },
    { 'SimplifiedDropconnect', function() return L.SimplifiedDropconnect(3, 2)(x, { trian = false }) end, 'trian' },
    { 'CRF1d', function()
      return L.CRF1d(3)({ x }, { T.array({ 0, 1 }, 'int32') }, { reduction = 'sum' })
    end, 'reduction' },
    { 'NegativeSampling', function()
      return L.NegativeSampling(3, { 1, 2, 3 }, 2)(x, T.array({ 0, 1 }, 'int32'), { reduc = 'no' })
    end, 'reduc' },
    { 'ResNet50Layers', function() return model()(T.zeros({ 1, 3, 32, 32 }), { layer = { 'prob' } }) end, 'layer' },
    { 'ResNet50Layers:extract', function() return model():extract({ T.zeros({ 8, 8, 3 }) }, { layer = { 'pool5' } }) end,
      'layer' },
    { 'ResNet50Layers:predict', function() return model():predict({ T.zeros({ 8, 8, 3 }) }, { oversampling = false }) end,
      'oversampling' },
  }
  for _, row in ipairs(calls) do
    local name, call, key = row[1], row[2], row[3]
    it('is an error naming L.' .. name .. ' and ' .. key, function()
      assert_rejects('L.' .. name, key, call)
    end)
  end

  it('leaves the correctly spelled options working', function()
    local l = L.Linear(3, 2)
    assert.same({ 2, 2 }, l(x, { n_batch_axes = 1 }).shape)
    local sd = L.SimplifiedDropconnect(3, 2)
    assert.same({ 2, 2 }, sd(x, { train = false }).shape)
    assert.same({ 2, 2 }, sd(x, false).shape)
  end)
end)

---------------------------------------------------------------------------
-- one public link class per file
---------------------------------------------------------------------------
-- Files that hold more than one public class, each with Chainer's reason:
-- a base link and its thin variants sharing the base's file as Chainer does.
local shared_files = {
  ['connection/convolution_nd.lua'] = { classes = { 'Convolution1D', 'Convolution3D', 'ConvolutionND' },
    reason = "Chainer's connection/convolution_nd.py: Convolution1D/3D are ConvolutionND with ndim fixed" },
  ['connection/deconvolution_nd.lua'] = { classes = { 'Deconvolution1D', 'Deconvolution3D', 'DeconvolutionND' },
    reason = "Chainer's connection/deconvolution_nd.py: Deconvolution1D/3D are DeconvolutionND with ndim fixed" },
  ['rnn/lstm.lua'] = { classes = { 'LSTM', 'StatelessLSTM' },
    reason = "Chainer's rnn/lstm.py: LSTMBase with its stateful and stateless forwards" },
  ['rnn/gru.lua'] = { classes = { 'GRU', 'StatefulGRU', 'StatelessGRU' },
    reason = "Chainer's rnn/gru.py: GRUBase with its stateful and stateless forwards; GRU is StatefulGRU" },
  ['rnn/mgu.lua'] = { classes = { 'StatefulMGU', 'StatelessMGU' },
    reason = "Chainer's rnn/mgu.py: MGUBase with its stateful and stateless forwards" },
  ['rnn/n_step_rnn.lua'] = { classes = { 'NStepBiRNNReLU', 'NStepBiRNNTanh', 'NStepRNNReLU', 'NStepRNNTanh' },
    reason = "Chainer's rnn/n_step_rnn.py: NStepRNNBase with activation and direction fixed" },
  ['rnn/n_step_lstm.lua'] = { classes = { 'NStepBiLSTM', 'NStepLSTM' },
    reason = "Chainer's rnn/n_step_lstm.py: one and both directions" },
  ['rnn/n_step_gru.lua'] = { classes = { 'NStepBiGRU', 'NStepGRU' },
    reason = "Chainer's rnn/n_step_gru.py: one and both directions" },
  ['model/vision/vgg.lua'] = { classes = { 'VGG16Layers', 'VGG19Layers' },
    reason = "Chainer's model/vision/vgg.py: VGGLayers with n_layers 16 or 19" },
  ['model/vision/resnet.lua'] = { classes = { 'ResNet101Layers', 'ResNet152Layers', 'ResNet50Layers', 'ResNetLayers' },
    reason = "Chainer's model/vision/resnet.py: ResNetLayers with n_layers fixed" },
}

local ROOT = 'lua/chainer/links/'

local function link_files()
  local p = assert(io.popen("cd '" .. ROOT .. "' && find . -name '*.lua' | sort"))
  local files = {}
  for line in p:lines() do files[#files + 1] = line:gsub('^%./', '') end
  p:close()
  return files
end

-- The public link classes a file's module returns, sorted.
local function public_classes(file)
  local mod = require('chainer.links.' .. file:gsub('%.lua$', ''):gsub('/', '.'))
  local names = {}
  if type(mod) == 'table' then
    for k, v in pairs(mod) do
      if type(k) == 'string' and k:sub(1, 1) ~= '_' and type(v) == 'table' and class.issubclass(v, Link) then
        names[#names + 1] = k
      end
    end
  end
  table.sort(names)
  return names
end

describe('chainer.links: one concept per file', function()
  local files = link_files()

  it('finds the link files', function()
    assert.is_true(#files > 40)
  end)

  it('no file defines more than one public class, except the listed ones (as Chainer)', function()
    for _, file in ipairs(files) do
      if file ~= 'init.lua' and file ~= '_util.lua' then
        local names = public_classes(file)
        local shared = shared_files[file]
        if shared then
          assert.is_string(shared.reason)
          assert.same(shared.classes, names, file .. ': the allow-list is out of date')
        else
          assert.is_true(#names <= 1, file .. ' defines ' .. table.concat(names, ', '))
        end
      end
    end
  end)

  it('every class of L comes from exactly one file', function()
    local seen = {}
    for _, file in ipairs(files) do
      -- index files only re-export; caffe/ is Chainer's chainer.links.caffe namespace (L.caffe)
      if not file:match('init%.lua$') and file ~= '_util.lua' then
        local namespace = file:match('^caffe/') and L.caffe or L
        for _, n in ipairs(public_classes(file)) do
          assert.is_nil(seen[n], n .. ' is defined in ' .. tostring(seen[n]) .. ' and ' .. file)
          seen[n] = file
          assert.equal(namespace[n], require('chainer.links.' .. file:gsub('%.lua$', ''):gsub('/', '.'))[n])
        end
      end
    end
    for k, v in pairs(require('chainer.links._index').all()) do
      if type(v) == 'table' and class.issubclass(v, Link) then
        assert.is_string(seen[k], 'L.' .. k .. ' comes from no link file')
      end
    end
  end)
end)
