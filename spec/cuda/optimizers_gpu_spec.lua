-- All 15 optimizers and the gradient hooks on a real GPU (issue 15): the
-- fused updates of AdaGrad, AdaDelta, RMSprop, RMSpropGraves, SMORMS3 and
-- MSVAG (runtime/cuda/optimizer.cu), grad_transform and sqnorm
-- (runtime/cuda/grad_hooks.cu), and every optimizer class with every hook
-- updating GPU parameters through the Lua layer.  Tagged `gpu`: without a
-- GPU it reports one pending line.
--
-- The kernels compute with the CPU's formulas in the same precision,
-- compiled with --fmad=false, and sqnorm sums the CPU's blocks in the CPU's
-- order, so the C-level comparisons expect the same bits.
--
-- NOTE: written without access to a GPU and not yet run on one; the same
-- kernels were run emulated on the host (tests/cuda/test_optimizer.cu,
-- tests/cuda/test_grad_hooks.cu).
local T = require 'chainer.tensor'
local lib = require 'chainer._lib'
local C, check = lib.C, lib.check
local ffi = require 'ffi'

local G = require 'cuda.helpers'
local agree, rand = G.agree, G.rand
local R = T.random

describe('optimizer updates and gradient hooks on a GPU #gpu', function()
  if G.without_gpu('optimizer') then return end

  before_each(function() R.seed(23) end)

  -- 3 steps on both devices, the same bits expected
  local function steps(dt, nstate, step, msg, state_lo)
    G.update_steps(dt, nstate, step, msg, { exact = true, state_lo = state_lo })
  end

  describe('the fused updates', function()
    it('AdaGrad, AdaDelta, RMSprop, RMSpropGraves, SMORMS3 and MSVAG agree with the CPU bit for bit', function()
      for _, dt in ipairs({ 'float32', 'float64' }) do
        steps(dt, 1, function(p, g, s) check(C.ch_adagrad_update(p.ptr, g.ptr, s[1].ptr, 0.01, 1e-8)) end,
          'adagrad ' .. dt)
        steps(dt, 2, function(p, g, s) check(C.ch_adadelta_update(p.ptr, g.ptr, s[1].ptr, s[2].ptr, 0.95, 1e-6)) end,
          'adadelta ' .. dt)
        for inside = 0, 1 do
          steps(dt, 1, function(p, g, s) check(C.ch_rmsprop_update(p.ptr, g.ptr, s[1].ptr, 0.01, 0.99, 1e-8, inside)) end,
            'rmsprop eps_inside_sqrt=' .. inside .. ' ' .. dt)
        end
        steps(dt, 3, function(p, g, s)
          check(C.ch_rmsprop_graves_update(p.ptr, g.ptr, s[1].ptr, s[2].ptr, s[3].ptr, 1e-4, 0.95, 0.9, 1e-4))
        end, 'rmsprop_graves ' .. dt)
        steps(dt, 3, function(p, g, s)
          check(C.ch_smorms3_update(p.ptr, g.ptr, s[1].ptr, s[2].ptr, s[3].ptr, 0.001, 1e-16))
        end, 'smorms3 ' .. dt, { 0, 0, 0 })
        steps(dt, 2, function(p, g, s)
          check(C.ch_msvag_update(p.ptr, g.ptr, s[1].ptr, s[2].ptr, 0.1, 0.9, 0.81, 0.5, 1, 0.01))
        end, 'msvag ' .. dt)
      end
    end)

    it('runs float16 and transposed operands through float64 working copies', function()
      steps('float16', 1, function(p, g, s) check(C.ch_adagrad_update(p.ptr, g.ptr, s[1].ptr, 0.01, 1e-8)) end,
        'adagrad float16')
      steps('float32', 2, function(p, g, s)
        check(C.ch_adadelta_update(p:transpose().ptr, g:transpose().ptr, s[1]:transpose().ptr, s[2]:transpose().ptr,
          0.95, 1e-6))
      end, 'adadelta transposed')
    end)
  end)

  describe('the gradient hooks', function()
    local acc = ffi.new('double[1]')
    local function sqnorm(x)
      check(C.ch_sqnorm(x.ptr, acc))
      return acc[0]
    end

    it('sqnorm gives the CPU bits for every float dtype and layout', function()
      for _, dt in ipairs({ 'float16', 'float32', 'float64' }) do
        for _, shape in ipairs({ { 3, 5 }, { 211, 97 }, { 0, 4 } }) do
          local x = rand(dt, shape, -3, 3)
          local gx = x:to_gpu()
          local msg = string.format('sqnorm %s (%s)', dt, table.concat(shape, ', '))
          assert.are.equal(sqnorm(x), sqnorm(gx), msg)
          assert.are.equal(sqnorm(x:transpose()), sqnorm(gx:transpose()), msg .. ' transposed')
        end
      end
    end)

    it('grad_transform gives the CPU bits for decay, sign decay, scale and clip', function()
      for _, dt in ipairs({ 'float16', 'float32', 'float64' }) do
        for _, v in ipairs({ { 0.37, 0, 0, -math.huge, math.huge }, { 1, 0, 0, -0.25, 0.5 },
          { 1, 0.01, 0, -math.huge, math.huge }, { 1, 0.003, 1, -math.huge, math.huge }, { 0.8, 5e-4, 0, -0.3, 0.3 } }) do
          for _, transposed in ipairs({ false, true }) do
            local g, p = rand(dt, { 37, 29 }), rand(dt, { 37, 29 }, -2, 2)
            if transposed then g, p = g:transpose(), p:transpose() end
            local gg, gp = g:to_gpu(), p:to_gpu()
            check(C.ch_grad_transform(g.ptr, p.ptr, v[1], v[2], v[3], v[4], v[5]))
            check(C.ch_grad_transform(gg.ptr, gp.ptr, v[1], v[2], v[3], v[4], v[5]))
            agree(gg, g, string.format('grad_transform %s scale=%g decay=%g sign=%d clip=[%g, %g]%s', dt, v[1], v[2],
              v[3], v[4], v[5], transposed and ' transposed' or ''), 1, true)
          end
        end
      end
    end)
  end)

  describe('every optimizer and hook on GPU parameters', function()
    local chainer = require 'chainer'
    local optimizers = require 'chainer.optimizers'
    local hooks = optimizers.hooks
    local NAMES = { 'SGD', 'MomentumSGD', 'CorrectedMomentumSGD', 'NesterovAG', 'AdaGrad', 'AdaDelta', 'Adam', 'AdamW',
      'AMSGrad', 'AdaBound', 'AMSBound', 'RMSprop', 'RMSpropGraves', 'SMORMS3', 'MSVAG' }

    -- two updates of a two-parameter link on each device from one start
    local function train(make_opt, add_hooks)
      local w0, b0 = rand('float32', { 3, 4 }), rand('float32', { 4 })
      local gw, gb = rand('float32', { 3, 4 }), rand('float32', { 4 })
      local results = {}
      for _, on_gpu in ipairs({ false, true }) do
        local function put(t) return on_gpu and t:to_gpu() or t:copy() end
        local m = chainer.Link()
        local w, b = chainer.Parameter(put(w0)), chainer.Parameter(put(b0))
        m:add_param('w', w)
        m:add_param('b', b)
        local opt = make_opt()
        opt:setup(m)
        if add_hooks then add_hooks(opt) end
        for _ = 1, 2 do
          w.grad, b.grad = put(gw), put(gb)
          opt:update()
        end
        results[#results + 1] = { w.array, b.array }
      end
      return results
    end

    it('all 15 optimizers update GPU parameters as on the CPU', function()
      for _, name in ipairs(NAMES) do
        local r = train(function() return optimizers[name]() end)
        agree(r[2][1], r[1][1], name .. ' w', 4)
        agree(r[2][2], r[1][2], name .. ' b', 4)
      end
    end)

    it('WeightDecay, Lasso, GradientClipping, GradientHardClipping and GradientLARS run on the GPU', function()
      local cases = {
        WeightDecay = function(opt) opt:add_hook(hooks.WeightDecay(1e-2)) end,
        Lasso = function(opt) opt:add_hook(hooks.Lasso(1e-2)) end,
        GradientClipping = function(opt) opt:add_hook(hooks.GradientClipping(0.5)) end,
        GradientHardClipping = function(opt) opt:add_hook(hooks.GradientHardClipping(-0.1, 0.1)) end,
        GradientLARS = function(opt) opt:add_hook(hooks.GradientLARS(1e-3, 1e-4)) end,
      }
      for name, add in pairs(cases) do
        local r = train(function() return optimizers.MomentumSGD(0.1) end, add)
        agree(r[2][1], r[1][1], name .. ' w', 4)
        agree(r[2][2], r[1][2], name .. ' b', 4)
      end
    end)
  end)
end)
