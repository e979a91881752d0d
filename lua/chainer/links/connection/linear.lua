-- links/connection/linear.lua: L.Linear(in_size, out_size, {nobias, initialW, initial_bias}).
--
-- L.Linear(out_size) and L.Linear(nil, out_size) infer in_size from the
-- first input (the input's size per example).  W: (out_size, in_size),
-- default LeCunNormal; b: (out_size), default zeros.
local F = require 'chainer.functions'
local Link = require('chainer.link').Link
local args = require 'chainer._args'
local U = require 'chainer.links._util'

local Linear = Link:extend('Linear')

local SIGNATURE = args.signature { 'in_size', 'out_size', 'nobias', 'initialW', 'initial_bias' }
local CALL_OPTIONS = args.accept { 'n_batch_axes' }

-- Linear.from_params(W, b, nobias): a Linear of W's shape (out_size,
-- in_size) whose parameters start as copies of W and b (Chainer 7).
local FROM_PARAMS = args.signature { 'W', 'b', 'nobias' }
function Linear.from_params(...)
  local fn = 'L.Linear.from_params'
  local a = args.parse(fn, FROM_PARAMS, select('#', ...), ...)
  local w, b = U.from_params_arrays(fn, a.W, a.b, 2)
  return Linear(w.shape[2], w.shape[1], a.nobias or false, w, b)
end

function Linear:init(...)
  local a = args.parse('L.Linear', SIGNATURE, select('#', ...), ...)
  local in_size, out_size = a.in_size, a.out_size
  if out_size == nil then in_size, out_size = nil, in_size end
  if type(out_size) ~= 'number' then
    error('Linear: out_size must be a number (got ' .. type(out_size) .. ')', 3)
  end
  if in_size ~= nil and in_size ~= false and type(in_size) ~= 'number' then
    error('Linear: in_size must be a number or nil (got ' .. type(in_size) .. ')', 3)
  end
  if in_size == false then in_size = nil end
  self.in_size = in_size
  self.out_size = out_size
  self.nobias = a.nobias and true or false
  self.W = U.param(U.weight_init(a.initialW, 'Linear'), in_size and { out_size, in_size } or nil)
  if not self.nobias then
    self.b = U.param(U.bias_init(a.initial_bias, 'Linear'), { out_size })
  end
end

function Linear:_initialize_params(in_size)
  self.W:initialize({ self.out_size, in_size })
end

function Linear:printable_specs()
  return { { 'in_size', self.in_size }, { 'out_size', self.out_size }, { 'nobias', self.nobias } }
end

-- forward(x, {n_batch_axes = 1})
function Linear:forward(x, opts)
  local W = self.W
  if opts ~= nil then args.options('L.Linear', opts, CALL_OPTIONS) end
  if W._data == nil then
    local shape = U.input_data('linear', x).shape
    local nba = opts and opts.n_batch_axes or 1
    self:_initialize_params(U.size_from(shape, nba + 1))
  end
  if opts then return F.linear(x, W, self.b, opts) end
  local y = F.linear(x, W, self.b)
  return y   -- (not a tail call: a returning trace may not end on one)
end

return { Linear = Linear }
