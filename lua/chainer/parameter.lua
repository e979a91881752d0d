-- parameter.lua: chainer.Parameter, the trainable Variable a Link owns.
--
--   chainer.Parameter(I.Normal(1), {out, in})   -- initializer + shape
--   chainer.Parameter(0, {out})                 -- constant fill
--   chainer.Parameter(tensor)                   -- given data
--   chainer.Parameter(I.Normal(1))              -- lazy: shape known later,
--   p:initialize({n, m})                        --   then initialise
--
-- An initializer is anything callable as init(array) that fills the array
-- in place (chainer.initializers), a number, or a tensor.  Its `dtype`
-- field, when present, picks the dtype; else chainer.config.dtype.
-- `update_rule` is the slot optimizers fill.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local Variable = require 'chainer.variable'
local GradBucket = require 'chainer._grad_bucket'

local Parameter = Variable:extend('Parameter')
Parameter._is_parameter = true

local function callable(v)
  if type(v) == 'function' then return true end
  local mt = getmetatable(v)
  return type(mt) == 'table' and mt.__call ~= nil
end

-- Parameter(initializer, shape, {name =, requires_grad =}) / Parameter(tensor)
local PARAMETER_OPTIONS = args.accept { 'name', 'requires_grad' }

function Parameter:init(initializer, shape, opts)
  if type(shape) == 'table' and shape[1] == nil and next(shape) ~= nil and opts == nil then
    opts, shape = shape, nil           -- Parameter(init, {name = 'W'})
  end
  if type(shape) == 'number' then shape = { shape } end
  opts = args.options('Parameter', opts, PARAMETER_OPTIONS, 3)
  local data
  if T.is_tensor(initializer) then
    data = initializer
    initializer = nil
  elseif initializer ~= nil and type(initializer) ~= 'number' and not callable(initializer) then
    if type(initializer) == 'table' and not initializer._is_variable then
      data = T.array(initializer)
      initializer = nil
    else
      error('Parameter: the initializer must be a callable initializer, a number, a tensor or nil (got ' ..
        type(initializer) .. ')', 3)
    end
  end
  Variable.init(self, data, { name = opts.name, requires_grad = opts.requires_grad })
  rawset(self, 'initializer', initializer)
  rawset(self, 'update_rule', false)
  rawset(self, '_initial_device', -1)
  if data == nil and shape ~= nil then self:initialize(shape) end
end

local function generate(initializer, shape, device)
  local dtype = type(initializer) == 'table' and rawget(initializer, 'dtype') or nil
  if dtype == nil and type(initializer) == 'table' then dtype = initializer.dtype end
  dtype = dtype or T.default_float
  local data
  if initializer == nil then
    data = T.full(shape, 0 / 0, dtype)           -- NaN: makes a forgotten init obvious
  elseif type(initializer) == 'number' then
    data = T.full(shape, initializer, dtype)
  else
    data = T.empty(shape, dtype)
    initializer(data)
  end
  if device ~= -1 then data = data:to_device(device) end
  return data
end

-- Creates the data of a lazy parameter with `shape`.
function Parameter:initialize(shape)
  if type(shape) == 'number' then shape = { shape } end
  if type(shape) ~= 'table' then error('Parameter.initialize: shape must be a table of integers', 2) end
  local data = generate(rawget(self, 'initializer'), shape, rawget(self, '_initial_device') or -1)
  self.array = data
  if rawget(self, '_zeroed') then
    rawset(self, '_zeroed', nil)
    self:zerograd()
  end
end

-- zerograd(): zeros; a parameter with a gradient slot (_grad_bucket.lua)
-- gets its slot zeroed, so that backward adds into it in place.
function Parameter:zerograd()
  local slot = GradBucket.slot(self)
  if slot == nil then return Variable.zerograd(self) end
  slot:fill_(0)
  self.grad = slot
end

function Parameter:to_device(device)
  rawset(self, '_initial_device', T.device_id(device))
  return Variable.to_device(self, device)
end
function Parameter:to_cpu() return self:to_device(-1) end
function Parameter:to_gpu(device) return self:to_device(device or 0) end

Parameter.__tostring = function(p)
  if rawget(p, '_data') == nil then
    return 'parameter' .. (rawget(p, 'name') and (' ' .. rawget(p, 'name')) or '') .. '(uninitialized)'
  end
  return 'parameter' .. Variable.__tostring(p):sub(#'variable' + 1)
end

return Parameter
