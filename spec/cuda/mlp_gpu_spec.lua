-- The ops of an MLP training step on a real GPU (issue 7): sum_to (the
-- broadcasting backward), where, axpby, gemm / linear on cuBLAS, the fused
-- SGD / MomentumSGD / Adam updates, softmax / log_softmax and their
-- gradients, softmax_cross_entropy forward and backward, and the relu /
-- sigmoid / tanh gradients.  Tagged `gpu`: scripts/run-tests
-- excludes it when chainer.cuda.available is false, and run directly it
-- reports one pending line instead.
--
-- Every GPU result is compared with the CPU's for the same input, the CPU
-- being the reference: exactly where both move or select the same bits,
-- within a dtype-dependent tolerance where summation orders differ.
--
-- NOTE: these specs were written without access to a GPU and have not yet
-- run on one; they were checked by reading and by loading them here.
local T = require 'chainer.tensor'
local cuda = require 'chainer.cuda'
local lib = require 'chainer._lib'
local C, check = lib.C, lib.check
local ffi = require 'ffi'
local box = ffi.new('ch_tensor*[1]')

local G = require 'cuda.helpers'
local dev, agree, rand = G.dev, G.agree, G.rand
local R = T.random

local FLOATS = { 'float16', 'float32', 'float64' }

describe('MLP training ops on a GPU #gpu', function()
  if G.without_gpu('MLP-op') then return end

  before_each(function() R.seed(11) end)

  describe('sum_to', function()
    it('agrees with the CPU for the shapes broadcasting produces', function()
      local cases = {
        { { 4, 3, 5 }, { 3, 5 } }, { { 4, 3, 5 }, { 1, 5 } }, { { 4, 3, 5 }, { 3, 1 } },
        { { 4, 3, 5 }, { 1, 1, 1 } }, { { 4, 3, 5 }, {} }, { { 7, 1 }, { 1 } }, { { 64, 10 }, { 10 } },
      }
      for _, dt in ipairs({ 'float16', 'float32', 'float64', 'int32', 'int64' }) do
        for _, c in ipairs(cases) do
          local x = rand(dt, c[1])
          local msg = dt .. ' ' .. table.concat(c[1], 'x') .. ' -> ' .. table.concat(c[2], 'x')
          agree(x:to_gpu():sum_to(c[2]), x:sum_to(c[2]), msg, dt == 'float16' and 4 or 2)
        end
      end
    end)

    it('returns x itself for its own shape and names bad shapes', function()
      local g = T.ones({ 2, 3 }, 'float32', dev)
      assert.are.equal(g, g:sum_to({ 2, 3 }))
      local ok, err = pcall(T.sum_to, g, { 4 })
      assert.is_false(ok)
      assert.matches('sum_to: cannot sum a tensor of shape (2, 3) to shape (4,)', err, 1, true)
    end)
  end)

  describe('where', function()
    it('selects exactly like the CPU, broadcasting, for every dtype', function()
      for _, dt in ipairs({ 'float16', 'float32', 'float64', 'int8', 'int32', 'int64', 'bool' }) do
        local c, a, b = rand('bool', { 4, 1, 5 }), rand(dt, { 3, 5 }), rand(dt, { 4, 3, 1 })
        agree(T.where(c:to_gpu(), a:to_gpu(), b:to_gpu()), T.where(c, a, b), 'where ' .. dt, 1, true)
        -- transposed and stepped views
        local at = rand(dt, { 5, 3 }):transpose()
        agree(T.where(c:to_gpu(), at:to_gpu(), b:to_gpu()), T.where(c, at, b), 'where transposed ' .. dt, 1, true)
      end
    end)

    it('converts mixed dtypes and non-bool conditions as the CPU does', function()
      local c = rand('float32', { 6, 7 })  -- nonzero is true
      local a, b = rand('int32', { 6, 7 }), rand('float64', { 7 })
      agree(T.where(c:to_gpu(), a:to_gpu(), b:to_gpu()), T.where(c, a, b), 'where float cond int32/float64', 1, true)
      local a16, b32 = rand('float16', { 6, 7 }), rand('float32', { 6, 7 })
      agree(T.where(c:gt(0):to_gpu(), a16:to_gpu(), b32:to_gpu()), T.where(c:gt(0), a16, b32), 'where f16/f32', 1, true)
      agree(T.where(c:gt(0):to_gpu(), 0, b32:to_gpu()), T.where(c:gt(0), 0, b32), 'where scalar a', 1, true)
    end)

    it('names mixed devices', function()
      local g = T.ones({ 2, 3 }, 'float32', dev)
      local ok, err = pcall(T.where, g:gt(0), g, T.ones({ 2, 3 }, 'float32'))
      assert.is_false(ok)
      assert.matches("where: argument 'a' is on cuda:0 but argument 'b' is on the CPU", err, 1, true)
    end)
  end)

  describe('axpby', function()
    it('agrees with the CPU for the float dtypes, contiguous and strided', function()
      for _, dt in ipairs(FLOATS) do
        local x, y = rand(dt, { 33, 17 }), rand(dt, { 33, 17 })
        local gy = y:to_gpu()
        T.axpby(0.75, x:to_gpu(), -1.5, gy)
        T.axpby(0.75, x, -1.5, y)
        agree(gy, y, 'axpby ' .. dt, 1, dt == 'float32' or dt == 'float64')
        local ys, xs = rand(dt, { 17, 33 }), rand(dt, { 33, 17 })
        local gys = ys:to_gpu()
        T.axpby(2, xs:to_gpu(), 0.5, gys:transpose())
        T.axpby(2, xs, 0.5, ys:transpose())
        agree(gys, ys, 'axpby transposed ' .. dt, 1, dt == 'float64')
      end
    end)

    it('does not read y when b is 0 and converts x of another dtype', function()
      local y = T.full({ 5 }, 0 / 0, 'float32', dev)
      local x = T.arange(5, 'float32')
      T.axpby(2, x:to_gpu(), 0, y)
      agree(y, T.mul(x, 2), 'axpby b=0', 1, true)
      local xi = T.arange(5, 'int32')
      local gy, cy = T.ones({ 5 }, 'float64', dev), T.ones({ 5 }, 'float64')
      T.axpby(3, xi:to_gpu(), 1, gy)
      T.axpby(3, xi, 1, cy)
      agree(gy, cy, 'axpby int32 x', 1, true)
    end)
  end)

  describe('gemm and linear', function()
    it('gemm agrees with the CPU for transposes, alpha, beta and strided c', function()
      for _, dt in ipairs({ 'float32', 'float64' }) do
        for _, tr in ipairs({ { false, false }, { true, false }, { false, true }, { true, true } }) do
          local a = rand(dt, tr[1] and { 9, 6 } or { 6, 9 })
          local b = rand(dt, tr[2] and { 5, 9 } or { 9, 5 })
          local c = rand(dt, { 6, 5 })
          local gc = c:to_gpu()
          local opts = { alpha = 0.5, beta = 2, transa = tr[1], transb = tr[2] }
          T.gemm(gc, a:to_gpu(), b:to_gpu(), opts)
          T.gemm(c, a, b, opts)
          agree(gc, c, string.format('gemm %s %s%s', dt, tr[1] and 'T' or 'N', tr[2] and 'T' or 'N'), 10)
        end
        -- a transposed (non-contiguous) c goes through a copy
        local a, b, c = rand(dt, { 4, 7 }), rand(dt, { 7, 3 }), rand(dt, { 3, 4 })
        local gc = c:to_gpu()
        T.gemm(gc:transpose(), a:to_gpu(), b:to_gpu(), { beta = 1 })
        T.gemm(c:transpose(), a, b, { beta = 1 })
        agree(gc, c, 'gemm into a transposed c ' .. dt, 10)
      end
    end)

    it('linear agrees with the CPU with and without a bias', function()
      local F = require 'chainer.functions'
      for _, dt in ipairs({ 'float32', 'float64' }) do
        local x, W, b = rand(dt, { 16, 20 }), rand(dt, { 10, 20 }), rand(dt, { 10 })
        agree(F.linear(x:to_gpu(), W:to_gpu(), b:to_gpu()).array, F.linear(x, W, b).array, 'linear+b ' .. dt, 20)
        agree(F.linear(x:to_gpu(), W:to_gpu()).array, F.linear(x, W).array, 'linear ' .. dt, 20)
      end
      local ok, err = pcall(F.linear, T.ones({ 2, 3 }, 'float32', dev), T.ones({ 4, 3 }, 'float32'))
      assert.is_false(ok)
      assert.matches("linear: argument 'x' is on cuda:0 but argument 'W' is on the CPU", err, 1, true)
    end)
  end)

  describe('softmax', function()
    it('softmax and log_softmax agree with the CPU along every axis', function()
      for _, dt in ipairs(FLOATS) do
        for _, shape in ipairs({ { 8, 10 }, { 3, 300 }, { 4, 5, 6 }, { 2, 1500 } }) do
          local x = rand(dt, shape, -4, 4)
          for axis = 0, #shape - 1 do
            for _, lg in ipairs({ 0, 1 }) do
              local msg = string.format('%s %s axis %d log %d', dt, table.concat(shape, 'x'), axis, lg)
              local gy = rand(dt, shape)
              local run = function(a, g)
                check(C.ch_softmax(a.ptr, axis, lg, box))
                local y = T.wrap(box[0])
                check(C.ch_softmax_grad(y.ptr, g.ptr, axis, lg, box))
                return y, T.wrap(box[0])
              end
              local cy, cgx = run(x, gy)
              local gy_, ggx = run(x:to_gpu(), gy:to_gpu())
              agree(gy_, cy, msg .. ' forward', dt == 'float16' and 2 or 10)
              agree(ggx, cgx, msg .. ' backward', dt == 'float16' and 4 or 50)
            end
          end
        end
      end
    end)

    it('F.softmax and F.log_softmax differentiate on the GPU', function()
      local F = require 'chainer.functions'
      local chainer = require 'chainer'
      local x = rand('float32', { 5, 7 }, -3, 3)
      for _, f in ipairs({ 'softmax', 'log_softmax' }) do
        local outs = {}
        for _, on_gpu in ipairs({ false, true }) do
          local v = chainer.Variable(on_gpu and x:to_gpu() or x:copy())
          local y = F[f](v)
          F.sum(y * y):backward()
          outs[#outs + 1] = { y.array, v.grad }
        end
        agree(outs[2][1], outs[1][1], f .. ' y', 10)
        agree(outs[2][2], outs[1][2], f .. ' gx', 50)
      end
    end)
  end)

  describe('softmax_cross_entropy', function()
    it('loss, gradient and softmax agree with the CPU', function()
      local box_l, box_g, box_y = ffi.new('ch_tensor*[1]'), ffi.new('ch_tensor*[1]'), ffi.new('ch_tensor*[1]')
      local cnt = ffi.new('int64_t[1]')
      local function run(x, t, w)
        check(C.ch_softmax_cross_entropy(x.ptr, t.ptr, w and w.ptr or nil, -1, box_l, box_g, box_y, cnt))
        return T.wrap(box_l[0]), T.wrap(box_g[0]), T.wrap(box_y[0]), tonumber(cnt[0])
      end
      for _, dt in ipairs(FLOATS) do
        for _, case in ipairs({ { { 16, 10 }, { 16 } }, { { 4, 1000 }, { 4 } }, { { 3, 5, 4, 2 }, { 3, 4, 2 } } }) do
          local x = rand(dt, case[1], -5, 5)
          local t = R.randint(-1, case[1][2], case[2], 'int32')  -- -1: ignored
          local w = rand(dt, { case[1][2] }, 0.5, 2)
          for _, weight in ipairs({ false, true }) do
            local msg = string.format('%s %s weight %s', dt, table.concat(case[1], 'x'), tostring(weight))
            local cl, cg, cy, cc = run(x, t, weight and w or nil)
            local gl, gg, gy, gc = run(x:to_gpu(), t:to_gpu(), weight and w:to_gpu() or nil)
            assert.are.equal(cc, gc, msg .. ' count')
            agree(gl, cl, msg .. ' loss', dt == 'float16' and 2 or 10)
            agree(gg, cg, msg .. ' grad', dt == 'float16' and 2 or 10)
            agree(gy, cy, msg .. ' softmax', dt == 'float16' and 2 or 10)
          end
        end
      end
    end)

    it('checks labels before computing, with the CPU message', function()
      local F = require 'chainer.functions'
      local x, t = rand('float32', { 3, 4 }), T.array({ 0, 4, 1 }, 'int32')
      local _, cerr = pcall(F.softmax_cross_entropy, x, t)
      local ok, gerr = pcall(F.softmax_cross_entropy, x:to_gpu(), t:to_gpu())
      assert.is_false(ok)
      assert.matches('label t[1] (flat position in t of shape (3,)) is 4, out of range', gerr, 1, true)
      assert.are.equal(cerr:match('softmax_cross_entropy: .*$'), gerr:match('softmax_cross_entropy: .*$'))
      ok, gerr = pcall(F.softmax_cross_entropy, x:to_gpu(), T.array({ 0, 1, 1 }, 'int32'))
      assert.is_false(ok)
      assert.matches("softmax_cross_entropy: argument 'x' is on cuda:0 but argument 't' is on the CPU", gerr, 1, true)
    end)
  end)

  describe('activation gradients', function()
    it('relu, sigmoid and tanh gradients agree with the CPU bit for bit', function()
      local ops = { relu = C.CH_ACT_RELU, sigmoid = C.CH_ACT_SIGMOID, tanh = C.CH_ACT_TANH }
      for _, dt in ipairs(FLOATS) do
        for name, op in pairs(ops) do
          local y = name == 'relu' and rand(dt, { 7, 33 }) or rand(dt, { 7, 33 }, 0, 1)
          local gy = rand(dt, { 7, 33 })
          check(C.ch_activation_grad(op, y.ptr, gy.ptr, box))
          local c = T.wrap(box[0])
          check(C.ch_activation_grad(op, y:to_gpu().ptr, gy:to_gpu().ptr, box))
          agree(T.wrap(box[0]), c, name .. '_grad ' .. dt, 1, true)
          -- a transposed gy is made contiguous first, on both devices
          local gt = rand(dt, { 33, 7 }):transpose()
          check(C.ch_activation_grad(op, y.ptr, gt.ptr, box))
          c = T.wrap(box[0])
          check(C.ch_activation_grad(op, y:to_gpu().ptr, gt:to_gpu().ptr, box))
          agree(T.wrap(box[0]), c, name .. '_grad transposed ' .. dt, 1, true)
        end
      end
      local g = T.ones({ 3 }, 'float32', dev)
      local ok, err = pcall(function() check(C.ch_activation_grad(C.CH_ACT_RELU, g.ptr, T.ones({ 3 }, 'float32').ptr, box)) end)
      assert.is_false(ok)
      assert.matches("relu_grad: argument 'y' is on cuda:0 but argument 'gy' is on the CPU", err, 1, true)
    end)
  end)

  describe('a training step', function()
    it('Linear -> relu -> Linear -> softmax_cross_entropy with Adam matches the CPU', function()
      local chainer = require 'chainer'
      local F, L = require 'chainer.functions', require 'chainer.links'
      local optimizers = require 'chainer.optimizers'
      local x = rand('float32', { 32, 20 })
      local t = R.randint(0, 5, { 32 }, 'int32')
      local function model()
        R.seed(3)
        local m = chainer.Chain()
        m:add_link('l1', L.Linear(20, 16))
        m:add_link('l2', L.Linear(16, 5))
        return m
      end
      local results = {}
      for _, on_gpu in ipairs({ false, true }) do
        local m = model()
        if on_gpu then m:to_gpu() end
        local opt = optimizers.Adam()
        opt:setup(m)
        local xs, ts = on_gpu and x:to_gpu() or x, on_gpu and t:to_gpu() or t
        local losses = {}
        for step = 1, 3 do
          m:cleargrads()
          local loss = F.softmax_cross_entropy(m.l2(F.relu(m.l1(xs))), ts)
          loss:backward()
          opt:update()
          losses[step] = loss.array
        end
        results[#results + 1] = { losses, m.l1.W.array, m.l2.b.array }
      end
      for step = 1, 3 do agree(results[2][1][step], results[1][1][step], 'loss ' .. step, 50) end
      agree(results[2][2], results[1][2], 'l1.W after 3 steps', 200)
      agree(results[2][3], results[1][3], 'l2.b after 3 steps', 200)
    end)
  end)

  describe('optimizer updates', function()
    -- 3 steps of `step(p, g, states...)` on both devices from one start
    -- (a third state, AMSGrad's vhat, starts in [0, 1))
    local function steps(dt, nstate, step, msg, exact)
      G.update_steps(dt, nstate, step, msg, { exact = exact, scale = 4, state_lo = { nil, nil, 0 } })
    end

    it('SGD and the momentum variants agree with the CPU bit for bit', function()
      for _, dt in ipairs({ 'float32', 'float64' }) do
        steps(dt, 0, function(p, g) check(C.ch_sgd_update(p.ptr, g.ptr, 0.1)) end, 'sgd ' .. dt, true)
        for _, f in ipairs({ 'ch_momentum_sgd_update', 'ch_corrected_momentum_sgd_update', 'ch_nesterov_ag_update' }) do
          steps(dt, 1, function(p, g, s) check(C[f](p.ptr, g.ptr, s[1].ptr, 0.05, 0.9)) end, f .. ' ' .. dt, true)
        end
      end
    end)

    it('Adam, AdamW, AMSGrad and AdaBound agree with the CPU', function()
      for _, dt in ipairs({ 'float32', 'float64' }) do
        for _, v in ipairs({ { 0, 0, false }, { 0.01, 0, false }, { 0, 0, true }, { 0, 1, false } }) do
          local wd, bounded, ams = v[1], v[2], v[3]
          steps(dt, ams and 3 or 2, function(p, g, s)
            check(C.ch_adam_update(p.ptr, g.ptr, s[1].ptr, s[2].ptr, ams and s[3].ptr or nil, 0.001, 0.9, 0.999,
              1e-8, 1, wd, bounded, 0.01, 0.2))
          end, string.format('adam %s wd=%g bounded=%d ams=%s', dt, wd, bounded, tostring(ams)), false)
        end
      end
    end)

    it('runs float16 and strided operands through float64 working copies', function()
      steps('float16', 1, function(p, g, s) check(C.ch_momentum_sgd_update(p.ptr, g.ptr, s[1].ptr, 0.05, 0.9)) end,
        'momentum float16', true)
      steps('float32', 0, function(p, g) check(C.ch_sgd_update(p:transpose().ptr, g:transpose().ptr, 0.1)) end,
        'sgd transposed', false)
    end)

    it('let the SGD, MomentumSGD and Adam optimizers update GPU parameters', function()
      local chainer = require 'chainer'
      local optimizers = require 'chainer.optimizers'
      local Link = chainer.Link
      local makers = { function() return optimizers.SGD(0.1) end, function() return optimizers.MomentumSGD(0.1) end,
        function() return optimizers.Adam() end }
      for k, make in ipairs(makers) do
        local w0, g = rand('float32', { 3, 4 }), rand('float32', { 3, 4 })
        local results = {}
        for _, on_gpu in ipairs({ false, true }) do
          local m = Link()
          local p = chainer.Parameter(on_gpu and w0:to_gpu() or w0:copy())
          m:add_param('w', p)
          local opt = make()
          opt:setup(m)
          for _ = 1, 2 do
            p.grad = on_gpu and g:to_gpu() or g:copy()
            opt:update()
          end
          results[#results + 1] = p.array
        end
        agree(results[2], results[1], 'optimizer ' .. k, 4)
      end
    end)

    it('names mixed devices in an update', function()
      local g = T.ones({ 3 }, 'float32', dev)
      local ok, err = pcall(function() check(C.ch_sgd_update(g.ptr, T.ones({ 3 }, 'float32').ptr, 0.1)) end)
      assert.is_false(ok)
      assert.matches("sgd_update: argument 'param' is on cuda:0 but argument 'grad' is on the CPU", err, 1, true)
    end)
  end)
end)
