-- Specs for in-place accumulation of a parameter's gradient over many
-- applications in one backward pass (grad_inputs of backward_tensors, see
-- function_node.lua): a Linear and an EmbedID used at every step of a
-- sequence add their W gradients straight into the sum W's node owns.  The results must equal the node
-- path (double backprop: one gradient per step, summed by the traversal)
-- and a sum of the per-step gradients taken one at a time.
local chainer = require 'chainer'
local F = require 'chainer.functions'
local L = require 'chainer.links'
local T = chainer.tensor
local testing = require 'chainer.testing'

local function close(a, b, tol) testing.assert_allclose(a, b, { rtol = tol, atol = tol }) return true end

-- A small language model over `steps` steps; ids and labels fixed by seed.
local function model_grads(steps, opts)
  opts = opts or {}
  T.random.seed(5)
  local emb = L.EmbedID(30, 6, { ignore_label = opts.ignore_label })
  local lin = L.Linear(6, 30)
  local xs, ts = {}, {}
  for k = 1, steps do
    xs[k] = k % 2 == 0 and T.array({ 7, 3, 7, k }, 'int32') or T.random.randint(0, 30, { 4 }, 'int32')
    if opts.ignore_label and k == 3 then xs[k] = T.array({ opts.ignore_label, 1, 2, opts.ignore_label }, 'int32') end
    ts[k] = T.random.randint(0, 30, { 4 }, 'int32')
  end
  local function loss_of(k) return F.softmax_cross_entropy(lin(emb(xs[k])), ts[k]) end
  return emb, lin, loss_of
end

describe('in-place gradient accumulation (Linear, EmbedID over many steps)', function()
  for _, steps in ipairs({ 1, 2, 3, 7 }) do
    it('matches the node path and the sum of single steps for ' .. steps .. ' steps', function()
      local emb, lin, loss_of = model_grads(steps)
      local loss = 0
      for k = 1, steps do loss = loss + loss_of(k) end
      loss:backward()
      local gE, gW, gb = emb.W.grad:copy(), lin.W.grad:copy(), lin.b.grad:copy()

      emb:cleargrads() lin:cleargrads()
      loss:backward({ enable_double_backprop = true })
      assert.is_true(close(emb.W.grad, gE, 1e-6))
      assert.is_true(close(lin.W.grad, gW, 1e-6))
      assert.is_true(close(lin.b.grad, gb, 1e-6))

      -- one step at a time: .grad accumulates across backward calls
      emb:cleargrads() lin:cleargrads()
      for k = 1, steps do loss_of(k):backward() end
      assert.is_true(close(emb.W.grad, gE, 1e-6))
      assert.is_true(close(lin.W.grad, gW, 1e-6))
      assert.is_true(close(lin.b.grad, gb, 1e-6))
    end)
  end

  it('adds to gradients left from an earlier backward (no cleargrads)', function()
    local emb, lin, loss_of = model_grads(5)
    local function run()
      local loss = 0
      for k = 1, 5 do loss = loss + loss_of(k) end
      loss:backward()
    end
    run()
    local gE, gW = emb.W.grad:copy(), lin.W.grad:copy()
    run()
    assert.is_true(close(emb.W.grad, gE * 2, 1e-6))
    assert.is_true(close(lin.W.grad, gW * 2, 1e-6))
  end)

  it('leaves the rows of ignore_label ids at zero', function()
    local emb, _, loss_of = model_grads(5, { ignore_label = 0 })
    local loss = 0
    for k = 1, 5 do loss = loss + loss_of(k) end
    loss:backward()
    local g = emb.W.grad
    assert.are.equal(0, T.max(T.abs(g:slice({ 0, 1 }))):item())
    local ref = emb.W.grad:copy()
    emb:cleargrads()
    loss:backward({ enable_double_backprop = true })
    assert.is_true(close(emb.W.grad, ref, 1e-6))
  end)

  it('gives every parameter its own gradient tensor (no sum shared between two W)', function()
    local emb, lin, loss_of = model_grads(4)
    local loss = 0
    for k = 1, 4 do loss = loss + loss_of(k) end
    loss:backward()
    assert.are_not.equal(emb.W.grad, lin.W.grad)
    local before = lin.W.grad:copy()
    emb.W.grad:fill_(0)
    assert.is_true(close(lin.W.grad, before, 0))
  end)
end)
