-- Specs for the weak reference from a VariableNode to its Variable
-- (variable.lua: consecutive nodes share a weak page of Variables).  The
-- graph must never keep a Variable alive, each Variable must die on its own
-- whatever its page neighbours do, and a page must go with its nodes.
local chainer = require 'chainer'
local T = chainer.tensor
local Variable = chainer.Variable

local function full_collect()
  collectgarbage('collect')
  collectgarbage('collect')
end

-- n output Variables of separate graph nodes (x * 2 each), in creation
-- order, so that they fill consecutive slots of one or more pages.
local function outputs(n)
  local x = Variable(T.array({ 1, 2 }))
  local ys = {}
  for i = 1, n do ys[i] = x * 2 end
  return ys, x
end

describe('VariableNode weak reference to its Variable', function()
  it('does not keep the Variable alive: the node outlives it and says so', function()
    local ys = outputs(3)
    local node = ys[2].node
    assert.are.equal(ys[2], node:get_variable_or_none())
    ys[2] = nil
    full_collect()
    assert.is_nil(node:get_variable_or_none())
    assert.are.equal(ys[1], ys[1].node:get_variable_or_none())
    assert.are.equal(ys[3], ys[3].node:get_variable_or_none())
    -- x * 2 retains nothing: the data is gone with the Variable
    assert.has_error(function() node:get_variable() end)
    assert.is_nil(node:shape())
    assert.are.equal('float32', node:dtype())
  end)

  it('lets the Variables of one page die independently, across page boundaries', function()
    local n = 200                      -- more than three pages of 64
    local ys = outputs(n)
    local nodes = {}
    for i = 1, n do nodes[i] = ys[i].node end
    for i = 1, n do
      if i % 3 ~= 0 then ys[i] = nil end
    end
    full_collect()
    for i = 1, n do
      if i % 3 == 0 then
        assert.are.equal(ys[i], nodes[i]:get_variable_or_none())
        assert.are.equal(nodes[i], ys[i].node)
      else
        assert.is_nil(nodes[i]:get_variable_or_none())
      end
    end
  end)

  it('gives the node of a collected Variable a new Variable from retained data, kept by reference', function()
    local x = Variable(T.array({ 1, 2, 3 }))
    local y = x * 2
    local node = y.node
    node:retain_data()
    local before = {}
    for i = 1, 70 do before[i] = x * 3 end   -- fill the rest of y's page and more
    y = nil
    full_collect()
    assert.is_nil(node:get_variable_or_none())
    local v = node:get_variable()
    assert.are.same({ 2, 4, 6 }, v.array:totable())
    assert.are.equal(node, v.node)
    assert.are.equal(v, node:get_variable())        -- the node refers to it now
    assert.are.equal(v, node:get_variable_or_none())
    for i = 1, 70 do assert.are.equal(before[i], before[i].node:get_variable_or_none()) end
    v = nil
    full_collect()
    assert.is_nil(node:get_variable_or_none())      -- weakly, as before
  end)

  it('frees a page once all its nodes are gone', function()
    local ys = outputs(3 * 64)
    local watch = setmetatable({ ys[1].node._vref }, { __mode = 'v' })
    assert.is_table(watch[1])
    ys = nil
    full_collect()
    assert.is_nil(watch[1])
  end)

  it('keeps retain_grad and grad_var propagation working through many nodes', function()
    local x = Variable(T.array({ 1, 2 }))
    local hs = { x }
    for i = 2, 150 do hs[i] = hs[i - 1] * 1 + 0 end   -- 298 nodes over several pages
    local loss = chainer.functions.sum(hs[150])
    loss:backward({ retain_grad = true })
    for i = 1, 150 do assert.are.same({ 1, 1 }, hs[i].grad:totable()) end
    -- a gradient already on a live input is added to (load_if_new)
    x.grad = T.array({ 10, 20 })
    local h = x
    for _ = 1, 150 do h = h * 1 end
    chainer.functions.sum(h):backward()
    assert.are.same({ 11, 21 }, x.grad:totable())
  end)
end)
