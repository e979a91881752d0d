-- links/_util.lua: small helpers shared by the concrete links.
-- (Arguments and options go through chainer._args: args.signature + args.parse
-- for constructors, args.options for the options table of a call.)
local T = require 'chainer.tensor'
local Parameter = require 'chainer.parameter'
local I = require 'chainer.initializers'
local args = require 'chainer._args'

local M = {}

-- Initializer for a weight (nil -> default) and for a bias (nil -> zeros).
function M.weight_init(init, fn, default)
  return I._get_initializer(init, fn, default)
end
function M.bias_init(init, fn)
  if init == nil then return I.Constant(0) end
  return I._get_initializer(init, fn)
end

-- A Parameter from an initializer (shape nil: lazy).
function M.param(init, shape)
  return Parameter(init, shape)
end

-- tuple(v, n): a number repeated n times, or a table copied.
function M.tuple(v, n)
  if type(v) == 'number' then
    local t = {}
    for i = 1, n do t[i] = v end
    return t
  end
  return v
end

-- Checks a size argument a link cannot do without: a positive integer, or
-- (when n is given) also a table of n positive integers, as ksize may be.
-- The error names the link and the argument, with no file position: a
-- link's init runs a few calls below the user's line.
local function is_size(v) return type(v) == 'number' and v == math.floor(v) and v >= 1 end
function M.check_size(link, name, v, n)
  local ok = is_size(v)
  if not ok and n and type(v) == 'table' and #v == n then
    ok = true
    for i = 1, n do ok = ok and is_size(v[i]) end
  end
  if not ok then
    local want = n and string.format('a positive integer or a table of %d', n) or 'a positive integer'
    local got = type(v) == 'table' and 'a table of ' .. #v or tostring(v)
    error(string.format('%s: %s must be %s (got %s)', link, name, want, got), 0)
  end
  return v
end

-- Product of x's shape from axis `from` (1-based) on.
function M.size_from(shape, from)
  local s = 1
  for i = from, #shape do s = s * shape[i] end
  return s
end

-- The channel arguments of a (de)convolution link, a = its parsed
-- arguments: Chainer's (in_channels, out_channels, ksize) or the short
-- form (out_channels, ksize); in_channels nil or false is inferred at the
-- first call.  Returns in_channels (or nil), out_channels, ksize.  Error
-- levels: this, _configure, the subclass init, Link.new, the user.
function M.conv_channels(fn, a)
  local in_channels, out_channels, ksize = a.in_channels, a.out_channels, a.ksize
  if ksize == nil then in_channels, out_channels, ksize = nil, in_channels, out_channels end
  if in_channels == false then in_channels = nil end
  if type(out_channels) ~= 'number' then
    error(fn .. ': out_channels must be a number (got ' .. type(out_channels) .. ')', 5)
  end
  if ksize == nil then error(fn .. ': ksize is required', 5) end
  return in_channels, out_channels, ksize
end

-- The tensor of a Variable or tensor (nil for anything else).
function M.data(x)
  if T.is_tensor(x) then return x end
  if type(x) == 'table' and x._is_variable then return x._data end
  return nil
end

-- The tensor of a link's input x when the link needs it before calling its
-- function (a lazy size taken from x, a state shaped like x): a Variable or
-- a tensor, else the error the function `fn` gives a link with known sizes,
-- "linear: x must be a Variable or a tensor (got table)".
function M.input_data(fn, x)
  return args.array(fn, 'x', x)
end

-- gamma (initial_gamma, default 1) and beta (initial_beta, default 0) of
-- shape {size} (size nil: lazy, see init_gamma_beta) for the normalizations.
-- highprec: the parameters' dtype is chainer.get_dtype(nil, 'float32')
-- (float32 under mixed16, as Chainer's GroupNormalization).
function M.gamma_beta(self, fn, initial_gamma, initial_beta, size, highprec)
  if initial_gamma == nil then initial_gamma = 1 end
  if initial_beta == nil then initial_beta = 0 end
  local gi, bi = I._get_initializer(initial_gamma, fn), I._get_initializer(initial_beta, fn)
  if highprec then
    local dt = require('chainer.config').get_dtype(nil, 'float32')
    rawset(gi, 'dtype', rawget(gi, 'dtype') or dt)
    rawset(bi, 'dtype', rawget(bi, 'dtype') or dt)
  end
  self.gamma = M.param(gi, size and { size } or nil)
  self.beta = M.param(bi, size and { size } or nil)
end

-- Initialises lazy gamma and beta to x's channel count (axis 1).
function M.init_gamma_beta(self, x)
  if self.gamma._data == nil then
    local n = M.data(x).shape[2]
    self.gamma:initialize({ n })
    self.beta:initialize({ n })
  end
end

-- A sampler over counts^power (Chainer's WalkerAlias) and the vocabulary
-- size, for NegativeSampling and BlackOut.
function M.unigram_sampler(counts, power)
  local WalkerAlias = require 'chainer.utils.walker_alias'
  local c = counts
  if T.is_tensor(c) then c = c:astype('float64'):reshape(-1):totable() end
  if type(c) ~= 'table' or #c == 0 then error('the counts must be a non-empty list or tensor', 4) end
  local p = {}
  for i = 1, #c do p[i] = c[i] ^ power end
  return WalkerAlias(p), #c
end

-- The arrays of Chainer 7's Link.from_params(W, b, ...): W (a Variable or
-- tensor) with w_ndim axes, and b (or nil) with W's first axis as its size.
-- Errors blame the caller of from_params.
function M.from_params_arrays(fn, W, b, w_ndim)
  local args = require 'chainer._args'
  local w = args.float_array(fn, 'W', W, 4)
  if w.ndim ~= w_ndim then
    args.fail(string.format('%s: W must have %d axes (got shape (%s))', fn, w_ndim, table.concat(w.shape, ', ')), 4)
  end
  local bias
  if b ~= nil and b ~= false then
    bias = args.float_array(fn, 'b', b, 4)
    if bias.size ~= w.shape[1] then
      args.fail(string.format('%s: b has %d elements, W has %d outputs (its first axis)', fn, bias.size, w.shape[1]), 4)
    end
  end
  return w, bias
end

return M
