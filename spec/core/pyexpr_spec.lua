-- testing/pyexpr.lua: the Python subset the oracle's `call` fields use.
local pyexpr = require 'chainer.testing.pyexpr'

-- an environment whose calls apply Lua functions to their positional
-- arguments followed by a table of the keyword arguments (if any)
local function env_of(names)
  local env = { names = names }
  function env.call(fn, args, kwargs)
    if #kwargs > 0 then
      local kw = {}
      for _, k in ipairs(kwargs) do kw[k.name] = k.value end
      args[#args + 1] = kw
    end
    return fn(unpack(args, 1, table.maxn(args)))
  end
  function env.binop(op, a, b)
    if op == '+' then return a + b elseif op == '*' then return a * b end
    error('unexpected operator ' .. op)
  end
  return env
end

local function run(src, names)
  local env = env_of(names or {})
  return pyexpr.eval(pyexpr.parse(src), env), env
end

describe('pyexpr', function()
  it('evaluates calls with keyword arguments and operators', function()
    local got = run('f(2, 3 * x, k=True) + 1', {
      x = 4, f = function(a, b, kw) return a + b + (kw.k and 100 or 0) end })
    assert.are.equal(115, got)
  end)

  it('reads lambdas as Lua functions whose parameters shadow the names', function()
    local fn = run('lambda shape: samples', { samples = 'S', shape = 'outer' })
    assert.are.equal('function', type(fn))
    assert.are.equal('S', fn({ 3, 3 }))
    local add = run('lambda a, b: a + b * k', { k = 10 })
    assert.are.equal(1 + 2 * 10, add(1, 2))
    local shadow = run('lambda x: x', { x = 'outer' })
    assert.are.equal('inner', shadow('inner'))
  end)

  it('passes a lambda as an argument, ending it at the comma', function()
    local got = run('g(lambda s: s + 1, 5)', { g = function(f, v) return f(v) end })
    assert.are.equal(6, got)
  end)

  it('parses statements: expressions, name and attribute assignments', function()
    local target, ast = pyexpr.parse_statement('y = f(x)')
    assert.are.equal('y', target)
    assert.are.equal('call', ast.k)
    target = pyexpr.parse_statement('f(x)')
    assert.is_nil(target)
    target, ast = pyexpr.parse_statement('l.sampler.sample = lambda shape: samples')
    assert.are.equal('attr', target.k)
    assert.are.equal('sample', target.name)
    assert.are.equal('lambda', ast.k)
  end)

  it('assigns to names and attributes (through env.setattr when given)', function()
    local obj = { inner = {} }
    local env = env_of({ l = obj, v = 7 })
    local target, ast = pyexpr.parse_statement('l.inner.value = v')
    pyexpr.assign(target, pyexpr.eval(ast, env), env)
    assert.are.equal(7, obj.inner.value)
    target, ast = pyexpr.parse_statement('w = v')
    pyexpr.assign(target, pyexpr.eval(ast, env), env)
    assert.are.equal(7, env.names.w)
    local seen
    env.setattr = function(o, name, value) seen = { o, name, value } end
    target, ast = pyexpr.parse_statement('l.x = v')
    pyexpr.assign(target, pyexpr.eval(ast, env), env)
    assert.are.same({ obj, 'x', 7 }, seen)
  end)

  it('rejects what it cannot read, naming the text', function()
    assert.error_matches(function() pyexpr.parse_statement('f(x) = 1') end,
      'pyexpr: can only assign to a name or an attribute in: f%(x%) = 1')
    assert.error_matches(function() pyexpr.parse('lambda 1: x') end,
      'pyexpr: expected a parameter name in the lambda')
    assert.error_matches(function() pyexpr.parse('lambda a b: x') end,
      "pyexpr: expected ':' after the lambda's parameters")
    assert.error_matches(function() pyexpr.parse_statement('x = 1 2') end,
      "pyexpr: unexpected '2' after the statement")
  end)
end)
