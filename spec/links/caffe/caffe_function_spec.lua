-- Specs for chainer.links.caffe.CaffeFunction.  The .caffemodel files are
-- written here by an independent protobuf encoder (pb_writer.lua) from known
-- weights; every output is compared with the same network built from
-- chainlua's own links and functions (grouped convolution through the
-- `groups` option, batch normalisation and scaling written out by hand).
local chainer = require 'chainer'
local T = chainer.tensor
local F = chainer.functions
local L = chainer.links
local PB = require 'spec.links.caffe.pb_writer'
local H = require 'helpers'

local available = require('chainer.links.caffe._net').available()

-- Caffe field numbers (runtime/io/caffe.proto).
local CONV, POOL, IP, LRN, RELU, DROP, ELT, CAT, SMAX = 106, 121, 117, 118, 123, 108, 110, 104, 125
local BN, SCALE, RESHAPE, SLICE = 139, 142, 133, 126
local V1 = { CONVOLUTION = 4, RELU = 18, POOLING = 17, INNER_PRODUCT = 14, SOFTMAX = 20, DATA = 5, TANH = 23 }

local function rand(shape, seed)
  T.random.seed(seed)
  return T.random.uniform(-1, 1, shape, 'float32')
end

local dir
setup(function() dir = H.tmpdir() end)
teardown(function() H.rmdir(dir) end)

-- Runs fn with CaffeFunction's warnings captured; returns them.
local function capture_warnings(fn)
  local CF = L.caffe.CaffeFunction
  local saved, lines = CF.warnings, {}
  CF.warnings = { write = function(_, s) lines[#lines + 1] = s end }
  local ok, err = pcall(fn)
  CF.warnings = saved
  if not ok then error(err, 0) end
  return table.concat(lines)
end

if not available then
  describe('CaffeFunction without protobuf-c', function()
    it('says what to install', function()
      H.errors_with(function() L.caffe.CaffeFunction(dir .. '/x.caffemodel') end, 'protobuf-c-compiler',
        'libprotobuf-c-dev')
    end)
    pending('the model specs need a build with protobuf-c (scripts/install-deps)')
  end)
  return
end

describe('CaffeFunction (layer form)', function()
  local x = rand({ 2, 4, 6, 6 }, 1)
  local W1, b1 = rand({ 6, 2, 3, 3 }, 2), rand({ 6 }, 3)
  local W2, b2 = rand({ 5, 54 }, 4), rand({ 5 }, 5)
  local path

  setup(function()
    path = dir .. '/net1.caffemodel'
    PB.write(path, PB.net('net1', {
      { name = 'data', type = 'Data', top = { 'data' } },
      { name = 'conv1', type = 'Convolution', bottom = { 'data' }, top = { 'conv1' },
        blobs = { PB.tensor_blob(W1), PB.tensor_blob(b1) },
        params = { { CONV, PB.uint(1, 6) .. PB.uint(4, 3) .. PB.uint(3, 1) .. PB.uint(6, 1) .. PB.uint(5, 2) } } },
      { name = 'relu1', type = 'ReLU', bottom = { 'conv1' }, top = { 'conv1' } },
      { name = 'split', type = 'Split', bottom = { 'conv1' }, top = { 'conv1_a', 'conv1_b' } },
      { name = 'pool1', type = 'Pooling', bottom = { 'conv1_a' }, top = { 'pool1' },
        params = { { POOL, PB.uint(1, 0) .. PB.uint(2, 3) .. PB.uint(3, 2) } } },
      { name = 'pool2', type = 'Pooling', bottom = { 'conv1_b' }, top = { 'pool2' },
        params = { { POOL, PB.uint(1, 1) .. PB.bool(12, true) } } },
      { name = 'norm1', type = 'LRN', bottom = { 'pool1' }, top = { 'norm1' },
        params = { { LRN, PB.uint(1, 3) .. PB.float(2, 0.3) .. PB.float(3, 0.75) .. PB.float(5, 2) } } },
      { name = 'fc', type = 'InnerProduct', bottom = { 'norm1' }, top = { 'fc' },
        blobs = { PB.tensor_blob(W2), PB.tensor_blob(b2) }, params = { { IP, PB.uint(1, 5) } } },
      { name = 'prob', type = 'Softmax', bottom = { 'fc' }, top = { 'prob' } },
      { name = 'acc', type = 'Accuracy', bottom = { 'prob', 'label' }, top = { 'acc' } },
    }))
  end)

  -- The same network from chainlua's own links.
  local function reference(relu)
    local conv = L.Convolution2D(4, 6, 3, 1, 1, false, W1, b1, { groups = 2 })
    local h = conv(x)
    if relu ~= false then h = F.relu(h) end
    local p1 = F.max_pooling_2d(h, 3, { stride = 2 })          -- Caffe rounds up: cover_all
    local p2 = F.average_pooling_2d(h, { 6, 6 }, { stride = 1 })
    -- Caffe's LRN divides alpha by local_size
    local n1 = F.local_response_normalization(p1, { n = 3, k = 2, alpha = 0.3 / 3, beta = 0.75 })
    local fc = L.Linear(54, 5, false, W2, b2)(n1)
    return { prob = F.softmax(fc), pool2 = p2, fc = fc }
  end

  it('computes what the same network built from links computes', function()
    local func
    local warned = capture_warnings(function() func = L.caffe.CaffeFunction(path) end)
    assert.truthy(warned:find('skip the layer "acc", since CaffeFunction does not support Accuracy layer', 1, true))
    assert.falsy(warned:find('"data"', 1, true))   -- data layers are skipped silently
    local ys = func { inputs = { data = x }, outputs = { 'prob', 'pool2', 'fc' } }
    local ref = reference()
    assert.equal(3, #ys)
    assert.same({ 2, 5 }, ys[1].shape)
    assert.same({ 2, 6, 1, 1 }, ys[2].shape)
    H.close(ys[1], ref.prob, 1e-5)
    H.close(ys[2], ref.pool2, 1e-5)
    H.close(ys[3], ref.fc, 1e-5)
    -- positional arguments work too, and layers can be disabled
    local no_relu = func({ data = x }, { 'fc' }, { 'relu1' })[1]
    H.close(no_relu, reference(false).fc, 1e-5)
  end)

  it('keeps the weights as child links and backpropagates into them', function()
    local func
    capture_warnings(function() func = L.caffe.CaffeFunction(path) end)
    -- grouped weights are stored block-diagonal (Chainer's layout)
    local W = func.conv1.W.array
    assert.same({ 6, 4, 3, 3 }, W.shape)
    H.close(W:slice({ 0, 3 }, { 0, 2 }), W1:slice({ 0, 3 }), 0)
    H.close(W:slice({ 3, 6 }, { 2, 4 }), W1:slice({ 3, 6 }), 0)
    assert.equal(0, T.abs(W:slice({ 0, 3 }, { 2, 4 })):sum():item())
    assert.same({ 5, 54 }, func.fc.W.shape)
    local y = func { inputs = { data = chainer.Variable(x) }, outputs = { 'fc' } }[1]
    F.sum(y):backward()
    assert.is_not_nil(func.fc.W.grad)
    assert.is_not_nil(func.conv1.b.grad)
    assert.equal('function', type(func.forwards.prob))
    assert.same({ 'conv1', { 'data' }, { 'conv1' } }, func.layers[1])
    assert.same({ 'pool1', { 'conv1' }, { 'pool1' } }, func.layers[3])   -- Split tops map to its bottom
  end)

  it('reports bad calls', function()
    local func
    capture_warnings(function() func = L.caffe.CaffeFunction(path) end)
    H.errors_with(function() func { inputs = { data = x }, outputs = { 'nope' } } end, "blob 'nope' was not computed")
    H.errors_with(function() func { inputs = { data = x }, outputs = { 'fc' }, train = false } end,
      'train argument is not supported anymore', 'using_config')
    H.errors_with(function() func { inputs = { data = x }, output = { 'fc' } } end, "unknown option 'output'")
    H.errors_with(function() func { inputs = x, outputs = { 'fc' } } end, 'inputs must be a table')
  end)
end)

describe('CaffeFunction (more layer types)', function()
  local x = rand({ 2, 3, 4, 4 }, 11)
  local Wd, bd = rand({ 3, 4, 2, 2 }, 12), rand({ 4 }, 13)
  local mean, var = rand({ 4 }, 14), T.random.uniform(0.5, 1.5, { 4 }, 'float32')
  local gamma, beta = rand({ 4 }, 15), rand({ 4 }, 16)
  local label = T.array({ 3, 100 }, 'int32')
  local path

  setup(function()
    path = dir .. '/net2.caffemodel'
    PB.write(path, PB.net('net2', {
      { name = 'dc', type = 'Deconvolution', bottom = { 'data' }, top = { 'dc' },
        blobs = { PB.tensor_blob(Wd), PB.tensor_blob(bd) },
        params = { { CONV, PB.uint(1, 4) .. PB.uint(4, 2) .. PB.uint(6, 2) } } },
      { name = 'bn', type = 'BatchNorm', bottom = { 'dc' }, top = { 'bn' },
        blobs = { PB.tensor_blob(mean * 2), PB.tensor_blob(var * 2), PB.blob({ shape = { 1 }, data = { 2 } }) },
        params = { { BN, PB.bool(1, true) .. PB.float(3, 1e-3) } } },
      { name = 'sc', type = 'Scale', bottom = { 'bn' }, top = { 'sc' },
        blobs = { PB.tensor_blob(gamma), PB.tensor_blob(beta) }, params = { { SCALE, PB.bool(4, true) } } },
      { name = 'lrelu', type = 'ReLU', bottom = { 'sc' }, top = { 'lr' }, params = { { RELU, PB.float(1, 0.25) } } },
      { name = 'sl', type = 'Slice', bottom = { 'lr' }, top = { 's1', 's2' },
        params = { { SLICE, PB.uint(3, 1) .. PB.uint(2, 2) } } },
      { name = 'sum', type = 'Eltwise', bottom = { 's1', 's2' }, top = { 'sum' },
        params = { { ELT, PB.uint(1, 1) .. PB.float(2, 0.5) .. PB.float(2, 2) } } },
      { name = 'prod', type = 'Eltwise', bottom = { 's1', 's2' }, top = { 'prod' }, params = { { ELT, PB.uint(1, 0) } } },
      { name = 'max', type = 'Eltwise', bottom = { 's1', 's2' }, top = { 'max' }, params = { { ELT, PB.uint(1, 2) } } },
      { name = 'cat', type = 'Concat', bottom = { 'sum', 'prod', 'max' }, top = { 'cat' },
        params = { { CAT, PB.uint(2, 1) } } },
      { name = 'drop', type = 'Dropout', bottom = { 'cat' }, top = { 'cat' }, params = { { DROP, PB.float(1, 0.3) } } },
      { name = 'sig', type = 'Sigmoid', bottom = { 'cat' }, top = { 'sig' } },
      { name = 'rs', type = 'Reshape', bottom = { 'sig' }, top = { 'rs' },
        params = { { RESHAPE, PB.message(1, PB.ints_packed(1, { 0, -1 })) } } },
      { name = 'loss', type = 'SoftmaxWithLoss', bottom = { 'rs', 'label' }, top = { 'loss' } },
    }))
  end)

  it('matches the network written out by hand', function()
    local func = L.caffe.CaffeFunction(path)
    local ys = chainer.using_config('train', false, function()
      return func { inputs = { data = x, label = label }, outputs = { 'loss', 'rs', 'bn', 'dc' } }
    end)
    local dc = L.Deconvolution2D(3, 4, 2, 2, 0, false, nil, Wd, bd)(x)
    H.close(ys[4], dc, 1e-5)
    -- the third blob divides the stored running averages
    local c = function(v) return v:reshape({ 1, 4, 1, 1 }) end
    local bn = (dc.array - c(mean)) / T.sqrt(c(var) + 1e-3)
    H.close(ys[3], bn, 1e-4)
    local sc = bn * c(gamma) + c(beta)
    local lr = T.where(sc:gt(0), sc, sc * 0.25)
    local s1, s2 = lr:slice({}, { 0, 2 }), lr:slice({}, { 2, 4 })
    local cat = T.concatenate({ s1 * 0.5 + s2 * 2, s1 * s2, T.maximum(s1, s2) }, 1)
    local rs = (1 / (1 + T.exp(-cat))):reshape({ 2, -1 })
    H.close(ys[2], rs, 1e-4)
    assert.same({ 2, 384 }, ys[2].shape)
    H.close(ys[1], F.softmax_cross_entropy(rs, label), 1e-4)
  end)

  it('rejects what Chainer rejects', function()
    local function one(layer)
      local p = dir .. '/bad.caffemodel'
      PB.write(p, PB.net('bad', { layer }))
      return function() return L.caffe.CaffeFunction(p) end
    end
    H.errors_with(one { name = 'ip', type = 'InnerProduct', blobs = { PB.tensor_blob(rand({ 2, 2 }, 1)) },
      params = { { IP, PB.uint(1, 2) .. PB.uint(5, 2) .. PB.bool(2, false) } } },
      "layer 'ip' (InnerProduct)", 'Non-default axis')
    H.errors_with(one { name = 'n', type = 'LRN', params = { { LRN, PB.uint(4, 1) } } }, 'Within-channel LRN')
    H.errors_with(one { name = 'p', type = 'Pooling', params = { { POOL, PB.uint(1, 2) .. PB.uint(2, 2) } } },
      'Stochastic pooling')
    H.errors_with(one { name = 's', type = 'Softmax', params = { { SMAX, PB.uint(2, 2) } } }, 'non-channel axis')
    H.errors_with(one { name = 'c', type = 'Convolution', params = { { CONV, PB.uint(1, 2) .. PB.uint(4, 1) } } },
      "layer 'c' (Convolution) has 0 blobs")
    H.errors_with(one { name = 'b', type = 'InnerProduct', blobs = { PB.blob({ shape = { 2, 2 }, data = { 1, 2, 3 } }) },
      params = { { IP, PB.uint(1, 2) .. PB.bool(2, false) } } }, "layer 'b' blob 0 holds 3 values but its shape needs 4")
  end)

  it('checks Eltwise coefficients against the inputs', function()
    local p = dir .. '/elt.caffemodel'
    PB.write(p, PB.net('e', { { name = 'sum', type = 'Eltwise', bottom = { 'a', 'b' }, top = { 'c' },
      params = { { ELT, PB.uint(1, 1) .. PB.float(2, 1) .. PB.float(2, 2) .. PB.float(2, 3) } } } }))
    local func = L.caffe.CaffeFunction(p)
    H.errors_with(function() func { inputs = { a = x, b = x }, outputs = { 'c' } } end,
      "layer 'sum' (Eltwise): 3 coefficients for 2 inputs")
  end)

  it('reads double_data blobs and transposed inner products', function()
    local W = rand({ 3, 2 }, 21)   -- stored (in, out) with transpose = true
    local p = dir .. '/t.caffemodel'
    local data = {}
    for k, v in ipairs(H.vals(W)) do data[k] = v end
    PB.write(p, PB.net('t', { { name = 'ip', type = 'InnerProduct', bottom = { 'x' }, top = { 'y' },
      blobs = { PB.blob({ shape = { 3, 2 }, data = data, double = true }) },
      params = { { IP, PB.uint(1, 2) .. PB.bool(2, false) .. PB.bool(6, true) } } } }))
    local func = L.caffe.CaffeFunction(p)
    local v = rand({ 4, 3 }, 22)
    H.close(func { inputs = { x = v }, outputs = { 'y' } }[1], T.matmul(v, W), 1e-5)
  end)
end)

describe('CaffeFunction (V1 layers form)', function()
  it('reads legacy blobs and V1 layer types', function()
    local x = rand({ 1, 2, 4, 4 }, 31)
    local W, b = rand({ 3, 2, 3, 3 }, 32), rand({ 3 }, 33)
    local W2, b2 = rand({ 4, 3 }, 34), rand({ 4 }, 35)
    local p = dir .. '/v1.caffemodel'
    PB.write(p, PB.net('v1', {
      { name = 'data', type = V1.DATA, top = { 'data' } },
      { name = 'conv', type = V1.CONVOLUTION, bottom = { 'data' }, top = { 'conv' },
        blobs = { PB.tensor_blob(W, true), PB.tensor_blob(b, true) },
        params = { { 10, PB.uint(1, 3) .. PB.uint(4, 3) } } },
      { name = 'relu', type = V1.RELU, bottom = { 'conv' }, top = { 'conv' } },
      { name = 'pool', type = V1.POOLING, bottom = { 'conv' }, top = { 'pool' },
        params = { { 19, PB.uint(1, 0) .. PB.uint(2, 2) .. PB.uint(3, 2) } } },
      { name = 'fc', type = V1.INNER_PRODUCT, bottom = { 'pool' }, top = { 'fc' },
        blobs = { PB.tensor_blob(W2, true), PB.tensor_blob(b2, true) }, params = { { 17, PB.uint(1, 4) } } },
      { name = 'prob', type = V1.SOFTMAX, bottom = { 'fc' }, top = { 'prob' } },
      { name = 'tanh', type = V1.TANH, bottom = { 'fc' }, top = { 'th' } },
    }, true))
    local func
    local warned = capture_warnings(function() func = L.caffe.CaffeFunction(p) end)
    assert.truthy(warned:find('skip the layer "tanh", since CaffeFunction does not support it', 1, true))
    local y = func { inputs = { data = x }, outputs = { 'prob' } }[1]
    local h = F.max_pooling_2d(F.relu(L.Convolution2D(2, 3, 3, 1, 0, false, W, b)(x)), 2, { stride = 2 })
    assert.same({ 1, 3, 1, 1 }, h.shape)
    H.close(y, F.softmax(L.Linear(3, 4, false, W2, b2)(h)), 1e-5)
  end)
end)

describe('CaffeFunction on damaged files', function()
  local whole
  setup(function()
    local layers = {
      { name = 'ip', type = 'InnerProduct', bottom = { 'x' }, top = { 'y' },
        blobs = { PB.tensor_blob(rand({ 3, 5 }, 41)), PB.tensor_blob(rand({ 3 }, 42)) }, params = { { IP, PB.uint(1, 3) } } },
      { name = 'r', type = 'ReLU', bottom = { 'y' }, top = { 'y' } },
    }
    whole = PB.net('n', layers)
  end)

  it('a missing file or a file that is not a model is a clear error', function()
    H.errors_with(function() L.caffe.CaffeFunction(dir .. '/none.caffemodel') end, 'cannot open', 'none.caffemodel')
    PB.write(dir .. '/text.caffemodel', 'name: "not binary"\n\255\255\255')
    H.errors_with(function() L.caffe.CaffeFunction(dir .. '/text.caffemodel') end,
      "text.caffemodel' is not a valid Caffe model")
    H.errors_with(function() L.caffe.CaffeFunction(42) end, 'model_path must be a non-empty string')
  end)

  it('truncated files are errors, never crashes', function()
    local errors = 0
    for cut = 1, #whole - 1, 3 do
      PB.write(dir .. '/cut.caffemodel', whole:sub(1, cut))
      local ok, err = pcall(capture_warnings, function()
        local f = L.caffe.CaffeFunction(dir .. '/cut.caffemodel')
        return f { inputs = { x = rand({ 2, 5 }, 1) }, outputs = { 'y' } }
      end)
      if not ok then
        errors = errors + 1
        assert.truthy(tostring(err):find('CaffeFunction', 1, true), tostring(err))
      end
    end
    assert.is_true(errors > 0)
  end)

  it('survives random byte damage', function()
    local seed = 777
    local function r(n)
      seed = (seed * 1103515245 + 12345) % 2147483648
      return seed % n
    end
    local failures = 0
    for _ = 1, 200 do
      local bytes = { whole:byte(1, -1) }
      for _ = 1, 1 + r(3) do bytes[1 + r(#bytes)] = r(256) end
      PB.write(dir .. '/fuzz.caffemodel', string.char(unpack(bytes)))
      local ok = pcall(capture_warnings, function()
        local f = L.caffe.CaffeFunction(dir .. '/fuzz.caffemodel')
        return f { inputs = { x = rand({ 2, 5 }, 1) }, outputs = { 'y' } }
      end)
      if not ok then failures = failures + 1 end
    end
    assert.is_true(failures > 0)
  end)
end)
