-- bench/workloads.lua: the chainlua side of `make bench` (bench/run).
--   luajit bench/workloads.lua WORKLOAD
-- WORKLOAD: mlp, lenet, lstm, nstep_lstm, node, infer (issue 8), resnet18, vgg (issue 19),
-- resnet50 (issue 15: ImageNet's ResNet-50, batch 64 at 224x224, for the GPU)
-- and micro (issue 2:
-- elementwise add/sum of 10^7 float32, sgemm 1024/2048, small ops).
-- Prints one line `RESULT {json}` with the per-iteration seconds of each
-- timed round (`times`), the unit of the reported figure and how to get it
-- from a time (`per_iter`: samples/words/nodes per iteration), and peak RSS.
-- Same shapes, float32 random data, forward + loss + backward + SGD update
-- as bench/workloads.py, which does the same in PyTorch.  BENCH_DEVICE=cuda:0
-- runs mlp, lenet, resnet18, vgg and resnet50 on that GPU (scripts/gpu-check).
package.path = (arg[0]:match('^(.*)/[^/]*$') or 'bench') .. '/lib/?.lua;' .. package.path
local B = require 'bench'
local chainer, opts = B.setup()
local F = require 'chainer.functions'
local L = require 'chainer.links'
local optimizers = require 'chainer.optimizers'
local T = chainer.tensor

local workload = arg[1] or 'mlp'
local q = opts.quick
T.random.seed(0)

local function labels(n, k) return T.random.randint(0, k, { n }, 'int32') end

local W = {}

-- One training step of a classifier: forward, softmax cross entropy,
-- backward, update (as workloads.py's train_step).
local function train_step(model, opt, x, t)
  return function()
    local loss = F.softmax_cross_entropy(model(x), t)
    model:cleargrads()
    loss:backward()
    opt:update()
  end
end

-- 1. MLP 784-1000-1000-10, ReLU, batch 100, SGD: samples/s
local MLP = B.MLP()

-- The training workloads warm up at least 200 steps (both sides, as
-- workloads.py): a training run lives in its steady state (an MNIST epoch
-- is 600 steps), and the first steps of a process fill the allocators'
-- caches.  chainlua's block cache grows by one missing block per collection
-- cycle until it holds one cycle's garbage: the MLP's steps 20-140 took
-- 8-10 ms and from ~150 on 7 ms, while PyTorch's show no trend from the
-- first 20 (bench/README.md, session 14).
local train_warmup = q and opts.warmup or math.max(opts.warmup, 200)

-- The step's eight products alone through T.gemm, in the same process
-- right after the step's rounds (preallocated outputs, the model's weights):
-- what the step would take with nothing but its products, so the harness can
-- split the step into the products and the rest on the same machine state.
local function mlp_products_times(model, x, iters)
  return (B.time(B.mlp_products(model, x), iters, 20, opts.reps))
end

function W.mlp()
  local model = B.place(MLP())
  local opt = optimizers.SGD { lr = 0.01 }:setup(model)
  local x, t = B.place(T.random.uniform(-1, 1, { 100, 784 }, 'float32'), labels(100, 10))
  local step = train_step(model, opt, x, t)
  local times, cpu = B.time(step, q and 3 or 20, train_warmup, opts.reps)
  return { unit = 'samples/s', per_iter = 100, times = times, cpu_times = cpu,
    gemm_flop_per_iter = B.MLP_PRODUCT_FLOP,
    products_times = mlp_products_times(model, x, q and 3 or 20) }
end

-- 2. LeNet, batch 64, SGD: samples/s
local LeNet = chainer.Chain:extend('BenchLeNet')
function LeNet:init()
  self.conv1 = L.Convolution2D(1, 20, 5)
  self.conv2 = L.Convolution2D(20, 50, 5)
  self.fc3 = L.Linear(800, 500)
  self.fc4 = L.Linear(500, 10)
end
function LeNet:forward(x)
  local h = F.max_pooling_2d(F.relu(self.conv1(x)), 2)
  h = F.max_pooling_2d(F.relu(self.conv2(h)), 2)
  return self.fc4(F.relu(self.fc3(h)))
end

function W.lenet()
  local model = B.place(LeNet())
  local opt = optimizers.SGD { lr = 0.01 }:setup(model)
  local x, t = B.place(T.random.uniform(0, 1, { 64, 1, 28, 28 }, 'float32'), labels(64, 10))
  local step = train_step(model, opt, x, t)
  local times = B.time(step, q and 2 or 10, train_warmup, opts.reps)
  return { unit = 'samples/s', per_iter = 64, times = times }
end

-- 2b. Two real CNNs at 32x32 (CIFAR shape), batch 64, SGD with momentum
-- 0.9: ResNet-18 (3x3 stem, four stages of two BasicBlocks, 64-128-256-512
-- channels, batch normalization, global average pooling, fc 10) and a
-- VGG-style net (3x3 conv + BN + ReLU, max pooling 2,
-- 64-64-M-128-128-M-256-256-M-512-M, fc 10).  Convolutions without bias
-- (batch normalization follows), as torchvision's ResNet.  samples/s
local BasicBlock = chainer.Chain:extend('BenchBasicBlock')
function BasicBlock:init(cin, cout, stride)
  self.conv1 = L.Convolution2D(cin, cout, 3, stride, 1, true)
  self.bn1 = L.BatchNormalization(cout)
  self.conv2 = L.Convolution2D(cout, cout, 3, 1, 1, true)
  self.bn2 = L.BatchNormalization(cout)
  if stride ~= 1 or cin ~= cout then -- projection shortcut: 1x1 conv + BN
    self.sc_conv = L.Convolution2D(cin, cout, 1, stride, 0, true)
    self.sc_bn = L.BatchNormalization(cout)
  end
end
function BasicBlock:forward(x)
  local h = F.relu(self.bn1(self.conv1(x)))
  h = self.bn2(self.conv2(h))
  local s = self.sc_conv and self.sc_bn(self.sc_conv(x)) or x
  return F.relu(h + s)
end

local ResNet18 = chainer.Chain:extend('BenchResNet18')
function ResNet18:init()
  self.conv1 = L.Convolution2D(3, 64, 3, 1, 1, true)
  self.bn1 = L.BatchNormalization(64)
  local cin = 64
  for i, cout in ipairs({ 64, 128, 256, 512 }) do
    self['layer' .. i .. '_1'] = BasicBlock(cin, cout, i == 1 and 1 or 2)
    self['layer' .. i .. '_2'] = BasicBlock(cout, cout, 1)
    cin = cout
  end
  self.fc = L.Linear(512, 10)
end
function ResNet18:forward(x)
  local h = F.relu(self.bn1(self.conv1(x)))
  for i = 1, 4 do h = self['layer' .. i .. '_2'](self['layer' .. i .. '_1'](h)) end
  return self.fc(F.average_pooling_2d(h, 4)) -- 4x4 -> 1x1: global average
end

local VGG_CFG = { 64, 64, 'M', 128, 128, 'M', 256, 256, 'M', 512, 'M' }
local VGG = chainer.Chain:extend('BenchVGG')
function VGG:init()
  local cin = 3
  for i, c in ipairs(VGG_CFG) do
    if c ~= 'M' then
      self['conv' .. i] = L.Convolution2D(cin, c, 3, 1, 1, true)
      self['bn' .. i] = L.BatchNormalization(c)
      cin = c
    end
  end
  self.fc = L.Linear(512 * 2 * 2, 10)
end
function VGG:forward(x)
  local h = x
  for i, c in ipairs(VGG_CFG) do
    if c == 'M' then h = F.max_pooling_2d(h, 2)
    else h = F.relu(self['bn' .. i](self['conv' .. i](h))) end
  end
  return self.fc(h)
end

local function cnn_workload(Model, size, classes)
  local model = B.place(Model())
  local opt = optimizers.MomentumSGD { lr = 0.01, momentum = 0.9 }:setup(model)
  local x, t = B.place(T.random.uniform(0, 1, { 64, 3, size or 32, size or 32 }, 'float32'), labels(64, classes or 10))
  local step = train_step(model, opt, x, t)
  local times, cpu = B.time(step, 1, math.min(opts.warmup, 1), q and 1 or opts.reps)
  return { unit = 'samples/s', per_iter = 64, times = times, cpu_times = cpu }
end
function W.resnet18() return cnn_workload(ResNet18) end
function W.vgg() return cnn_workload(VGG) end
-- ResNet-50 of examples/convnet/models.lua (the model zoo's bottleneck
-- blocks), 1000 classes, batch 64 at 224x224 (BENCH_IMAGE_SIZE overrides
-- the size, for a quick try on the host).
function W.resnet50()
  local here = arg[0]:match('^(.*)/[^/]*$') or 'bench'
  local models = dofile(here .. '/../examples/convnet/models.lua')
  local r = cnn_workload(function() return models.ResNet50(1000) end, tonumber(os.getenv('BENCH_IMAGE_SIZE') or '') or 224, 1000)
  r.image_size = tonumber(os.getenv('BENCH_IMAGE_SIZE') or '') or 224
  return r
end

-- 3. LSTM LM as Chainer's PTB example (no dropout): vocabulary 10000,
-- embed/hidden 200, 2 layers, BPTT 35, batch 20: words/s
local RNNLM = chainer.Chain:extend('BenchRNNLM')
function RNNLM:init(n_vocab, n_units)
  self.embed = L.EmbedID(n_vocab, n_units)
  self.l1 = L.LSTM(n_units, n_units)
  self.l2 = L.LSTM(n_units, n_units)
  self.l3 = L.Linear(n_units, n_vocab)
end
function RNNLM:reset_state() self.l1:reset_state() self.l2:reset_state() end
function RNNLM:forward(x)
  return self.l3(self.l2(self.l1(self.embed(x))))
end

function W.lstm()
  local vocab, units, bptt, batch = 10000, 200, 35, 20
  local model = RNNLM(vocab, units)
  local opt = optimizers.SGD { lr = 1.0 }:setup(model)
  local words = {}
  for k = 1, bptt + 1 do words[k] = labels(batch, vocab) end
  local function update()
    local loss = 0
    for k = 1, bptt do
      loss = loss + F.softmax_cross_entropy(model(words[k]), words[k + 1])
    end
    model:cleargrads()
    loss:backward()
    loss:unchain_backward()
    opt:update()
  end
  model:reset_state()
  local times, cpu = B.time(update, q and 1 or 4, opts.warmup, opts.reps)
  return { unit = 'words/s', per_iter = bptt * batch, times = times, cpu_times = cpu }
end

-- 3b. The same language model with L.NStepLSTM (2 layers) over the 35
-- steps: the 20 sequences of 35 words embedded at once, the LSTM over the
-- whole sequence, one output product over all 700 rows, mean softmax
-- cross entropy; the state carried (without its graph) to the next
-- iteration as truncated BPTT does.  PyTorch: nn.LSTM(200, 200,
-- num_layers=2).  words/s
local NStepLM = chainer.Chain:extend('BenchNStepLM')
function NStepLM:init(n_vocab, n_units)
  self.embed = L.EmbedID(n_vocab, n_units)
  self.rnn = L.NStepLSTM(2, n_units, n_units, 0)
  self.out = L.Linear(n_units, n_vocab)
end
-- words: (batch * bptt) int32, sequence after sequence; cuts: the row
-- offsets that split them into sequences
function NStepLM:forward(hx, cx, words, cuts)
  local xs = F.split_axis(self.embed(words), cuts, 0)
  local hy, cy, ys = self.rnn(hx, cx, xs)
  return self.out(F.concat(ys, 0)), hy, cy
end

function W.nstep_lstm()
  local vocab, units, bptt, batch = 10000, 200, 35, 20
  local model = NStepLM(vocab, units)
  local opt = optimizers.SGD { lr = 1.0 }:setup(model)
  -- sequence b's words at rows b*bptt .. (b+1)*bptt-1; targets: the next word
  local words, targets = labels(batch * bptt, vocab), labels(batch * bptt, vocab)
  local cuts = {}
  for b = 1, batch - 1 do cuts[b] = b * bptt end
  local hx, cx
  local function update()
    local logits, hy, cy = model(hx, cx, words, cuts)
    local loss = F.softmax_cross_entropy(logits, targets)
    model:cleargrads()
    loss:backward()
    hx, cx = hy.array, cy.array
    opt:update()
  end
  local times, cpu = B.time(update, q and 1 or 4, opts.warmup, opts.reps)
  return { unit = 'words/s', per_iter = bptt * batch, times = times, cpu_times = cpu }
end

-- 4. Per-node overhead: h = h * a + b, 50 times on 10-element tensors,
-- sum, backward (101 nodes): microseconds per node
function W.node()
  local a = chainer.Variable(T.full({ 10 }, 1.001))
  local b = chainer.Variable(T.full({ 10 }, 0.001))
  local x = chainer.Variable(T.full({ 10 }, 0.5))
  local function step()
    local h = x
    for _ = 1, 50 do h = h * a + b end
    F.sum(h):backward()
    x:cleargrad() a:cleargrad() b:cleargrad()
  end
  local times = B.time(step, q and 20 or 200, math.max(opts.warmup, 200), opts.reps)
  return { unit = 'us/node', per_iter = 101, times = times, lower_is_better = true }
end

-- 5. Inference latency: the MLP at batch 1 without a graph: microseconds.
-- Warm-up: 4000 calls, the steady state of a serving process.  Each call
-- leaves ~16 KB of dead activations for the collector (tensor/core.lua's
-- pace_gc allows 48 MB of them, ~3000 calls), and until the heap has grown
-- to that size once, every call touches fresh pages (page faults).
function W.infer()
  local model = MLP()
  local x = T.random.uniform(-1, 1, { 1, 784 }, 'float32')
  local function call() return model(x) end
  local times
  chainer.no_backprop_mode(function()
    times = B.time(call, q and 20 or 500, math.max(opts.warmup, q and 50 or 4000), opts.reps)
  end)
  return { unit = 'us/call', per_iter = 1, times = times, lower_is_better = true }
end

-- Micro benchmarks of the tensor library (issue 2)
function W.micro()
  local out = {}
  local n = 10000000
  local a, b = T.random.uniform(-1, 1, { n }, 'float32'), T.random.uniform(-1, 1, { n }, 'float32')
  local c = T.empty({ n }, 'float32')
  local t = B.time(function() T.add(a, b, c) end, q and 2 or 10, 2, opts.reps)
  table.sort(t)
  out.add_1e7_gbs = 3 * 4 * n / t[math.floor((#t + 1) / 2)] / 1e9
  t = B.time(function() T.add(a, b) end, q and 2 or 10, 2, opts.reps)
  table.sort(t)
  out.add_1e7_alloc_gbs = 3 * 4 * n / t[math.floor((#t + 1) / 2)] / 1e9
  t = B.time(function() T.sum(a) end, q and 2 or 10, 2, opts.reps)
  table.sort(t)
  out.sum_1e7_gbs = 4 * n / t[math.floor((#t + 1) / 2)] / 1e9
  a, b, c = nil, nil, nil
  collectgarbage()
  for _, m in ipairs({ 1024, 2048 }) do
    local x, y = T.random.uniform(-1, 1, { m, m }, 'float32'), T.random.uniform(-1, 1, { m, m }, 'float32')
    t = B.time(function() T.matmul(x, y) end, 1, 1, q and 2 or 5)
    table.sort(t)
    out['sgemm_' .. m .. '_gflops'] = 2 * m ^ 3 / t[math.floor((#t + 1) / 2)] / 1e9
  end
  -- small ops called from Lua: ns per call
  local s1, s2 = T.full({ 10 }, 1.0), T.full({ 10 }, 2.0)
  t = B.time(function() for _ = 1, 1000 do T.add(s1, s2) end end, q and 5 or 50, 5, opts.reps)
  table.sort(t)
  out.small_add_ns = t[1] / 1000 * 1e9
  local so = T.empty({ 10 })
  t = B.time(function() for _ = 1, 1000 do T.add(s1, s2, so) end end, q and 5 or 50, 5, opts.reps)
  table.sort(t)
  out.small_add_out_ns = t[1] / 1000 * 1e9
  local ba, bb = T.ones({ 3, 2, 4 }), T.ones({ 3, 4, 1 })
  t = B.time(function() for _ = 1, 100 do T.matmul(ba, bb) end end, q and 5 or 50, 5, opts.reps)
  table.sort(t)
  out.small_bmm_ns = t[1] / 100 * 1e9
  return { unit = 'micro', micro = out, times = { 0 } }
end

local fn = W[workload]
if not fn then error('workloads.lua: unknown workload ' .. tostring(workload)) end
local r = fn()
r.workload = workload
r.threads = opts.threads
B.report(r)
