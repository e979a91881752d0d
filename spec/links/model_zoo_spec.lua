-- Model zoo (VGG16Layers, ResNet50/101/152Layers, GoogLeNet): Chainer's key
-- layout and shapes (the converted .npz files load key for key), parameter
-- counts, layer lists and activation shapes, weight loading, prepare,
-- extract and predict.  Kept cheap: float32, batch 1, one full-size forward
-- per architecture at most where a small input cannot reach the head.
local chainer = require 'chainer'
local T = chainer.tensor
local L = chainer.links
local F = chainer.functions
local I = chainer.initializers
local S = chainer.serializers
local imgproc = require 'chainer.utils.imgproc'

-- The GoogLeNet built by the shapes test is reused by the weight tests
-- (building and running it again would double their cost).
local shared = {}

local function maxdiff(a, b)
  a = T.is_tensor(a) and a or a.array
  b = T.is_tensor(b) and b or b.array
  return (a:astype('float64') - b:astype('float64')):abs():max():item()
end
local function test_mode(fn) return chainer.using_config('train', false, fn) end
local function shape_str(s) return '(' .. table.concat(s, ', ') .. ')' end

-- key -> shape of everything save_npz would write (parameters and persistents).
local function layout(model)
  local d = S.DictionarySerializer()
  d:save(model)
  local out = {}
  for k, v in pairs(d.target) do out[k] = v.shape end
  return out
end

local function assert_layout(expected, model)
  local got = layout(model)
  local missing, extra, wrong = {}, {}, {}
  for k, s in pairs(expected) do
    if got[k] == nil then missing[#missing + 1] = k
    elseif shape_str(got[k]) ~= shape_str(s) then wrong[#wrong + 1] = k .. ' ' .. shape_str(got[k]) .. ' ~= ' .. shape_str(s) end
  end
  for k in pairs(got) do if expected[k] == nil then extra[#extra + 1] = k end end
  table.sort(missing); table.sort(extra); table.sort(wrong)
  assert.same({ missing = {}, extra = {}, wrong = {} }, { missing = missing, extra = extra, wrong = wrong })
end

-- Parameters in an expected layout (persistents of BatchNormalization excluded).
local function count(expected)
  local n = 0
  for k, s in pairs(expected) do
    if not (k:match('/avg_mean$') or k:match('/avg_var$') or k:match('/N$')) then
      local p = 1
      for _, d in ipairs(s) do p = p * d end
      n = n + p
    end
  end
  return n
end

---------------------------------------------------------------------------
-- the expected layouts, written from Chainer's architecture definitions
---------------------------------------------------------------------------
local function vgg16_layout()
  local e = {}
  local convs = { { 'conv1_1', 3, 64 }, { 'conv1_2', 64, 64 }, { 'conv2_1', 64, 128 }, { 'conv2_2', 128, 128 },
    { 'conv3_1', 128, 256 }, { 'conv3_2', 256, 256 }, { 'conv3_3', 256, 256 },
    { 'conv4_1', 256, 512 }, { 'conv4_2', 512, 512 }, { 'conv4_3', 512, 512 },
    { 'conv5_1', 512, 512 }, { 'conv5_2', 512, 512 }, { 'conv5_3', 512, 512 } }
  for _, c in ipairs(convs) do
    e[c[1] .. '/W'] = { c[3], c[2], 3, 3 }
    e[c[1] .. '/b'] = { c[3] }
  end
  e['fc6/W'], e['fc6/b'] = { 4096, 25088 }, { 4096 }
  e['fc7/W'], e['fc7/b'] = { 4096, 4096 }, { 4096 }
  e['fc8/W'], e['fc8/b'] = { 1000, 4096 }, { 1000 }
  return e
end

local function bn(e, p, n)
  for _, k in ipairs({ 'gamma', 'beta', 'avg_mean', 'avg_var' }) do e[p .. '/' .. k] = { n } end
  e[p .. '/N'] = {}
end

local function resnet_layout(blocks)
  local e = {}
  e['conv1/W'], e['conv1/b'] = { 64, 3, 7, 7 }, { 64 }   -- Caffe's conv1 has a bias (bias_term default)
  bn(e, 'bn1', 64)
  local stages = { { 'res2', 64, 64, 256 }, { 'res3', 256, 128, 512 }, { 'res4', 512, 256, 1024 },
    { 'res5', 1024, 512, 2048 } }
  for si, st in ipairs(stages) do
    local name, cin, mid, cout = st[1], st[2], st[3], st[4]
    local a = name .. '/a/'
    e[a .. 'conv1/W'] = { mid, cin, 1, 1 }; bn(e, a .. 'bn1', mid)
    e[a .. 'conv2/W'] = { mid, mid, 3, 3 }; bn(e, a .. 'bn2', mid)
    e[a .. 'conv3/W'] = { cout, mid, 1, 1 }; bn(e, a .. 'bn3', cout)
    e[a .. 'conv4/W'] = { cout, cin, 1, 1 }; bn(e, a .. 'bn4', cout)   -- projection shortcut
    for i = 1, blocks[si] - 1 do
      local b = name .. '/b' .. i .. '/'
      e[b .. 'conv1/W'] = { mid, cout, 1, 1 }; bn(e, b .. 'bn1', mid)
      e[b .. 'conv2/W'] = { mid, mid, 3, 3 }; bn(e, b .. 'bn2', mid)
      e[b .. 'conv3/W'] = { cout, mid, 1, 1 }; bn(e, b .. 'bn3', cout)
    end
  end
  e['fc6/W'], e['fc6/b'] = { 1000, 2048 }, { 1000 }
  return e
end

local inceptions = {   -- in, out1, proj3, out3, proj5, out5, proj_pool
  inc3a = { 192, 64, 96, 128, 16, 32, 32 }, inc3b = { 256, 128, 128, 192, 32, 96, 64 },
  inc4a = { 480, 192, 96, 208, 16, 48, 64 }, inc4b = { 512, 160, 112, 224, 24, 64, 64 },
  inc4c = { 512, 128, 128, 256, 24, 64, 64 }, inc4d = { 512, 112, 144, 288, 32, 64, 64 },
  inc4e = { 528, 256, 160, 320, 32, 128, 128 }, inc5a = { 832, 256, 160, 320, 32, 128, 128 },
  inc5b = { 832, 384, 192, 384, 48, 128, 128 },
}
local function googlenet_layout(with_aux)
  local e = {}
  local function c(n, o, i, k) e[n .. '/W'] = { o, i, k, k }; e[n .. '/b'] = { o } end
  local function l(n, o, i) e[n .. '/W'] = { o, i }; e[n .. '/b'] = { o } end
  c('conv1', 64, 3, 7); c('conv2_reduce', 64, 64, 1); c('conv2', 192, 64, 3)
  for n, a in pairs(inceptions) do
    c(n .. '/conv1', a[2], a[1], 1); c(n .. '/proj3', a[3], a[1], 1); c(n .. '/conv3', a[4], a[3], 3)
    c(n .. '/proj5', a[5], a[1], 1); c(n .. '/conv5', a[6], a[5], 5); c(n .. '/projp', a[7], a[1], 1)
  end
  l('loss3_fc', 1000, 1024)
  if with_aux then
    c('loss1_conv', 128, 512, 1); l('loss1_fc1', 1024, 2048); l('loss1_fc2', 1000, 1024)
    c('loss2_conv', 128, 528, 1); l('loss2_fc1', 1024, 2048); l('loss2_fc2', 1000, 1024)
  end
  return e
end

---------------------------------------------------------------------------
describe('model zoo: key layout and parameter counts (Chainer npz files)', function()
  it('VGG16Layers: conv1_1..conv5_3, fc6..fc8; 138,357,544 parameters', function()
    local m = L.VGG16Layers { initialW = 0 }
    local e = vgg16_layout()
    assert_layout(e, m)
    assert.equal(138357544, count(e))
    assert.equal(138357544, m:count_params())
  end)
  it('VGG19Layers: VGG16 plus conv3_4, conv4_4, conv5_4; 143,667,240 parameters', function()
    local m = L.VGG19Layers { initialW = 0 }
    local e = vgg16_layout()
    e['conv3_4/W'], e['conv3_4/b'] = { 256, 256, 3, 3 }, { 256 }
    e['conv4_4/W'], e['conv4_4/b'] = { 512, 512, 3, 3 }, { 512 }
    e['conv5_4/W'], e['conv5_4/b'] = { 512, 512, 3, 3 }, { 512 }
    assert_layout(e, m)
    -- the paper's 144M: VGG16's count plus 256*256*9+256 + 2*(512*512*9+512)
    assert.equal(138357544 + 590080 + 2 * 2359808, count(e))
    assert.equal(143667240, m:count_params())
  end)
  it('ResNet50/101/152Layers: conv1, bn1, res2..res5 (a, b1..), fc6; 25,557,096 / 44,549,224 / 60,192,872', function()
    -- Chainer's counts (its docstrings); torchvision's 25,557,032 for ResNet-50
    -- lacks the 64 biases of conv1.
    local cases = { { L.ResNet50Layers, { 3, 4, 6, 3 }, 25557096 }, { L.ResNet101Layers, { 3, 4, 23, 3 }, 44549224 },
      { L.ResNet152Layers, { 3, 8, 36, 3 }, 60192872 } }
    for _, c in ipairs(cases) do
      local m = c[1] { initialW = 0 }
      local e = resnet_layout(c[2])
      assert_layout(e, m)
      assert.equal(c[3], count(e))
      assert.equal(c[3], m:count_params())
      m = nil
      collectgarbage()
    end
    assert.equal(25557096 - 64, 25557032)
  end)
  it('GoogLeNet: conv1, conv2_reduce, conv2, inc3a..inc5b, loss1_*, loss2_*, loss3_fc; 13,378,280 parameters', function()
    local m = L.GoogLeNet { initialW = 0 }
    local e = googlenet_layout(true)
    assert_layout(e, m)
    assert.equal(13378280, m:count_params())
    -- The classifier path alone is the paper's ~7M (6,998,552); Chainer's
    -- link also holds the two auxiliary heads (3,188,840 + 3,190,888).
    assert.equal(6998552, count(googlenet_layout(false)))
    assert.equal(13378280 - 6998552, 3188840 + 3190888)
  end)
end)

---------------------------------------------------------------------------
describe('model zoo: layers and activation shapes', function()
  it('VGG16Layers: available_layers; the conv stack on 32x32; the head at 224x224', function()
    assert.same({ 'conv1_1', 'conv1_2', 'pool1', 'conv2_1', 'conv2_2', 'pool2', 'conv3_1', 'conv3_2', 'conv3_3',
      'pool3', 'conv4_1', 'conv4_2', 'conv4_3', 'pool4', 'conv5_1', 'conv5_2', 'conv5_3', 'pool5', 'fc6', 'fc7',
      'fc8', 'prob' }, L.VGG16Layers.available_layers)
    T.random.seed(3)
    -- Uniform(0.0173) has Normal(0.01)'s spread at a fifth of the sampling cost.
    local m = L.VGG16Layers { initialW = I.Uniform(0.0173) }
    local conv_layers = {}
    for i = 1, 18 do conv_layers[i] = m.available_layers[i] end
    local y = test_mode(function() return m(T.random.uniform(-1, 1, { 1, 3, 32, 32 }), { layers = conv_layers }) end)
    local sizes = { 32, 32, 16, 16, 16, 8, 8, 8, 8, 4, 4, 4, 4, 2, 2, 2, 2, 1 }
    local chans = { 64, 64, 64, 128, 128, 128, 256, 256, 256, 256, 512, 512, 512, 512, 512, 512, 512, 512 }
    for i, n in ipairs(conv_layers) do assert.same({ 1, chans[i], sizes[i], sizes[i] }, y[n].shape, n) end
    assert.has_error(function() m(T.zeros({ 1, 3, 32, 32 }), { layers = { 'fc6' } }) end,
      'VGG16Layers: fc6 needs pool5 of shape (N, 512, 7, 7), i.e. inputs of 193..224 pixels a side (got pool5 (1, 512, 1, 1))')
    -- the full network once, through extract (prepare at 224x224)
    local img = T.random.uniform(0, 255, { 240, 250, 3 })
    local h = test_mode(function() return m:extract({ img }, { 'pool5', 'fc6', 'fc7', 'fc8', 'prob' }) end)
    assert.same({ 1, 512, 7, 7 }, h.pool5.shape)
    assert.same({ 1, 4096 }, h.fc6.shape)
    assert.same({ 1, 4096 }, h.fc7.shape)
    assert.same({ 1, 1000 }, h.fc8.shape)
    assert.same({ 1, 1000 }, h.prob.shape)
    assert.is_true(math.abs(h.prob.array:sum():item() - 1) < 1e-5)
    assert.is_true(h.fc7.array:min():item() >= 0)                -- relu (dropout is off in test mode)
    local close_to_softmax = maxdiff(F.softmax(h.fc8), h.prob)
    assert.is_true(close_to_softmax < 1e-6)
  end)
  it('VGG19Layers: available_layers; the conv stack on 32x32; its fc6 check names it', function()
    assert.same({ 'conv1_1', 'conv1_2', 'pool1', 'conv2_1', 'conv2_2', 'pool2', 'conv3_1', 'conv3_2', 'conv3_3',
      'conv3_4', 'pool3', 'conv4_1', 'conv4_2', 'conv4_3', 'conv4_4', 'pool4', 'conv5_1', 'conv5_2', 'conv5_3',
      'conv5_4', 'pool5', 'fc6', 'fc7', 'fc8', 'prob' }, L.VGG19Layers.available_layers)
    T.random.seed(4)
    local m = L.VGG19Layers { initialW = I.Uniform(0.0173) }
    local y = test_mode(function()
      return m(T.random.uniform(-1, 1, { 1, 3, 32, 32 }), { layers = { 'conv3_4', 'pool3', 'conv5_4', 'pool5' } })
    end)
    assert.same({ 1, 256, 8, 8 }, y.conv3_4.shape)
    assert.same({ 1, 256, 4, 4 }, y.pool3.shape)
    assert.same({ 1, 512, 2, 2 }, y.conv5_4.shape)
    assert.same({ 1, 512, 1, 1 }, y.pool5.shape)
    assert.is_true(y.conv5_4.array:min():item() >= 0)   -- relu after each convolution
    -- pool3 is the 2x2 max pooling of conv3_4
    assert.is_true(maxdiff(F.max_pooling_2d(y.conv3_4, 2), y.pool3) == 0)
    assert.has_error(function() m(T.zeros({ 1, 3, 32, 32 }), { layers = { 'fc6' } }) end,
      'VGG19Layers: fc6 needs pool5 of shape (N, 512, 7, 7), i.e. inputs of 193..224 pixels a side (got pool5 (1, 512, 1, 1))')
    assert.same({ 3, 224, 224 }, L.VGG19Layers.prepare(T.random.uniform(0, 255, { 20, 30, 3 })).shape)
  end)
  it('ResNet50Layers: layers on 32x32 (res5 at 1x1); 3x3 is the smallest input', function()
    assert.same({ 'conv1', 'pool1', 'res2', 'res3', 'res4', 'res5', 'pool5', 'fc6', 'prob' },
      L.ResNet50Layers.available_layers)
    T.random.seed(4)
    local m = L.ResNet50Layers()
    local x = T.random.uniform(-1, 1, { 1, 3, 32, 32 })
    local y = test_mode(function() return m(x, { layers = m.available_layers }) end)
    local want = { conv1 = { 1, 64, 16, 16 }, pool1 = { 1, 64, 8, 8 }, res2 = { 1, 256, 8, 8 },
      res3 = { 1, 512, 4, 4 }, res4 = { 1, 1024, 2, 2 }, res5 = { 1, 2048, 1, 1 }, pool5 = { 1, 2048 },
      fc6 = { 1, 1000 }, prob = { 1, 1000 } }
    for n, s in pairs(want) do assert.same(s, y[n].shape, n) end
    assert.is_true(y.conv1.array:min():item() >= 0)              -- Chainer's conv1 layer is conv -> bn -> relu
    assert.is_true(math.abs(y.prob.array:sum():item() - 1) < 1e-5)
    assert.is_true(maxdiff(F.softmax(y.fc6), y.prob) < 1e-7)
    -- pool5 is the global average of res5 (1x1 here: a reshape)
    assert.equal(0, maxdiff(y.res5.array:reshape({ 1, 2048 }), y.pool5))
    -- pool1 is Chainer's max pooling 3/2 with cover_all: 16 -> 8 (floor mode gives 7)
    local tiny = test_mode(function() return m(T.zeros({ 1, 3, 3, 3 }), { layers = { 'pool1', 'prob' } }) end)
    assert.same({ 1, 64, 1, 1 }, tiny.pool1.shape)
    assert.same({ 1, 1000 }, tiny.prob.shape)
    assert.has_error(function() m(T.zeros({ 1, 3, 2, 2 })) end)   -- conv1 gives 1x1: pool1 would be empty
    -- extract: default layer pool5, resized to the given size
    local h = test_mode(function() return m:extract({ T.random.uniform(0, 255, { 50, 40, 3 }) }, nil, { 32, 32 }) end)
    assert.same({ 'pool5' }, (function() local k = {} for n in pairs(h) do k[#k + 1] = n end return k end)())
    assert.same({ 1, 2048 }, h.pool5.shape)
    -- only what is asked is returned; the forward stops at the last asked layer
    local r = test_mode(function() return m(x, { layers = { 'res2', 'pool1' } }) end)
    assert.is_nil(r.res3)
    assert.same({ 1, 256, 8, 8 }, r.res2.shape)
    -- default: prob
    assert.same({ 1, 1000 }, test_mode(function() return m(x) end).prob.shape)
    -- predict: 256x256 resize, centre crop 224, test mode; rows sum to 1
    local p = m:predict({ T.random.uniform(0, 255, { 64, 48, 3 }) }, false)
    assert.same({ 1, 1000 }, p.shape)
    assert.is_true(math.abs(p.array:sum():item() - 1) < 1e-5)
    assert.is_true(chainer.config.train)                        -- predict restored the mode
  end)
  it('ResNet101/152Layers and ResNetLayers: depth by argument, downsample_fb moves the stride', function()
    local blk = L.BuildingBlock(2, 4, 2, 8, 2, nil, true)
    local function st(c) return type(c.stride) == 'table' and c.stride[1] or c.stride end
    assert.same({ 1, 2 }, { st(blk.a.conv1), st(blk.a.conv2) })   -- fb.torch: stride on the 3x3
    local blk2 = L.BuildingBlock(2, 4, 2, 8, 2)
    assert.same({ 2, 1 }, { st(blk2.a.conv1), st(blk2.a.conv2) }) -- MSRA (default): stride on the first 1x1
    assert.same({ 1, 8, 2, 2 }, blk(T.random.randn({ 1, 4, 4, 4 })).shape)
    assert.same({ 1, 8, 2, 2 }, blk2(T.random.randn({ 1, 4, 4, 4 })).shape)
    local r = L.ResNetLayers(101, { initialW = 0 })
    assert.equal(44549224, r:count_params())
    assert.equal(22, #r.res4._forward - 1)
  end)
  it('GoogLeNet: every layer at 224x224 (the smallest input: 223..224 reach a 7x7 inception_5b)', function()
    assert.same({ 'conv1', 'pool1', 'conv2_reduce', 'conv2', 'pool2', 'inception_3a', 'inception_3b', 'pool3',
      'inception_4a', 'inception_4b', 'inception_4c', 'inception_4d', 'inception_4e', 'pool4', 'inception_5a',
      'inception_5b', 'pool5', 'loss3_fc', 'prob', 'loss1_fc2', 'loss2_fc2' }, L.GoogLeNet.available_layers)
    T.random.seed(5)
    local m = L.GoogLeNet()
    local x = T.random.uniform(-100, 100, { 1, 3, 224, 224 })
    local y = test_mode(function() return m(x, { layers = m.available_layers }) end)
    local want = { conv1 = { 64, 112 }, pool1 = { 64, 56 }, conv2_reduce = { 64, 56 }, conv2 = { 192, 56 },
      pool2 = { 192, 28 }, inception_3a = { 256, 28 }, inception_3b = { 480, 28 }, pool3 = { 480, 14 },
      inception_4a = { 512, 14 }, inception_4b = { 512, 14 }, inception_4c = { 512, 14 }, inception_4d = { 528, 14 },
      inception_4e = { 832, 14 }, pool4 = { 832, 7 }, inception_5a = { 832, 7 }, inception_5b = { 1024, 7 },
      pool5 = { 1024, 1 } }
    for n, s in pairs(want) do assert.same({ 1, s[1], s[2], s[2] }, y[n].shape, n) end
    for _, n in ipairs({ 'loss3_fc', 'prob', 'loss1_fc2', 'loss2_fc2' }) do assert.same({ 1, 1000 }, y[n].shape, n) end
    assert.is_true(math.abs(y.prob.array:sum():item() - 1) < 1e-5)
    assert.is_true(maxdiff(F.softmax(y.loss3_fc), y.prob) < 1e-7)
    -- conv2 includes the LRN (Chainer's layer list), so it differs from relu(conv2(conv2_reduce))
    local plain = F.relu(m.conv2(y.conv2_reduce))
    assert.is_true(maxdiff(plain, y.conv2) > 1e-3)
    local lrn = F.local_response_normalization(plain, { n = 5, k = 1, alpha = 1e-4 / 5 })
    assert.is_true(maxdiff(lrn, y.conv2) < 1e-5)
    -- the auxiliary head: avg pool 5/3 on inception_4a, 1x1 conv, relu, fc1, relu, fc2
    local a = F.relu(m.loss1_conv(F.average_pooling_2d(y.inception_4a, 5, { stride = 3 })))
    local ref = m.loss1_fc2(F.relu(m.loss1_fc1(a)))
    assert.is_true(maxdiff(ref, y.loss1_fc2) < 1e-5)
    shared.googlenet, shared.x, shared.y = m, x, y
  end)
end)

---------------------------------------------------------------------------
describe('model zoo: weights from an npz file (pretrained_model = path)', function()
  local path = os.tmpname()
  after_each(function() os.remove(path) end)
  it('save_npz then GoogLeNet{pretrained_model = path} gives identical outputs', function()
    local m = shared.googlenet or L.GoogLeNet()
    shared.googlenet = m
    local x = shared.x or T.random.uniform(-100, 100, { 1, 3, 224, 224 })
    local y = shared.y or test_mode(function() return m(x, { layers = m.available_layers }) end)
    S.save_npz(path, m, { compression = false })
    local keys = T.open_npz(path):keys()
    assert.equal(2 * 3 + 9 * 12 + 2 + 3 * 2 * 2, #keys)       -- 122 arrays, Chainer's names
    local m2 = L.GoogLeNet(path)             -- Chainer's positional pretrained_model
    assert.equal(0, maxdiff(m.inc4e.conv5.W, m2.inc4e.conv5.W))
    local y2 = test_mode(function() return m2(x, { layers = { 'prob', 'loss1_fc2', 'loss2_fc2', 'pool5' } }) end)
    for _, n in ipairs({ 'prob', 'loss1_fc2', 'loss2_fc2', 'pool5' }) do
      assert.equal(0, maxdiff(y[n], y2[n]), n)
    end
    -- predict without oversampling == the forward of the centre crop of the 256x256 preparation
    local img = T.random.uniform(0, 255, { 256, 256, 3 })
    local p = m2:predict({ img }, { oversample = false })
    local crop = L.GoogLeNet.prepare(img, { 256, 256 }):slice(':, 16:240, 16:240'):reshape({ 1, 3, 224, 224 })
    local q = test_mode(function() return m2(crop) end).prob
    assert.equal(0, maxdiff(p, q))
    assert.is_true(math.abs(p.array:sum():item() - 1) < 1e-5)
  end)
  it('a file missing a key is an error naming the model, the file and the key', function()
    local d = S.DictionarySerializer()
    d:save(shared.googlenet or L.GoogLeNet { initialW = 0 })
    shared.googlenet = nil
    d.target['inc4b/proj5/b'] = nil
    d.target['extra/W'] = T.zeros({ 2 })
    T.savez(path, d.target)
    local ok, err = pcall(L.GoogLeNet, { pretrained_model = path })
    assert.is_false(ok)
    err = tostring(err)
    assert.truthy(err:find('GoogLeNet: cannot load pretrained_model', 1, true), err)
    assert.truthy(err:find(path, 1, true), err)
    assert.truthy(err:find('1 missing key: inc4b/proj5/b', 1, true), err)
    assert.truthy(err:find('1 unexpected key: extra/W', 1, true), err)
    -- a wrong shape names the key too
    d.target['inc4b/proj5/b'] = T.ones({ 7 })
    d.target['extra/W'] = nil
    T.savez(path, d.target)
    ok, err = pcall(L.GoogLeNet, { pretrained_model = path })
    assert.is_false(ok)
    assert.truthy(tostring(err):find('inc4b/proj5/b', 1, true), tostring(err))
  end)
  it('a missing file names the file', function()
    local ok, err = pcall(L.VGG16Layers, { pretrained_model = '/nonexistent/VGG_ILSVRC_16_layers.npz' })
    assert.is_false(ok)
    assert.truthy(tostring(err):find("VGG16Layers: cannot load pretrained_model '/nonexistent/VGG_ILSVRC_16_layers.npz'",
      1, true), tostring(err))
  end)
end)

---------------------------------------------------------------------------
describe('model zoo: prepare', function()
  -- a 2x3 RGB image (H = 2, W = 3)
  local px = { { { 10, 20, 30 }, { 40, 50, 60 }, { 70, 80, 90 } },
    { { 100, 110, 120 }, { 130, 140, 150 }, { 160, 170, 180 } } }
  local vgg_mean = { 103.939, 116.779, 123.68 }   -- B, G, R
  local function expected(rows, cols, mean)
    local out = {}
    for c = 1, 3 do                      -- BGR: channel c is RGB channel 4 - c
      out[c] = {}
      for i, r in ipairs(rows) do
        out[c][i] = {}
        for j, q in ipairs(cols) do out[c][i][j] = px[r + 1][q + 1][4 - c] - mean[c] end
      end
    end
    return T.array(out, 'float32')
  end
  it('HWC RGB -> CHW BGR minus the mean pixel, float32 (size = false keeps the size)', function()
    local y = L.VGG16Layers.prepare(T.array(px), false)
    assert.equal('float32', y.dtype)
    assert.same({ 3, 2, 3 }, y.shape)
    assert.is_true(maxdiff(expected({ 0, 1 }, { 0, 1, 2 }, vgg_mean), y) < 1e-4)
    assert.is_true(math.abs(y:slice(0, 0, 0):item() - (30 - 103.939)) < 1e-4)   -- B of pixel (0, 0)
    -- each model's mean pixel
    local r = L.ResNet50Layers.prepare(T.array(px), false)
    assert.is_true(maxdiff(expected({ 0, 1 }, { 0, 1, 2 }, { 103.063, 115.903, 123.152 }), r) < 1e-4)
    local g = L.GoogLeNet.prepare(T.array(px), false)
    assert.is_true(maxdiff(expected({ 0, 1 }, { 0, 1, 2 }, { 104, 117, 123 }), g) < 1e-4)
  end)
  it('resizes to size = {width, height} with PIL NEAREST: source = floor((i + 0.5) * in / out)', function()
    -- width 3 -> 4: columns 0, 1, 1, 2; height 2 -> 3: rows 0, 1, 1
    local y = L.VGG16Layers.prepare(T.array(px), { 4, 3 })
    assert.same({ 3, 3, 4 }, y.shape)
    assert.is_true(maxdiff(expected({ 0, 1, 1 }, { 0, 1, 1, 2 }, vgg_mean), y) < 1e-4)
    -- shrinking: width 3 -> 2 takes columns 0 and 2 (0.75 -> 0, 2.25 -> 2); height 2 -> 1 takes row 1
    local z = L.VGG16Layers.prepare(T.array(px), { 2, 1 })
    assert.is_true(maxdiff(expected({ 1 }, { 0, 2 }, vgg_mean), z) < 1e-4)
    -- the default size is 224x224
    assert.same({ 3, 224, 224 }, L.VGG16Layers.prepare(T.array(px)).shape)
  end)
  it('accepts CHW, (1, H, W) and (H, W) gray images; truncates and clips to 0..255 like a uint8 cast', function()
    local hwc = T.array(px)
    local chw = hwc:transpose({ 2, 0, 1 })                 -- non-contiguous view
    assert.equal(0, maxdiff(L.VGG16Layers.prepare(hwc, false), L.VGG16Layers.prepare(chw, false)))
    local gray = T.array({ { 10.7, 300 }, { -5, 0.2 } })
    local g = L.VGG16Layers.prepare(gray, false)
    local g1 = L.VGG16Layers.prepare(gray:reshape({ 1, 2, 2 }), false)
    assert.equal(0, maxdiff(g, g1))
    local want = {}
    for c = 1, 3 do want[c] = { { 10 - vgg_mean[c], 255 - vgg_mean[c] }, { 0 - vgg_mean[c], 0 - vgg_mean[c] } } end
    assert.is_true(maxdiff(T.array(want, 'float32'), g) < 1e-4)
    -- RGBA: alpha is dropped
    local rgba = T.concatenate({ hwc, T.full({ 2, 3, 1 }, 7) }, 2)
    assert.equal(0, maxdiff(L.VGG16Layers.prepare(hwc, false), L.VGG16Layers.prepare(rgba, false)))
    -- uint8 input
    assert.equal(0, maxdiff(L.VGG16Layers.prepare(hwc:astype('uint8'), false), L.VGG16Layers.prepare(hwc, false)))
  end)
  it('rejects bad images and sizes with clear errors', function()
    assert.has_error(function() L.VGG16Layers.prepare(T.zeros({ 1, 2, 2, 3 })) end,
      'VGG16Layers.prepare: image must be 2-d or 3-d (got 4-d)')
    assert.has_error(function() L.VGG16Layers.prepare(T.zeros({ 2, 2, 5 })) end,
      'VGG16Layers.prepare: a 3-d image must be (H, W, 3), (H, W, 4) or (3, H, W) (got shape (2, 2, 5))')
    assert.has_error(function() L.ResNet50Layers.prepare('cat.jpg') end,
      'ResNetLayers.prepare: image must be a tensor (H, W), (H, W, 3) or (3, H, W) (got string)')
    assert.has_error(function() L.GoogLeNet.prepare(T.zeros({ 2, 2 }), { 0, 3 }) end)
    assert.has_error(function() L.GoogLeNet.prepare(T.zeros({ 0, 2 })) end, 'GoogLeNet.prepare: image is empty')
  end)
end)

---------------------------------------------------------------------------
describe('model zoo: predict with oversampling', function()
  it('imgproc.oversample: corners, centre, then their mirrors', function()
    local x = T.arange(2 * 16):astype('float32'):reshape({ 2, 1, 4, 4 })
    local c = imgproc.oversample(x, { 2, 3 })
    assert.same({ 20, 1, 2, 3 }, c.shape)
    local function crop(n, r, q) return x:slice(n, { nil, nil }, { r, r + 2 }, { q, q + 3 }) end
    local corners = { { 0, 0 }, { 0, 1 }, { 2, 0 }, { 2, 1 }, { 1, 0 } }   -- centre: floor(2 - 1), floor(2 - 1.5)
    for n = 0, 1 do
      for i, rc in ipairs(corners) do
        assert.equal(0, maxdiff(crop(n, rc[1], rc[2]), c:select(n * 10 + i - 1)))
        assert.equal(0, maxdiff(crop(n, rc[1], rc[2]):flip(2), c:select(n * 10 + i + 4)))
      end
    end
    assert.has_error(function() imgproc.oversample(x, { 5, 2 }) end)
  end)
  it('averages the 10 crops of each image (a stand-in network records its input)', function()
    local seen
    local Fake = { __name = 'Fake', prepare = L.GoogLeNet.prepare }
    Fake.__index = Fake
    Fake.__call = function(_, x, opts)
      seen = { x = x, layers = opts.layers, train = chainer.config.train, backprop = chainer.config.enable_backprop }
      local n = x.shape[1]
      local rows = {}
      for i = 1, n do rows[i] = { i - 1, 1 } end           -- row i is {i, 1}: the mean shows which rows were averaged
      return { prob = chainer.Variable(T.array(rows, 'float32')) }
    end
    local fake = setmetatable({}, Fake)
    local imgs = { T.random.uniform(0, 255, { 300, 280, 3 }), T.random.uniform(0, 255, { 256, 256, 3 }) }
    -- the method itself, not its check of self (fake is no GoogLeNet)
    local p = chainer.class.unwrap(L.GoogLeNet.predict)(fake, imgs)
    assert.same({ 20, 3, 224, 224 }, seen.x.shape)
    assert.same({ 'prob' }, seen.layers)
    assert.is_false(seen.train)
    assert.is_false(seen.backprop)
    assert.same({ 2, 2 }, p.shape)
    assert.is_true(maxdiff(T.array({ { 4.5, 1 }, { 14.5, 1 } }), p) < 1e-5)
    -- the crops come from the 256x256 preparation of each image
    local prep = L.GoogLeNet.prepare(imgs[2], { 256, 256 })
    assert.equal(0, maxdiff(prep:slice(':, 0:224, 32:256'), seen.x:select(11)))        -- image 2, top-right
    assert.equal(0, maxdiff(prep:slice(':, 16:240, 16:240'):flip(2), seen.x:select(19))) -- image 2, mirrored centre
    assert.is_true(chainer.config.train and chainer.config.enable_backprop)
  end)
end)

---------------------------------------------------------------------------
describe('model zoo: bad arguments', function()
  local r = L.ResNet50Layers { initialW = 0 }
  it('names the model and the argument', function()
    assert.has_error(function() L.ResNetLayers(34) end, 'ResNetLayers: n_layers must be 50, 101 or 152 (got 34)')
    assert.has_error(function() L.ResNet50Layers { n_layers = 101 } end,
      'ResNet50Layers: n_layers is fixed to 50 (use ResNetLayers for another depth)')
    assert.has_error(function() L.VGG16Layers { pretrained_model = 'auto' } end,
      "VGG16Layers: pretrained_model = 'auto' would download weights; pass the path of a converted .npz file instead")
    assert.has_error(function() L.GoogLeNet { pretrained = 'x.npz' } end,
      "L.GoogLeNet: unknown option 'pretrained' (accepted: initialW, pretrained_model)")
    assert.has_error(function() L.GoogLeNet { downsample_fb = true } end,
      "L.GoogLeNet: unknown option 'downsample_fb' (accepted: initialW, pretrained_model)")
    assert.has_error(function() L.VGG16Layers(3) end,
      'VGG16Layers: options must be a table {pretrained_model = path} or a path string (got number)')
    local x = T.zeros({ 1, 3, 32, 32 })
    assert.has_error(function() r(x, { layers = { 'fc7' } }) end,
      "ResNet50Layers: unknown layer 'fc7' (available: conv1, pool1, res2, res3, res4, res5, pool5, fc6, prob)")
    assert.has_error(function() r(x, { layers = 'prob' }) end,
      "ResNet50Layers: layers must be a list of layer names, e.g. {'prob'} (got string)")
    assert.has_error(function() r(T.zeros({ 1, 1, 32, 32 })) end,
      'ResNet50Layers: x must be a (N, 3, H, W) batch (got shape (1, 1, 32, 32))')
    assert.has_error(function() r:extract({}) end, 'ResNet50Layers:extract: images must be a non-empty list of image tensors')
    assert.has_error(function() r:extract({ T.zeros({ 8, 8, 3 }), T.zeros({ 9, 9, 3 }) }, nil, false) end,
      'ResNet50Layers:extract: image 2 prepares to 9x9 but image 1 to 8x8; pass a size to resize them')
  end)
end)
