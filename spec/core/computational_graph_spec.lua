-- Specs for chainer.computational_graph.
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local cg = chainer.computational_graph

local function has_dot()
  local p = io.popen('command -v dot 2>/dev/null')
  local out = p:read('*a')
  p:close()
  return out ~= ''
end

describe('computational_graph', function()
  local x = chainer.Variable(T.array({ 1, 2, 3 }), 'x')
  local y = F.sum(F.exp(x) * x + 1)

  it('collects every node and edge behind the outputs', function()
    local g = cg.build_computational_graph({ y })
    local nf, nv = 0, 0
    for _, n in ipairs(g.nodes) do
      if chainer.isinstance(n, chainer.FunctionNode) then nf = nf + 1 else nv = nv + 1 end
    end
    assert.are.equal(4, nf)        -- Exp, Mul, AddConstant, Sum
    assert.are.equal(5, nv)        -- x, exp(x), product, sum input, y
    assert.are.equal(9, #g.edges)  -- x feeds Exp and Mul
  end)

  it('dumps DOT with labels, names and styles', function()
    local dot = cg.build_computational_graph({ y }, { rankdir = 'LR' }):dump('dot')
    assert.truthy(dot:find('^digraph graphname{rankdir=LR;'))
    assert.truthy(dot:find('label="x: (3), float32"', 1, true))
    assert.truthy(dot:find('label="Exp"', 1, true))
    assert.truthy(dot:find('shape="octagon"', 1, true))
    assert.truthy(dot:find('shape="record"', 1, true))
    assert.truthy(dot:find('-> ', 1, true))
    local noname = cg.build_computational_graph({ y }, { show_name = false }):dump()
    assert.falsy(noname:find('x: ', 1, true))
    local styled = cg.build_computational_graph({ y }, { variable_style = { shape = 'box', color = 'red' } }):dump()
    assert.truthy(styled:find('color="red"', 1, true))
    assert.is_false(pcall(cg.build_computational_graph, { y }, { rankdir = 'XX' }))
  end)

  it("writes shapes as Chainer's VariableNode.label does: (1), not Python's (1,)", function()
    -- Chainer 7.8.1: '(%s), %s' % (', '.join(map(str, shape)), dtype), and the dtype alone for
    -- a 0-d node; DotNode uses that label unchanged
    local one = chainer.Variable(T.array({ 5 }), 'one')
    local mat = chainer.Variable(T.ones({ 2, 3 }), 'mat')
    local dot = cg.build_computational_graph({ F.sum(one * 2) + F.sum(mat) }):dump()
    assert.truthy(dot:find('label="one: (1), float32"', 1, true), dot)
    assert.truthy(dot:find('label="mat: (2, 3), float32"', 1, true), dot)
    assert.truthy(dot:find('label="float32"', 1, true), dot)     -- the 0-d sums
    assert.falsy(dot:find(',)', 1, true), dot)
  end)

  it('remove_variable links functions directly', function()
    local g = cg.build_computational_graph({ y }, { remove_variable = true })
    assert.are.equal(4, #g.nodes)
    assert.are.equal(3, #g.edges)    -- Exp->Mul, Mul->AddConstant, AddConstant->Sum
    for _, e in ipairs(g.edges) do
      assert.is_true(chainer.isinstance(e[1], chainer.FunctionNode) and chainer.isinstance(e[2], chainer.FunctionNode))
    end
  end)

  it('produces DOT that graphviz accepts', function()
    if not has_dot() then pending('graphviz (dot) is not installed') return end
    local path = os.tmpname()
    local f = io.open(path, 'w')
    f:write(cg.build_computational_graph({ y }):dump())
    f:close()
    local p = io.popen('dot -Tsvg ' .. path .. ' 2>&1')
    local svg = p:read('*a')
    local ok = p:close()
    os.remove(path)
    assert.truthy(svg:find('<svg', 1, true), svg)
    assert.truthy(svg:find('Exp', 1, true))
  end)
end)
