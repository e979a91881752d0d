-- The cuDNN convolutions and the pooling kernels on a real GPU (issue 15):
-- F.convolution_1d/2d/3d/nd,
-- F.deconvolution_2d/nd and L.Convolution2D, forward and backward (gx, gW,
-- gb through the autograd), float32 and float64, groups, dilation, stride,
-- padding, cover_all (the explicitly padded input), empty batches, and
-- config.cudnn_deterministic / use_cudnn_tensor_core / autotune; and
-- F.max_pooling_1d/2d/3d and F.average_pooling_2d/3d/nd, forward and
-- backward (exact: the same bits as the CPU); F.batch_normalization,
-- F.fixed_batch_normalization and L.BatchNormalization.  Tagged
-- `gpu`: scripts/run-tests excludes it when chainer.cuda.available is
-- false, and run directly it reports one pending line instead.
--
-- Every GPU result is compared with the CPU's for the same input.  The
-- measure is the largest error over the largest CPU magnitude, printed with
-- the op, shapes and dtype on failure.  float32 under the default
-- use_cudnn_tensor_core = 'auto' may run on TF32 tensor cores (cuDNN's
-- default math on Ampere and newer, as in Chainer), hence its looser bound;
-- 'never' restricts it to FMA kernels and gets the tight one.
--
-- NOTE: written without access to a GPU and not yet run on one; checked by
-- reading and by loading it here.
local chainer = require 'chainer'
local T = require 'chainer.tensor'
local F = require 'chainer.functions'
local L = require 'chainer.links'
local cuda = require 'chainer.cuda'

local dev = 'cuda:0'
local R = T.random

-- relative bounds on max |gpu - cpu| / max |cpu|
local BOUND = { float32 = 1e-5, float32_tf32 = 5e-3, float64 = 1e-12 }

local function shape_str(t) return '(' .. table.concat(t.shape, ', ') .. ')' end

-- GPU tensor g agrees with CPU tensor c within bound (relative to max |c|).
local function close(g, c, what, bound)
  assert(g.device == dev, string.format('%s: result on %s, expected %s', what, tostring(g.device), dev))
  assert.are.same(c.shape, g.shape, what .. ': shape')
  assert.are.equal(c.dtype, g.dtype, what .. ': dtype')
  local gv = g:to_cpu():astype('float64'):flatten():tolist()
  local cv = c:astype('float64'):flatten():tolist()
  local maxerr, maxmag = 0, 0
  for i = 1, #cv do
    local e = math.abs(gv[i] - cv[i])
    if e ~= e then e = math.huge end
    if e > maxerr then maxerr = e end
    if math.abs(cv[i]) > maxmag then maxmag = math.abs(cv[i]) end
  end
  local rel = maxerr / math.max(maxmag, 1e-30)
  assert(rel <= bound, string.format('%s %s %s: max error %.3g (%.3g of max |cpu| %.3g, bound %.1g)', what,
    c.dtype, shape_str(c), maxerr, rel, maxmag, bound))
end

-- a and b hold the same values (read back to the CPU)
local function same_values(a, b)
  local av, bv = a:to_cpu():flatten():tolist(), b:to_cpu():flatten():tolist()
  if #av ~= #bv then return false end
  for i = 1, #av do
    if av[i] ~= bv[i] then return false end
  end
  return true
end

local function bound_for(dtype)
  if dtype == 'float64' then return BOUND.float64 end
  return chainer.config.use_cudnn_tensor_core == 'never' and BOUND.float32 or BOUND.float32_tf32
end

-- Runs fn(x, W, b) on copies of the inputs on one device, with
-- loss = sum(y * gy): returns y and the gradients of x, W and b.
local function run(fn, x, W, b, gy, on_gpu)
  local function put(t) if t == nil then return nil end return on_gpu and t:to_gpu() or t:copy() end
  local vx, vW = chainer.Variable(put(x)), chainer.Variable(put(W))
  local vb = b and chainer.Variable(put(b)) or nil
  local y = fn(vx, vW, vb)
  F.sum(y * put(gy)):backward()
  return y.array, vx.grad, vW.grad, vb and vb.grad or nil
end

-- The GPU's forward and gradients agree with the CPU's.
local function compare(what, fn, x, W, b, gy_shape)
  local dtype = x.dtype
  local probe = fn(chainer.Variable(x), chainer.Variable(W), b and chainer.Variable(b) or nil)
  local gy = R.uniform(-1, 1, gy_shape or probe.shape, dtype)
  local cy, cgx, cgW, cgb = run(fn, x, W, b, gy, false)
  local gy_, ggx, ggW, ggb = run(fn, x, W, b, gy, true)
  local bound = bound_for(dtype)
  local shapes = string.format('%s x %s W %s', what, shape_str(x), shape_str(W))
  close(gy_, cy, shapes .. ' forward', bound)
  close(ggx, cgx, shapes .. ' gx', bound)
  close(ggW, cgW, shapes .. ' gW', bound)
  if b then close(ggb, cgb, shapes .. ' gb', bound) end
  return ggx, ggW
end

describe('convolution, pooling and batch normalization on a GPU #gpu', function()
  if require('cuda.helpers').without_gpu('cuDNN') then return end

  before_each(function() R.seed(5) end)

  local function rand(shape, dtype) return R.uniform(-1, 1, shape, dtype) end

  for _, dtype in ipairs({ 'float32', 'float64' }) do
    describe(dtype, function()
      it('convolution_2d: plain, bias, stride and padding', function()
        compare('convolution_2d', function(x, W, b) return F.convolution_2d(x, W, b, 1, 1) end,
          rand({ 2, 3, 7, 6 }, dtype), rand({ 4, 3, 3, 3 }, dtype), rand({ 4 }, dtype))
        compare('convolution_2d stride 2 pad (1, 0)',
          function(x, W) return F.convolution_2d(x, W, nil, { 2, 1 }, { 1, 0 }) end,
          rand({ 3, 2, 9, 8 }, dtype), rand({ 5, 2, 3, 2 }, dtype))
      end)

      it('convolution_2d: groups and dilation', function()
        compare('convolution_2d groups 3 dilate (1, 2)',
          function(x, W, b) return F.convolution_2d(x, W, b, { 2, 1 }, { 1, 2 }, { dilate = { 1, 2 }, groups = 3 }) end,
          rand({ 2, 6, 9, 8 }, dtype), rand({ 6, 2, 3, 3 }, dtype), rand({ 6 }, dtype))
        compare('dilated_convolution_2d dilate 2',
          function(x, W) return F.dilated_convolution_2d(x, W, nil, 1, 2, 2) end,
          rand({ 1, 3, 10, 10 }, dtype), rand({ 2, 3, 3, 3 }, dtype))
      end)

      it('convolution_2d: cover_all (the explicitly padded input)', function()
        compare('convolution_2d cover_all stride 2',
          function(x, W, b) return F.convolution_2d(x, W, b, 2, 0, true) end,
          rand({ 2, 3, 5, 5 }, dtype), rand({ 4, 3, 2, 2 }, dtype), rand({ 4 }, dtype))
        compare('convolution_2d cover_all stride 3 pad 1 dilate 2',
          function(x, W) return F.convolution_2d(x, W, nil, 3, 1, true, { dilate = 2 }) end,
          rand({ 1, 2, 6, 7 }, dtype), rand({ 3, 2, 3, 3 }, dtype))
      end)

      it('convolution_1d, convolution_3d and convolution_nd', function()
        compare('convolution_1d stride 2 pad 1', function(x, W, b) return F.convolution_1d(x, W, b, 2, 1) end,
          rand({ 2, 3, 10 }, dtype), rand({ 5, 3, 3 }, dtype), rand({ 5 }, dtype))
        compare('convolution_3d pad 1', function(x, W) return F.convolution_3d(x, W, nil, 1, 1) end,
          rand({ 1, 2, 4, 5, 6 }, dtype), rand({ 3, 2, 3, 3, 3 }, dtype))
        compare('convolution_nd 3-d groups 2 cover_all',
          function(x, W) return F.convolution_nd(x, W, nil, 2, 0, true, { groups = 2 }) end,
          rand({ 1, 4, 5, 4, 3 }, dtype), rand({ 2, 2, 2, 2, 2 }, dtype))
      end)

      it('deconvolution_2d and deconvolution_nd, with outsize', function()
        compare('deconvolution_2d stride 2 pad 1',
          function(x, W, b) return F.deconvolution_2d(x, W, b, 2, 1) end,
          rand({ 2, 4, 3, 3 }, dtype), rand({ 4, 3, 3, 3 }, dtype), rand({ 3 }, dtype))
        compare('deconvolution_2d outsize (6, 6)',
          function(x, W) return F.deconvolution_2d(x, W, nil, 2, 1, { 6, 6 }) end,
          rand({ 2, 4, 3, 3 }, dtype), rand({ 4, 3, 3, 3 }, dtype))
        compare('deconvolution_nd 1-d groups 2',
          function(x, W) return F.deconvolution_nd(x, W, nil, 3, 0, nil, { groups = 2 }) end,
          rand({ 2, 4, 5 }, dtype), rand({ 4, 1, 4 }, dtype))
      end)

      it('an empty batch gives empty results and zero filter gradients', function()
        local x, W = rand({ 0, 3, 5, 5 }, dtype), rand({ 4, 3, 3, 3 }, dtype)
        local gx, gW = compare('convolution_2d empty batch',
          function(x_, W_, b_) return F.convolution_2d(x_, W_, b_) end, x, W, rand({ 4 }, dtype), { 0, 4, 3, 3 })
        assert.are.same({ 0, 3, 5, 5 }, gx.shape)
        assert.are.equal(0, gW:to_cpu():abs():max():item())
      end)
    end)
  end

  it('float32 with use_cudnn_tensor_core = never (no TF32) meets the tight bound', function()
    chainer.using_config('use_cudnn_tensor_core', 'never', function()
      compare('convolution_2d FMA only', function(x, W, b) return F.convolution_2d(x, W, b, 1, 1) end,
        rand({ 4, 16, 12, 12 }, 'float32'), rand({ 8, 16, 3, 3 }, 'float32'), rand({ 8 }, 'float32'))
    end)
  end)

  it('cudnn_deterministic gives the same bits twice and agrees with the CPU', function()
    chainer.using_config('cudnn_deterministic', true, function()
      local x, W = rand({ 8, 16, 14, 14 }, 'float32'), rand({ 32, 16, 3, 3 }, 'float32')
      local fn = function(x_, W_) return F.convolution_2d(x_, W_, nil, 1, 1) end
      R.seed(9) -- the same gy both times
      local gx1, gW1 = compare('convolution_2d deterministic', fn, x, W, nil)
      R.seed(9)
      local gx2, gW2 = compare('convolution_2d deterministic (again)', fn, x, W, nil)
      assert(same_values(gx1, gx2), 'deterministic gx differs between runs')
      assert(same_values(gW1, gW2), 'deterministic gW differs between runs')
    end)
  end)

  it('autotune (cudnnFind) agrees with the CPU', function()
    chainer.using_config('autotune', true, function()
      compare('convolution_2d autotune', function(x, W, b) return F.convolution_2d(x, W, b, 2, 1) end,
        rand({ 4, 8, 16, 16 }, 'float64'), rand({ 8, 8, 3, 3 }, 'float64'), rand({ 8 }, 'float64'))
    end)
  end)

  it('L.Convolution2D on the GPU: output and parameter gradients on cuda:0, as on the CPU', function()
    local cpu = L.Convolution2D(3, 5, 3, { stride = 1, pad = 1 })
    local gpu = cpu:copy()
    gpu:to_device(dev)
    local x = rand({ 2, 3, 8, 8 }, 'float64'):astype('float32')
    local yc, yg = cpu(x), gpu(x:to_gpu())
    local bound = bound_for('float32')
    close(yg.array, yc.array, 'L.Convolution2D forward', bound)
    F.sum(yc * yc):backward()
    F.sum(yg * yg):backward()
    close(gpu.W.grad, cpu.W.grad, 'L.Convolution2D W.grad', bound * 10)
    close(gpu.b.grad, cpu.b.grad, 'L.Convolution2D b.grad', bound * 10)
  end)

  -- Pooling runs the project's own kernels (pooling.cu), which add in the
  -- CPU's order: forward and backward agree with the CPU exactly.
  local function pool_compare(what, fn, x)
    local gy = R.uniform(-1, 1, fn(x).shape, x.dtype)
    local function on(gpu)
      local v = chainer.Variable(gpu and x:to_gpu() or x:copy())
      local y = fn(v)
      F.sum(y * (gpu and gy:to_gpu() or gy)):backward()
      return y.array, v.grad
    end
    local cy, cgx = on(false)
    local gy_, ggx = on(true)
    local shapes = string.format('%s x %s', what, shape_str(x))
    close(gy_, cy, shapes .. ' forward', 0)
    close(ggx, cgx, shapes .. ' gx', 0)
  end

  for _, dtype in ipairs({ 'float32', 'float64' }) do
    it('max and average pooling, forward and backward, exactly as the CPU (' .. dtype .. ')', function()
      local x2 = rand({ 2, 3, 7, 6 }, dtype)
      pool_compare('max_pooling_2d 2 stride 2', function(x) return F.max_pooling_2d(x, 2, 2, 0, false) end, x2)
      pool_compare('max_pooling_2d 3 stride 2 pad 1 cover_all', function(x) return F.max_pooling_2d(x, 3, 2, 1, true) end,
        x2)
      pool_compare('max_pooling_2d 3 stride 1 pad 1', function(x) return F.max_pooling_2d(x, 3, 1, 1, false) end, x2)
      pool_compare('max_pooling_1d 3 stride 2 pad 1', function(x) return F.max_pooling_1d(x, 3, 2, 1) end,
        rand({ 2, 3, 11 }, dtype))
      pool_compare('max_pooling_3d 2', function(x) return F.max_pooling_3d(x, 2) end, rand({ 1, 2, 4, 5, 3 }, dtype))
      pool_compare('average_pooling_2d 3 stride 2 pad 1', function(x) return F.average_pooling_2d(x, 3, 2, 1) end, x2)
      pool_compare('average_pooling_nd pad_value=false (inside cells)',
        function(x) return F.average_pooling_nd(x, 3, 2, 1, false) end, x2)
      pool_compare('average_pooling_3d', function(x) return F.average_pooling_3d(x, 2, 1, 1) end,
        rand({ 1, 2, 4, 3, 3 }, dtype))
      pool_compare('max_pooling_2d empty batch', function(x) return F.max_pooling_2d(x, 2) end, rand({ 0, 3, 4, 4 }, dtype))
    end)
  end

  -- Batch normalization's statistics and gradients are the project's own
  -- kernels (batch_norm.cu) with the CPU's order: the same bits; the
  -- running averages and the test / fixed modes go through elementwise ops.
  local BN_BOUND = { float32 = 1e-6, float64 = 1e-14 }
  for _, dtype in ipairs({ 'float32', 'float64' }) do
    it('batch_normalization (train, running averages, fixed) as on the CPU (' .. dtype .. ')', function()
      local x, gamma, beta = rand({ 6, 4, 5, 3 }, dtype) * 3 + 2, rand({ 4 }, dtype) + 1.5, rand({ 4 }, dtype)
      local bound = BN_BOUND[dtype]
      local function train(gpu)
        local function put(t) return gpu and t:to_gpu() or t:copy() end
        local rm, rv = put(T.zeros({ 4 }, dtype)), put(T.ones({ 4 }, dtype))
        local vx, vg, vb = chainer.Variable(put(x)), chainer.Variable(put(gamma)), chainer.Variable(put(beta))
        local y = F.batch_normalization(vx, vg, vb, { running_mean = rm, running_var = rv, decay = 0.8 })
        F.sum(y * y * put(x)):backward()
        return y.array, vx.grad, vg.grad, vb.grad, rm, rv
      end
      local c, g = { train(false) }, { train(true) }
      local names = { 'y', 'gx', 'ggamma', 'gbeta', 'running_mean', 'running_var' }
      for i = 1, #names do
        close(g[i], c[i], 'batch_normalization x ' .. shape_str(x) .. ' ' .. names[i], bound)
      end
      local fc = F.fixed_batch_normalization(x, gamma, beta, c[5], c[6])
      local fg = F.fixed_batch_normalization(x:to_gpu(), gamma:to_gpu(), beta:to_gpu(), g[5], g[6])
      close(fg.array, fc.array, 'fixed_batch_normalization x ' .. shape_str(x), bound * 10)
    end)
  end

  it('L.BatchNormalization on the GPU: train and test modes, running averages on cuda:0', function()
    local cpu = L.BatchNormalization(3)
    local gpu = cpu:copy()
    gpu:to_device(dev)
    local x = rand({ 8, 3, 4, 4 }, 'float32')
    local yc, yg = cpu(x), gpu(x:to_gpu())
    close(yg.array, yc.array, 'L.BatchNormalization train forward', BN_BOUND.float32)
    F.sum(yc * yc):backward()
    F.sum(yg * yg):backward()
    close(gpu.gamma.grad, cpu.gamma.grad, 'L.BatchNormalization gamma.grad', 1e-5)
    close(gpu.avg_mean, cpu.avg_mean, 'L.BatchNormalization avg_mean', BN_BOUND.float32)
    close(gpu.avg_var, cpu.avg_var, 'L.BatchNormalization avg_var', BN_BOUND.float32)
    chainer.using_config('train', false, function()
      close(gpu(x:to_gpu()).array, cpu(x).array, 'L.BatchNormalization test forward', 1e-5)
    end)
  end)

  it('names the op and the limit for 4 spatial axes', function()
    local x, W = rand({ 1, 1, 3, 3, 3, 3 }, 'float32'):to_gpu(), rand({ 1, 1, 2, 2, 2, 2 }, 'float32'):to_gpu()
    local ok, err = pcall(F.convolution_nd, x, W)
    assert.is_false(ok)
    assert.matches('convolution: cuDNN convolves 1 to 3 spatial axes on the GPU (got 4)', tostring(err), 1, true)
  end)
end)
