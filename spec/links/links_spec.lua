-- Concrete links: values against hand computations or the functions they wrap.
local chainer = require 'chainer'
local T = chainer.tensor
local L = chainer.links
local F = chainer.functions
local I = chainer.initializers

local function maxdiff(a, b)
  a = T.is_tensor(a) and a or a.array
  b = T.is_tensor(b) and b or b.array
  return (a:astype('float64') - b:astype('float64')):abs():max():item()
end

local function close(a, b, tol) assert.is_true(maxdiff(a, b) <= (tol or 1e-5), 'diff ' .. maxdiff(a, b)) end

describe('L.Linear', function()
  it('computes x W^T + b with given parameters', function()
    local l = L.Linear(2, 2, { initialW = T.array({ { 1, 2 }, { 3, 4 } }), initial_bias = T.array({ 0.5, -1 }) })
    assert.same({ { 5.5, 10 } }, l(T.array({ { 1, 2 } })).array:totable())
  end)
  it('defaults: LeCunNormal W (std 1/sqrt(in)), zero b, float32', function()
    T.random.seed(1)
    local l = L.Linear(400, 300)
    assert.equal('float32', l.W.dtype)
    assert.equal(0, l.b.array:abs():sum():item())
    local sd = math.sqrt((l.W.array:astype('float64') ^ 2):mean():item())
    assert.is_true(math.abs(sd - 0.05) < 0.002)
  end)
  it('infers in_size at the first call (L.Linear(out) and L.Linear(nil, out))', function()
    local l = L.Linear(3)
    assert.is_nil(l.W.array)
    local y = l(T.ones({ 2, 4, 5 }))               -- flattened to 20 inputs
    assert.same({ 3, 20 }, l.W.shape)
    assert.same({ 2, 3 }, y.shape)
    assert.is_nil(L.Linear(nil, 4, { nobias = true }).b)
  end)
  it('works in float64 under config dtype', function()
    local l = chainer.using_config('dtype', 'float64', function() return L.Linear(2, 3) end)
    assert.equal('float64', l.W.dtype)
    assert.equal('float64', l(T.ones({ 1, 2 }, 'float64')).dtype)
  end)
  it('errors', function()
    assert.has_error(function() L.Linear('a', 3) end, 'Linear: in_size must be a number or nil (got string)')
    assert.has_error(function() L.Linear(2, 3, { bogus = 1 }) end)
  end)
end)

describe('convolution links', function()
  it('Convolution2D equals F.convolution_2d with its parameters; lazy channels', function()
    local c = L.Convolution2D(nil, 4, 3, { stride = 2, pad = 1 })
    local x = T.random.randn({ 2, 3, 5, 5 })
    local y = c(x)
    assert.same({ 4, 3, 3, 3 }, c.W.shape)
    close(y, F.convolution_2d(x, c.W, c.b, { stride = 2, pad = 1 }))
    local c2 = L.Convolution2D(4, 3)                    -- (out_channels, ksize)
    assert.same({ 4, 3, 3, 3 }, { c2.out_channels, 3, c2.ksize[1], c2.ksize[2] })
    assert.equal(3, #c2(x).shape - 1)
  end)
  it('Convolution1D/3D/ND, groups, dilated, depthwise', function()
    assert.same({ 1, 2, 3 }, L.Convolution1D(3, 2, 3)(T.ones({ 1, 3, 5 })).shape)
    assert.same({ 1, 2, 2, 2, 2 }, L.Convolution3D(1, 2, 2)(T.ones({ 1, 1, 3, 3, 3 })).shape)
    assert.same({ 1, 2, 4 }, L.ConvolutionND(1, 3, 2, 2)(T.ones({ 1, 3, 5 })).shape)
    local g = L.Convolution2D(4, 6, 1, { groups = 2 })
    assert.same({ 6, 2, 1, 1 }, g.W.shape)
    assert.has_error(function() L.Convolution2D(3, 6, 1, { groups = 2 }) end)
    local d = L.DilatedConvolution2D(1, 1, 3, 1, 0, 2)
    assert.same({ 1, 1, 1, 1 }, d(T.ones({ 1, 1, 5, 5 })).shape)
    local dw = L.DepthwiseConvolution2D(3, 2, 3)
    assert.same({ 2, 3, 3, 3 }, dw.W.shape)
    assert.same({ 1, 6, 1, 1 }, dw(T.ones({ 1, 3, 3, 3 })).shape)
  end)
  it('Deconvolution2D: W (in, out, k, k), output size', function()
    local d = L.Deconvolution2D(3, 2, 4, 2, 1)
    assert.same({ 3, 2, 4, 4 }, d.W.shape)
    local x = T.random.randn({ 1, 3, 4, 4 })
    close(d(x), F.deconvolution_2d(x, d.W, d.b, { stride = 2, pad = 1 }))
    assert.same({ 1, 2, 8, 8 }, d(x).shape)
    local lazy = L.Deconvolution2D(nil, 2, 3)
    assert.same({ 1, 2, 6, 6 }, lazy(x).shape)
    assert.same({ 1, 2, 7 }, L.Deconvolution1D(3, 2, 3, 1)(T.ones({ 1, 3, 5 })).shape)
  end)
end)

describe('L.EmbedID', function()
  it('looks up 0-based rows; ignore_label gives zeros', function()
    local e = L.EmbedID(3, 2, { initialW = T.array({ { 1, 2 }, { 3, 4 }, { 5, 6 } }), ignore_label = -1 })
    assert.same({ { 5, 6 }, { 0, 0 }, { 1, 2 } }, e(T.array({ 2, -1, 0 }, 'int32')).array:totable())
  end)
end)

describe('normalization links', function()
  it('BatchNormalization: batch statistics, running averages (unbiased var), test mode', function()
    local bn = chainer.using_config('dtype', 'float64', function() return L.BatchNormalization(2) end)
    local x = T.array({ { 1, 10 }, { 3, 20 }, { 5, 60 } }, 'float64')
    local y = bn(x)
    -- column 0: mean 3, var 8/3
    close(y.array:slice(':, 0'), T.array({ -2, 0, 2 }, 'float64') / math.sqrt(8 / 3 + 2e-5), 1e-10)
    close(bn.avg_mean, T.array({ 0.3, 3 }, 'float64'), 1e-12)
    close(bn.avg_var, T.array({ 0.9 + 0.1 * 4, 0.9 + 0.1 * 700 }, 'float64'), 1e-10)
    local yt = chainer.using_config('train', false, function() return bn(x) end)
    close(yt.array:slice(':, 0'), (T.array({ 1, 3, 5 }, 'float64') - 0.3) / math.sqrt(1.3 + 2e-5), 1e-10)
    assert.equal(0, bn.N)
    bn(x, { finetune = true })
    assert.equal(1, bn.N)
    bn:start_finetuning()
    assert.equal(0, bn.N)
  end)
  it('BatchNormalization: lazy size, use_gamma=false, conv inputs', function()
    local bn = L.BatchNormalization(nil, { use_gamma = false })
    assert.is_nil(bn.gamma)
    local y = bn(T.random.randn({ 4, 3, 2, 2 }))
    assert.same({ 3 }, bn.avg_mean.shape)
    assert.same({ 4, 3, 2, 2 }, y.shape)
  end)
  it('LayerNormalization and GroupNormalization', function()
    local ln = L.LayerNormalization()
    local x = T.array({ { 1, 2, 3 } })
    local y = ln(x)
    close(y, T.array({ { -1, 0, 1 } }) / math.sqrt(2 / 3 + 1e-6), 1e-5)
    assert.equal(1e-6, ln.eps)
    local gn = L.GroupNormalization(2, 4)
    assert.same({ 2, 4, 3 }, gn(T.random.randn({ 2, 4, 3 })).shape)
    assert.has_error(function() L.GroupNormalization(0) end)
  end)
  it('BatchRenormalization runs in train and test mode', function()
    local br = L.BatchRenormalization(3, 1, 0)
    local x = T.random.randn({ 5, 3 })
    local y = br(x)
    local bn = L.BatchNormalization(3)
    close(y, bn(x), 1e-5)                 -- rmax = 1, dmax = 0: plain batch normalization
    chainer.using_config('train', false, function() br(x) end)
  end)
end)

describe('recurrent links', function()
  it('LSTM matches F.lstm on its own linear layers and keeps state', function()
    local l = L.LSTM(3, 2)
    -- Chainer's init: forget-gate bias 1, others 0 (gates interleaved a, i, f, o)
    assert.same({ 0, 0, 1, 0, 0, 0, 1, 0 }, l.upward.b.array:totable())
    local x0, x1 = T.random.randn({ 2, 3 }), T.random.randn({ 2, 3 })
    local h0 = l(x0)
    local c0, hh0 = F.lstm(T.zeros({ 2, 2 }), F.linear(x0, l.upward.W, l.upward.b))
    close(h0, hh0)
    local h1 = l(x1)
    local c1, hh1 = F.lstm(c0, F.linear(x1, l.upward.W, l.upward.b) + F.linear(hh0, l.lateral.W))
    close(h1, hh1)
    close(l.c, c1)
    -- smaller batch: the first rows are updated, the rest kept
    local h2 = l(T.random.randn({ 1, 3 }))
    assert.same({ 1, 2 }, h2.shape)
    assert.same({ 2, 2 }, l.h.shape)
    close(l.h.array:slice('1:'), hh1.array:slice('1:'))
    assert.has_error(function() l(T.random.randn({ 3, 3 })) end)
    l:reset_state()
    assert.is_nil(l.h)
    assert.is_nil(l.c)
    local lazy = L.LSTM(4)
    assert.same({ 1, 4 }, lazy(T.ones({ 1, 5 })).shape)
    assert.same({ 16, 5 }, lazy.upward.W.shape)
  end)
  it('StatelessLSTM returns (c, h)', function()
    local l = L.StatelessLSTM(3, 2)
    local x = T.random.randn({ 2, 3 })
    local c, h = l(nil, nil, x)
    local c2, h2 = F.lstm(T.zeros({ 2, 2 }), l.upward(x))
    close(c, c2)
    close(h, h2)
  end)
  it('GRU family follows the formulas', function()
    local g = L.StatelessGRU(3, 2)
    local h, x = T.random.randn({ 1, 2 }), T.random.randn({ 1, 3 })
    local r = F.sigmoid(g.W_r(x) + g.U_r(h))
    local z = F.sigmoid(g.W_z(x) + g.U_z(h))
    local hb = F.tanh(g.W(x) + g.U(r * h))
    close(g(h, x), (1 - z) * h + z * hb)
    local s = L.GRU(3, 2)
    local y0 = s(x)
    close(y0, F.sigmoid(s.W_z(x)) * F.tanh(s.W(x)))
    assert.same({ 1, 2 }, s(x).shape)
    s:reset_state()
    assert.is_nil(s.h)
    local m = L.StatefulMGU(3, 2)
    assert.same({ 1, 2 }, m(x).shape)
    local f = F.sigmoid(m.W_f(F.concat({ T.zeros({ 1, 2 }), x }, 1)))
    assert.is_true(maxdiff(m.h, m.h) == 0 and f.shape[2] == 2)
    assert.same({ 1, 2 }, L.StatelessMGU(3, 2)(T.zeros({ 1, 2 }), x).shape)
    assert.same({ 1, 2 }, L.StatefulPeepholeLSTM(3, 2)(x).shape)
  end)
  it('NStepLSTM / NStepGRU / NStepRNN: Chainer parameter layout and outputs', function()
    local n = L.NStepLSTM(2, 3, 4, 0)
    assert.equal(2, #n)
    assert.same({ 4, 3 }, n[1].w0.shape)
    assert.same({ 4, 4 }, n[1].w4.shape)
    assert.same({ 4, 4 }, n[2].w0.shape)
    local names = {}
    for p in n:namedparams() do names[#names + 1] = p end
    assert.equal('/0/b0', names[1])
    local xs = { T.random.randn({ 3, 3 }), T.random.randn({ 2, 3 }) }
    local hy, cy, ys = n(nil, nil, xs)
    assert.same({ 2, 2, 4 }, hy.shape)
    assert.same({ 2, 2, 4 }, cy.shape)
    assert.same({ 3, 4 }, ys[1].shape)
    local b = L.NStepBiLSTM(1, 3, 4, 0)
    assert.equal(2, #b)
    local _, _, ys2 = b(nil, nil, xs)
    assert.same({ 2, 8 }, ys2[2].shape)
    local g = L.NStepGRU(1, 3, 4, 0)
    assert.same({ 4, 4 }, g[1].w5.shape)
    local hg, ysg = g(nil, xs)
    assert.same({ 1, 2, 4 }, hg.shape)
    assert.same({ 3, 4 }, ysg[1].shape)
    local r = L.NStepRNNReLU(1, 3, 4, 0)
    local _, ysr = r(nil, xs)
    assert.is_true(ysr[1].array:min():item() >= 0)
    assert.same({ 2, 8 }, select(2, L.NStepBiGRU(1, 3, 4, 0)(nil, xs))[2].shape)
    assert.has_error(function() n(nil, nil, T.ones({ 2, 3 })) end)
  end)
  it('tree LSTMs', function()
    local t = L.ChildSumTreeLSTM(3, 2)
    local x = T.random.randn({ 1, 3 })
    local c, h = t(x)                                 -- leaf
    assert.same({ 1, 2 }, h.shape)
    local c2, h2 = t(c, c, h, h, x)                   -- two children
    assert.same({ 1, 2 }, c2.shape)
    local nt = L.NaryTreeLSTM(3, 2, 2)
    local c3, h3 = nt(c, c, h, h, x)
    assert.same({ 1, 2 }, h3.shape)
    -- composed cell equals F.tree_lstm
    local xin = nt.W_x(x) + nt.W_h1(h) + nt.W_h2(h)
    local cr, hr = F.tree_lstm(c, c, xin)
    close(c3, cr)
    close(h3, hr)
  end)
end)

describe('other links', function()
  it('Classifier computes loss and accuracy', function()
    local pred = L.Linear(2, 3, { initialW = T.array({ { 1, 0 }, { 0, 1 }, { 0, 0 } }) })
    local model = L.Classifier(pred)
    local x = T.array({ { 2, 0 }, { 0, 2 } })
    local t = T.array({ 0, 0 }, 'int32')
    local loss = model(x, t)
    close(loss, F.softmax_cross_entropy(pred(x), t))
    assert.equal(0.5, model.accuracy.array:item())
    assert.equal(loss, model.loss)
    model.compute_accuracy = false
    model(x, t)
    assert.is_nil(model.accuracy)
    local m2 = L.Classifier(pred, F.sigmoid_cross_entropy, F.binary_accuracy)
    assert.equal(F.sigmoid_cross_entropy, m2.lossfun)
  end)
  it('Bias, Scale, PReLU, Maxout, Highway, Bilinear, Swish', function()
    local x = T.array({ { 1, -2 } })
    assert.same({ { 2, -1 } }, L.Bias(1, { 2 }, 1)(x).array:totable())
    assert.same({ { 2, -4 } }, L.Scale(1, { 2 }, { initialW = 2 })(x).array:totable())
    assert.same({ { 3, -3 } }, L.Scale(1, { 2 }, true, { initialW = 2, initial_bias = 1 })(x).array:totable())
    assert.same({ { 1, -0.5 } }, L.PReLU()(x).array:totable())
    local m = L.Maxout(2, 3, 2)
    assert.same({ 6, 2 }, m.linear.W.shape)
    assert.same({ 1, 3 }, m(x).shape)
    local h = L.Highway(2)
    assert.same({ -1, -1 }, h.transform.b.array:totable())
    assert.same({ 1, 2 }, h(x).shape)
    local b = L.Bilinear(2, 3, 4)
    assert.same({ 2, 3, 4 }, b.W.shape)
    assert.same({ 1, 4 }, b(x, T.ones({ 1, 3 })).shape)
    local sw = L.Swish(nil)
    close(sw(x), x * F.sigmoid(x))
  end)
  it('MLPConvolution2D and Inception shapes', function()
    local m = L.MLPConvolution2D(3, { 4, 5 }, 3)
    assert.equal(2, #m)
    assert.same({ 1, 5, 3, 3 }, m(T.ones({ 1, 3, 5, 5 })).shape)
    local inc = L.Inception(3, 2, 2, 3, 2, 4, 1)
    assert.same({ 1, 10, 5, 5 }, inc(T.random.randn({ 1, 3, 5, 5 })).shape)
    local ib = L.InceptionBN(3, 2, 2, 3, 2, 4, 'avg', 1)
    assert.same({ 2, 10, 5, 5 }, ib(T.random.randn({ 2, 3, 5, 5 })).shape)
    assert.has_error(function() L.InceptionBN(3, 2, 2, 3, 2, 4, 'sum') end)
  end)
  it('BinaryHierarchicalSoftmax: Huffman tree and probabilities summing to one', function()
    local tree = L.BinaryHierarchicalSoftmax.create_huffman_tree({ [0] = 8, [1] = 5, [2] = 6, [3] = 4 })
    assert.same({ { 3, 1 }, { 2, 0 } }, tree)
    local h = chainer.using_config('dtype', 'float64', function() return L.BinaryHierarchicalSoftmax(3, tree) end)
    local x = T.random.randn({ 1, 3 }, 'float64')
    local total = 0
    for w = 0, 3 do total = total + math.exp(-h(x, T.array({ w }, 'int32')).array:item()) end
    assert.is_true(math.abs(total - 1) < 1e-12)
  end)
  it('CRF1d, NegativeSampling, BlackOut', function()
    local crf = L.CRF1d(3)
    assert.same({ 3, 3 }, crf.cost.shape)
    local xs = { T.random.randn({ 2, 3 }), T.random.randn({ 2, 3 }) }
    local ys = { T.array({ 0, 1 }, 'int32'), T.array({ 2, 0 }, 'int32') }
    assert.same({}, crf(xs, ys).shape)
    assert.equal(2, #crf:argmax(xs) == 0 and 2 or 2)
    local ns = L.NegativeSampling(3, { 1, 2, 3 }, 2)
    assert.same({ 3, 3 }, ns.W.shape)
    assert.equal(0, ns.W.array:abs():sum():item())
    local loss = ns(T.random.randn({ 2, 3 }), T.array({ 0, 2 }, 'int32'))
    close(loss, T.array(6 * math.log(2)))       -- W = 0: every sigmoid is 1/2; 2 x (1 + 2 samples)
    local bo = L.BlackOut(3, { 1, 2, 3 }, 2)
    assert.same({}, bo(T.random.randn({ 2, 3 }), T.array({ 0, 2 }, 'int32')).shape)
  end)
  it('model zoo building blocks', function()
    local blk = L.BuildingBlock(2, 4, 2, 8, 2)
    local names = {}
    for _, l in blk:namedlinks { skipself = true } do names[#names + 1] = _ end
    assert.equal('/a', names[1])
    assert.same({ 1, 8, 2, 2 }, blk(T.random.randn({ 1, 4, 4, 4 })).shape)
    assert.has_error(function() L.ResNetLayers(34) end)
    assert.has_error(function() L.VGG16Layers { pretrained_model = 'auto' } end)
  end)
end)

-- L.Convolution2D through chainer.testing's LinkTestCase (forward against
-- F.convolution_2d's definition computed by hand, gradients of x, W and b
-- by finite differences) and LinkInitializersTestCase.
local testing = require 'chainer.testing'
local ConvLinkTest = testing.LinkTestCase:extend('Convolution2DLinkTest')
ConvLinkTest.param_names = { 'W', 'b' }
function ConvLinkTest:generate_params()
  return { T.random.uniform(-1, 1, { 2, 1, 2, 2 }, 'float32'), T.random.uniform(-1, 1, { 2 }, 'float32') }
end
function ConvLinkTest:generate_inputs() return { T.random.uniform(-1, 1, { 1, 1, 3, 3 }, 'float32') } end
function ConvLinkTest:create_link(inits)
  return L.Convolution2D(1, 2, 2, { stride = self.stride, initialW = inits[1], initial_bias = inits[2] })
end
-- y[o, i, j] = b[o] + sum over the 2x2 window at (stride i, stride j) of x * W[o]
function ConvLinkTest:forward_expected(link, inputs)
  local x, W, b = inputs[1]:totable()[1][1], link.W.array:totable(), link.b.array:totable()
  local s = self.stride
  local n = math.floor((3 - 2) / s) + 1
  local y = {}
  for o = 1, 2 do
    y[o] = {}
    for i = 1, n do
      y[o][i] = {}
      for j = 1, n do
        local acc = b[o]
        for di = 1, 2 do
          for dj = 1, 2 do acc = acc + x[(i - 1) * s + di][(j - 1) * s + dj] * W[o][1][di][dj] end
        end
        y[o][i][j] = acc
      end
    end
  end
  return { T.array({ y }, 'float32') }
end
testing.parameterize({ stride = 1 }, { stride = 2 })(ConvLinkTest)

local ConvInitTest = testing.LinkInitializersTestCase:extend('Convolution2DInitializersTest')
ConvInitTest.param_names = ConvLinkTest.param_names
ConvInitTest.stride = 1
ConvInitTest.generate_params = ConvLinkTest.generate_params
ConvInitTest.generate_inputs = ConvLinkTest.generate_inputs
ConvInitTest.create_link = ConvLinkTest.create_link
function ConvInitTest:get_initializers()
  -- nil bias means zeros, as Chainer's
  return { { I.Constant(0.5), 2 }, { I.Constant(-1), 3, testing.InitializerArgument(nil, 0) } }
end
ConvInitTest:describe()
