-- chainer._args: the one argument layer (options, positional signatures,
-- arrays from Variable-or-tensor arguments).
local chainer = require 'chainer'
local T = chainer.tensor
local args = require 'chainer._args'
local err_of = require('helpers').err_of

describe('_args.options', function()
  local ACC = args.accept { 'keepdims', 'axis' }

  it('returns the options, or a shared read-only empty table for nil', function()
    local o = { axis = 1 }
    assert.equal(o, args.options('f', o, ACC))
    local e = args.options('f', nil, ACC)
    assert.is_nil(e.axis)
    assert.has_error(function() e.axis = 1 end)
  end)

  it('rejects unknown keys, listing the accepted ones', function()
    assert.matches("F.sum: unknown option 'axes' %(accepted: axis, keepdims%)",
      err_of(args.options, 'F.sum', { axes = 1 }, ACC))
  end)

  it('rejects a non-table and a tensor as options', function()
    assert.has_error(function() args.options('f', 3, ACC) end, 'f: options must be a table (got number)')
    assert.has_error(function() args.options('f', T.zeros { 2 }, ACC) end, 'f: options must be a table (got a tensor)')
  end)

  it('takes an inline list too', function()
    assert.has_error(function() args.options('g', { b = 1 }, { 'a' }) end, "g: unknown option 'b' (accepted: a)")
  end)
end)

describe('_args.parse', function()
  local SIG = args.signature { 'in_size', 'out_size', 'nobias' }
  local function p(...) return args.parse('L.Linear', SIG, select('#', ...), ...) end

  it('fills names in order and merges a trailing options table', function()
    local a = p(3, 4, { nobias = true })
    assert.same({ in_size = 3, out_size = 4, nobias = true }, a)
    assert.same({ in_size = 3 }, p(3, nil, nil))
  end)

  it('rejects unknown names, extra positions and duplicates', function()
    assert.has_error(function() p(3, { outsize = 4 }) end,
      "L.Linear: unknown option 'outsize' (accepted: in_size, out_size, nobias)")
    assert.has_error(function() p(1, 2, 3, 4) end)
    assert.has_error(function() p(3, 4, { out_size = 5 }) end, 'L.Linear: out_size given both positionally and in the options')
  end)

  it('accepts keyword-only names in the options table, never by position', function()
    local KW = args.signature({ 'loop', 'shuffle' }, { 'repeat_' })
    assert.same({ repeat_ = false }, args.parse('It', KW, 1, { repeat_ = false }))
    assert.has_error(function() args.parse('It', KW, 3, true, true, false) end)
    assert.has_error(function() args.parse('It', KW, 1, { rep = 1 }) end,
      "It: unknown option 'rep' (accepted: loop, shuffle, repeat_)")
  end)

  it('parse_at blames the frame the caller names', function()
    local SIG = args.signature { 'a' }
    local function public(...)
      local o = args.parse_at(2, 'public', SIG, select('#', ...), ...)   -- not a tail call: its frame counts
      return o
    end
    local ok, err = pcall(function() public({ b = 1 }) end)   -- this line is the one blamed
    assert.is_false(ok)
    assert.matches('args_spec.lua:%d+: public: unknown option', err)
  end)
end)

describe('_args.signature with keyword-only names', function()
  local SIG = args.signature({ 'stride', 'pad' }, { 'groups' })

  it('takes keyword-only names by name only', function()
    assert.same({ stride = 2, groups = 3 }, args.parse('F.conv', SIG, 2, 2, { groups = 3 }))
    assert.has_error(function() args.parse('F.conv', SIG, 3, 1, 0, 3) end,
      'F.conv: too many positional arguments (3 given, at most 2: stride, pad)')
  end)

  it('lists positional then keyword-only names for an unknown one', function()
    assert.has_error(function() args.parse('F.conv', SIG, 1, { group = 3 }) end,
      "F.conv: unknown option 'group' (accepted: stride, pad, groups)")
  end)
end)

describe('_args.parse_at', function()
  local SIG = args.signature { 'reduce' }
  -- a helper parsing for a public function: level 3 blames the public function's caller
  local function helper(...)
    local o = args.parse_at(3, 'F.loss', SIG, select('#', ...), ...)
    return o
  end
  local function public(...)
    local o = helper(...)
    return o
  end

  it('raises at the given level', function()
    local ok, err = pcall(function()
      local o = public({ reduc = 'no' }) -- this line is blamed
      return o
    end)
    assert.is_false(ok)
    assert.matches("args_spec.lua:%d+: F.loss: unknown option 'reduc'", err)
    assert.same({ reduce = 'no' }, public('no'))
  end)
end)

describe('_args arrays', function()
  it('gives the tensor of a Variable or a tensor', function()
    local t = T.ones { 2 }
    assert.equal(t, args.array('f', 'x', t))
    assert.equal(t, args.array('f', 'x', chainer.Variable(t)))
  end)

  it('says when a Variable has no data', function()
    local p = chainer.Parameter()
    assert.has_error(function() args.array('F.linear', 'W', p) end,
      'F.linear: W must be a Variable or a tensor (got a Variable without data (an uninitialised Parameter))')
  end)

  it('names the function, the argument and what came', function()
    assert.has_error(function() args.array('F.relu', 'x', 'a') end, 'F.relu: x must be a Variable or a tensor (got string)')
    assert.has_error(function() args.float_array('F.relu', 'x', T.ones({ 2 }, 'int32')) end,
      'F.relu: x must be a float tensor (float16, float32 or float64; got int32)')
    assert.has_error(function() args.int_array('F.embed_id', 'x', T.ones { 2 }) end,
      'F.embed_id: x must be an integer tensor (got float32)')
  end)
end)
