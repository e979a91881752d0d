-- optimizer.lua: chainer.optimizer -- Hyperparameter, UpdateRule, Optimizer,
-- GradientMethod.
--
--   local opt = optimizers.Adam{alpha = 1e-3}:setup(model)
--   opt:add_hook(optimizer_hooks.WeightDecay(5e-4))
--   opt:update(lossfun, x, t)         -- cleargrads, loss = lossfun(x, t), backward, update
--   opt:update()                      -- with the grads already computed
--   opt.alpha = opt.alpha * 0.5       -- hyperparameters are plain mutable fields
--   model.l1.W.update_rule.hyperparam.alpha = 1e-4   -- per-parameter override
--
-- Chainer's design, kept as is: the optimizer owns a Hyperparameter; every
-- parameter gets its own UpdateRule whose Hyperparameter has the
-- optimizer's as parent, so an entry the rule does not set is read from the
-- optimizer at every update.  The numbers themselves are fused C kernels
-- (runtime/cpu/optimizer_updates.c): one pass over each parameter.
local T = require 'chainer.tensor'
local class = require 'chainer.class'
local Variable = require 'chainer.variable'
local Parameter = require 'chainer.parameter'
local args = require 'chainer._args'
local base_serializer = require 'chainer.serializer'

local M = {}

local function callable(v)
  if type(v) == 'function' then return true end
  local mt = getmetatable(v)
  return type(mt) == 'table' and mt.__call ~= nil
end
M._callable = callable

---------------------------------------------------------------------------
-- Hyperparameter: a table of entries that falls back to its parent
---------------------------------------------------------------------------
local Hyperparameter = class.Object:extend('Hyperparameter')
local hp_methods = {}

Hyperparameter.__index = function(self, k)
  local m = hp_methods[k]
  if m ~= nil then return m end
  local parent = rawget(self, '_parent')
  if parent then return parent[k] end
  return nil
end

-- Hyperparameter([parent])
function Hyperparameter.new(cls, parent)
  if parent ~= nil and not class.isinstance(parent, Hyperparameter) then
    error('Hyperparameter: the parent must be a Hyperparameter (got ' .. type(parent) .. ')', 3)
  end
  return setmetatable({ _parent = parent or false }, cls)
end

function hp_methods.parent(self) return rawget(self, '_parent') or nil end

-- Every entry this object can see (its own over its parents'), as a plain table.
function hp_methods.get_dict(self)
  local parent = rawget(self, '_parent')
  local d = parent and parent:get_dict() or {}
  for k, v in pairs(self) do
    if k ~= '_parent' then d[k] = v end
  end
  return d
end

Hyperparameter.__tostring = function(self)
  local d = self:get_dict()
  local keys = {}
  for k in pairs(d) do keys[#keys + 1] = k end
  table.sort(keys)
  local parts = {}
  for i, k in ipairs(keys) do parts[i] = k .. '=' .. tostring(d[k]) end
  return 'Hyperparameter(' .. table.concat(parts, ', ') .. ')'
end

M.Hyperparameter = Hyperparameter

-- Module-level defaults: a Hyperparameter holding `defaults` (a table).
function M.default_hyperparam(defaults)
  local hp = Hyperparameter()
  for k, v in pairs(defaults) do hp[k] = v end
  return hp
end

---------------------------------------------------------------------------
-- option parsing shared by optimizers and rules
---------------------------------------------------------------------------
-- Reads Chainer's arguments of `fn`, in the order `names`, given either as
-- one options table (`Adam{alpha = 1e-3}`) or positionally (`Adam(1e-3, 0.5)`).
-- Returns a table name -> value holding only the given ones.
local signatures = setmetatable({}, { __mode = 'k' })   -- names list -> args.signature, built once

function M.parse_options(fn, names, n, ...)
  local sig = signatures[names]
  if sig == nil then
    sig = args.signature(names)
    signatures[names] = sig
  end
  local out = args.parse_at(3, fn, sig, n, ...)
  for k, v in pairs(out) do
    if v == false and k ~= 'amsgrad' and k ~= 'adabound' and k ~= 'eps_inside_sqrt' then
      out[k] = nil    -- false stands for Python's None: keep the default
    elseif type(v) ~= 'number' and type(v) ~= 'boolean' then
      error(string.format('%s: %s must be a number (got %s)', fn, k, type(v)), 3)
    end
  end
  return out
end

---------------------------------------------------------------------------
-- UpdateRule
---------------------------------------------------------------------------
local UpdateRule = class.Object:extend('UpdateRule')
UpdateRule.__props = {}
UpdateRule._rule_name = 'UpdateRule'

-- A method (through the class chain) or a computed property (the class's
-- __props: alpha_t, ...) of self: whether k is one, and its value.
local function member(self, k)
  local cls = getmetatable(self)
  local m = cls[k]
  if m ~= nil then return true, m end
  local props = cls.__props
  local p = props and props[k]
  if p ~= nil then return true, p(self) end
  return false, nil
end

-- Methods through the class chain, then computed properties (alpha_t, ...).
UpdateRule.__index = function(self, k)
  local _, v = member(self, k)
  return v
end

-- Subclasses list their hyperparameter names (Chainer's keyword arguments)
-- and, for a missing parent, their module defaults.
UpdateRule._hyper_names = {}
UpdateRule._defaults = false

-- Rule(parent_hyperparam, {name = value, ...}) or Rule{name = value, ...}
function UpdateRule:init(parent, opts, ...)
  local name = getmetatable(self)._rule_name or 'UpdateRule'
  if parent ~= nil and not class.isinstance(parent, Hyperparameter) then
    if opts == nil and type(parent) == 'table' then
      parent, opts = nil, parent
    else
      error(name .. ': the first argument must be a parent Hyperparameter or an options table (got ' ..
        type(parent) .. ')', 3)
    end
  end
  local cls = getmetatable(self)
  rawset(self, 'hyperparam', Hyperparameter(parent or cls._defaults or nil))
  rawset(self, 'enabled', true)
  rawset(self, 't', 0)
  rawset(self, 'state', nil)
  rawset(self, '_pre_hooks', {})
  rawset(self, '_post_hooks', {})
  rawset(self, '_use_fp32_update', false)
  rawset(self, '_fp32_param', false)
  if opts ~= nil then
    local given
    if type(opts) == 'table' and getmetatable(opts) == nil then
      given = M.parse_options(name, cls._hyper_names, 1, opts)
    else
      given = M.parse_options(name, cls._hyper_names, select('#', ...) + 1, opts, ...)
    end
    for k, v in pairs(given) do self.hyperparam[k] = v end
  end
end

local function hook_name(hook, name, fn)
  if name == nil then
    if type(hook) == 'table' then name = hook.name end
    if name == nil then
      error(fn .. ': the hook has no name; pass one ({name = ...})', 3)
    end
  end
  if type(name) ~= 'string' then error(fn .. ': the hook name must be a string (got ' .. type(name) .. ')', 3) end
  return name
end

local function timing_of(hook, timing, fn)
  if timing == nil or timing == 'auto' then
    timing = type(hook) == 'table' and hook.timing or nil
    if timing ~= 'pre' and timing ~= 'post' then timing = 'pre' end
  end
  if timing ~= 'pre' and timing ~= 'post' then
    error(string.format("%s: timing must be 'pre', 'post' or 'auto' (got %s)", fn, tostring(timing)), 3)
  end
  return timing
end

-- add_hook(hook, {name =, timing =}) / add_hook(hook, name, timing).  The
-- hook is called as hook(rule, param) before (or after) the update.
local HOOK_OPTIONS = args.accept { 'name', 'timing' }
local function split_hook_opts(name, timing, fn)
  if type(name) == 'table' then
    args.options(fn, name, HOOK_OPTIONS, 3)
    return name.name, name.timing
  end
  return name, timing
end

local function find_hook(list, name)
  for i, e in ipairs(list) do if e[1] == name then return i end end
  return nil
end

-- What UpdateRule and Optimizer add_hook/remove_hook share: owner keeps
-- {name, hook} pairs in owner._pre_hooks and owner._post_hooks.
local function add_hook(owner, hook, name, timing, fn)
  if not callable(hook) then error(fn .. ': the hook must be callable (got ' .. type(hook) .. ')', 3) end
  name, timing = split_hook_opts(name, timing, fn)
  name = hook_name(hook, name, fn)
  timing = timing_of(hook, timing, fn)
  if find_hook(owner._pre_hooks, name) or find_hook(owner._post_hooks, name) then
    error(string.format("%s: hook '%s' already exists (pass another {name = ...})", fn, name), 3)
  end
  local list = timing == 'pre' and owner._pre_hooks or owner._post_hooks
  list[#list + 1] = { name, hook }
end

local function remove_hook(owner, name, fn)
  for _, list in ipairs({ owner._pre_hooks or {}, owner._post_hooks or {} }) do
    local i = find_hook(list, name)
    if i then table.remove(list, i) return end
  end
  error(string.format("%s: no hook named '%s'", fn, tostring(name)), 3)
end

function UpdateRule:add_hook(hook, name, timing) add_hook(self, hook, name, timing, 'UpdateRule.add_hook') end
function UpdateRule:remove_hook(name) remove_hook(self, name, 'UpdateRule.remove_hook') end

-- Creates the state on first use and keeps it on the parameter's device
-- and dtype (a state loaded from a file may come in float64).
function UpdateRule:_prepare(param)
  local state = self.state
  if state == nil then
    state = {}
    self.state = state
    self:init_state(param)
  end
  local data = param._data
  local pd = data.ptr
  for k, v in pairs(state) do
    if T.is_tensor(v) then
      local vp = v.ptr
      if vp.dev ~= pd.dev then v = v:to_device(pd.dev) end
      if v.ptr.dt ~= pd.dt and vp.numel == pd.numel then v = v:astype(data.dtype) end
      state[k] = v
    end
  end
end

local function run_hooks(list, rule, param)
  for i = 1, #list do list[i][2](rule, param) end
end

-- Loss scaling: a gradient from backward{loss_scale = s} (the parameter
-- remembers s) is divided by s in place before the rule sees it, as
-- Chainer's UpdateRule (in the float32 copy under use_fp32_update).
local function unscale(param, grad)
  local s = rawget(param, '_loss_scale')
  if s ~= nil and grad ~= nil then T.div(grad, s, grad) end
end

-- Updates one parameter: hooks, then update_core (skipped while disabled).
function UpdateRule:update(param)
  if not self.enabled then return end
  self.t = self.t + 1
  local data = param._data
  if self._use_fp32_update and data ~= nil and data.dtype == 'float16' then
    local grad = param.grad
    if grad == nil then return end
    local fp = self._fp32_param
    if not fp then
      fp = Variable(data:astype('float32'), { name = param.name })
      self._fp32_param = fp
    end
    fp.grad = grad:astype('float32')
    self:_prepare(fp)
    unscale(param, fp.grad)
    run_hooks(self._pre_hooks, self, fp)
    self:update_core(fp)
    run_hooks(self._post_hooks, self, fp)
    data:copy_(fp._data)
    fp.grad = nil
  else
    if data ~= nil then
      self:_prepare(param)
      unscale(param, param.grad)
    end
    run_hooks(self._pre_hooks, self, param)
    self:update_core(param)
    run_hooks(self._post_hooks, self, param)
  end
end

-- Skips parameters without a gradient, as Chainer's rules do; then
-- update_core_gpu for a parameter on a GPU, update_core_cpu otherwise, as
-- Chainer dispatches.  chainlua's tensor operations run on every device, so
-- the GPU method defaults to the CPU one: a rule needs only update_core_cpu.
function UpdateRule:update_core(param)
  if param.grad == nil then return end
  local data = param._data
  if data ~= nil and data.ptr.dev >= 0 then
    self:update_core_gpu(param)
  else
    self:update_core_cpu(param)
  end
end

function UpdateRule:update_core_gpu(param) return self:update_core_cpu(param) end

-- Chainer's flag for rules whose update is elementwise (a hint for fusing
-- updates; chainlua's fused optimizer kernels do not read it).
UpdateRule.is_elementwise = false

function UpdateRule:update_core_cpu(param)
  error(tostring(getmetatable(self).__name) .. ': update_core is not implemented', 2)
end

-- Fills self.state (a table) for `param`; rules with state override it.
function UpdateRule:init_state(param) end

-- The names of the state entries this rule creates (sorted).
function UpdateRule:_state_keys()
  local probe = setmetatable({}, getmetatable(self))
  for k, v in pairs(self) do rawset(probe, k, v) end
  rawset(probe, 'state', {})
  local arr = T.empty({ 1 }, 'float32')
  probe:init_state(Variable(arr, { grad = arr }))
  local keys = {}
  for k in pairs(probe.state) do keys[#keys + 1] = k end
  table.sort(keys)
  return keys
end

-- Saves/loads `t` and the state (not the parameter) under the serializer.
function UpdateRule:serialize(serializer)
  self.t = serializer('t', self.t)
  local state = self.state
  if state == nil then
    if serializer.is_deserializer then
      -- learn the state's keys from a probe.  The state may be absent as a
      -- whole (a file saved before the first update; Chainer raises there,
      -- chainlua keeps the state nil and makes it at the first update), but
      -- once one key is there every other one is required.
      local keys, loaded, absent = self:_state_keys(), {}, {}
      for _, key in ipairs(keys) do
        local value = base_serializer.optional(serializer, key, nil)
        if value == nil then absent[#absent + 1] = key else loaded[key] = value end
      end
      if #absent == #keys then return end
      for _, key in ipairs(absent) do loaded[key] = serializer(key, nil) end
      for _, key in ipairs(keys) do
        local value = loaded[key]
        if value == nil then return end   -- reported as missing (strict) or skipped
        -- an in-memory source hands out its own tensors: never share them
        if T.is_tensor(value) then loaded[key] = value:copy() end
      end
      self.state = loaded
    end
  else
    local keys = {}
    for k in pairs(state) do keys[#keys + 1] = k end
    table.sort(keys)
    for _, k in ipairs(keys) do state[k] = serializer(k, state[k]) end
  end
end

-- Updates float16 parameters through a float32 master copy.
function UpdateRule:use_fp32_update(flag)
  if flag == nil then flag = true end
  self._use_fp32_update = flag and true or false
end

UpdateRule.__tostring = function(self)
  return tostring(getmetatable(self).__name) .. '(' .. tostring(self.hyperparam):match('%((.*)%)') ..
    (self.enabled and '' or ', disabled') .. ')'
end

M.UpdateRule = UpdateRule

-- A rule class for an optimizer: Name, hyperparameter names in Chainer's
-- order, module defaults.
function M.rule_class(name, names, defaults)
  local cls = UpdateRule:extend(name)
  cls._rule_name = name
  cls._hyper_names = names
  cls._defaults = M.default_hyperparam(defaults)
  cls.__props = setmetatable({}, { __index = UpdateRule.__props })
  return cls
end

-- param:update() -- Chainer's Parameter.update: runs the rule, if any.
if rawget(Parameter, 'update') == nil then
  function Parameter:update()
    local rule = rawget(self, 'update_rule')
    if rule then rule:update(self) end
  end
end

---------------------------------------------------------------------------
-- Optimizer
---------------------------------------------------------------------------
local Optimizer = class.Object:extend('Optimizer')
class.check_self(Optimizer)   -- model.cleargrads() (a dot) names the method
Optimizer.__props = {}

-- Reads: methods, properties (Adam's alpha_t), raw fields, then the
-- hyperparameters (opt.lr is opt.hyperparam.lr).
Optimizer.__index = function(self, k)
  local found, v = member(self, k)
  if found then return v end
  local hp = rawget(self, 'hyperparam')
  if hp then return hp[k] end
  return nil
end

-- Writes to a hyperparameter name go to the hyperparameter, so every rule
-- that does not override it sees the new value at its next update.
Optimizer.__newindex = function(self, k, v)
  local cls = getmetatable(self)
  local setters = cls.__setters
  local s = setters and setters[k]
  if s then s(self, v) return end
  local props = cls.__props
  if props and props[k] ~= nil then
    error(string.format('%s: %s is read-only', tostring(cls.__name), tostring(k)), 2)
  end
  local hp = rawget(self, 'hyperparam')
  if hp and hp[k] ~= nil then
    if type(v) ~= 'number' and type(v) ~= 'boolean' then
      error(string.format('%s: hyperparameter %s must be a number (got %s)', tostring(cls.__name), k, type(v)), 2)
    end
    hp[k] = v
    return
  end
  rawset(self, k, v)
end

function Optimizer:init()
  rawset(self, 't', 0)
  rawset(self, 'epoch', 0)
  rawset(self, 'use_auto_new_epoch', false)
  rawset(self, '_pre_hooks', false)
  rawset(self, '_post_hooks', false)
end

-- setup(link): binds the target and resets t, epoch and the hooks; returns self.
function Optimizer:setup(link)
  if type(link) ~= 'table' or link._is_link ~= true then
    error('Optimizer.setup: the target must be a chainer.Link (got ' ..
      (type(link) == 'table' and 'a table' or type(link)) .. ')', 2)
  end
  rawset(self, 'target', link)
  self.t = 0
  self.epoch = 0
  self._pre_hooks = {}
  self._post_hooks = {}
  return self
end

function Optimizer:update()
  error(tostring(getmetatable(self).__name) .. ': update is not implemented', 2)
end

-- to_device(device): moves the target link and every rule's state (and
-- float32 master copy) to `device` (anything chainer.get_device takes:
-- -1, 'cpu', '@numpy', 0, 'cuda:0', '@cupy:0', a Device); returns self.
-- Chainer moves the state lazily at the next update; this moves it now,
-- so a snapshot loaded on the CPU can continue on a GPU and back.
function Optimizer:to_device(device)
  local name = tostring(getmetatable(self).__name)
  local ok, dev = pcall(require('chainer.backend').get_device, device)
  if not ok then error(name .. '.to_device: ' .. (tostring(dev):gsub('^.-get_device: ', '')), 2) end
  local target = rawget(self, 'target')
  if target == nil then return self end
  target:to_device(dev.id)
  for p in target:params() do
    local rule = rawget(p, 'update_rule')
    if rule then
      local state = rawget(rule, 'state')
      if state then
        for k, v in pairs(state) do if T.is_tensor(v) then state[k] = dev:send(v) end end
      end
      local fp = rawget(rule, '_fp32_param')
      if fp then fp:to_device(dev.id) end
    end
  end
  return self
end
function Optimizer:to_cpu() return self:to_device(-1) end
function Optimizer:to_gpu(device) return self:to_device(device or 0) end

---------------------------------------------------------------------------
-- loss scaling (Chainer's; mostly for float16 training)
---------------------------------------------------------------------------
local LOSS_SCALE_MAX = 65504   -- the largest float16
local LOSS_SCALING_SIGNATURE = args.signature { 'interval', 'scale' }

-- loss_scaling(interval = 1000, scale = nil): with a scale, static loss
-- scaling by it; without, dynamic: the scale starts at 1, doubles after
-- each update until a gradient first overflows, is halved (and the update
-- skipped) whenever one does, and after the first overflow grows by
-- 2^(1/interval) per clean update (doubling over `interval` updates),
-- always within [1, 65504].
function Optimizer:loss_scaling(...)
  local o = args.parse('Optimizer.loss_scaling', LOSS_SCALING_SIGNATURE, select('#', ...), ...)
  if o.scale == nil then
    local interval = o.interval or 1000
    if type(interval) ~= 'number' or interval < 1 then
      error('Optimizer.loss_scaling: interval must be a number >= 1 (got ' .. tostring(interval) .. ')', 2)
    end
    rawset(self, '_loss_scaling_is_dynamic', true)
    rawset(self, '_loss_scale', 1.0)
    rawset(self, '_loss_scaling_multiplier', 2 ^ (1 / interval))
    rawset(self, '_loss_scaling_isnan_ever', false)
  else
    if type(o.scale) ~= 'number' or not (o.scale > 0) then
      error('Optimizer.loss_scaling: scale must be a positive number (got ' .. tostring(o.scale) .. ')', 2)
    end
    rawset(self, '_loss_scale', o.scale)
  end
end

-- set_loss_scale(s): static loss scaling by s.
function Optimizer:set_loss_scale(loss_scale)
  if type(loss_scale) ~= 'number' or not (loss_scale > 0) then
    error('Optimizer.set_loss_scale: loss_scale must be a positive number (got ' .. tostring(loss_scale) .. ')', 2)
  end
  rawset(self, '_loss_scale', loss_scale)
end

-- Under dynamic loss scaling, looks for Inf/NaN in the gradients (a
-- warning per parameter on stderr, as Chainer's warnings.warn).
function Optimizer:check_nan_in_grads()
  rawset(self, '_loss_scaling_isnan', false)
  if not rawget(self, '_loss_scaling_is_dynamic') then return end
  for name, param in self.target:namedparams() do
    local g = param.grad
    if g ~= nil and not T.isfinite(g):all():item() then
      rawset(self, '_loss_scaling_isnan', true)
      rawset(self, '_loss_scaling_isnan_ever', true)
      io.stderr:write(string.format('Non finite number found in param.grad of %s (iteration: %d, loss_scale: %s)\n',
        name, self.t, tostring(rawget(self, '_loss_scale'))))
    end
  end
end

function Optimizer:is_safe_to_update()
  return not rawget(self, '_loss_scaling_isnan')
end

function Optimizer:update_loss_scale()
  if not rawget(self, '_loss_scaling_is_dynamic') then return end
  local multiplier
  if rawget(self, '_loss_scaling_isnan') then
    multiplier = 0.5
  elseif rawget(self, '_loss_scaling_isnan_ever') then
    multiplier = rawget(self, '_loss_scaling_multiplier')
  else
    multiplier = 2.0
  end
  rawset(self, '_loss_scale', math.max(1, math.min(LOSS_SCALE_MAX, rawget(self, '_loss_scale') * multiplier)))
end

-- new_epoch() / new_epoch{auto = true} (the updater's call).
function Optimizer:new_epoch(auto)
  if type(auto) == 'table' then auto = auto.auto end
  if auto then
    if not self.use_auto_new_epoch then
      error('Optimizer.new_epoch: invalid call with auto = true; the updater must set ' ..
        'optimizer.use_auto_new_epoch = true', 2)
    end
  elseif self.use_auto_new_epoch then
    error('Optimizer.new_epoch: duplicated new_epoch with the updater; pass {auto_new_epoch = false} ' ..
      'to the updater or stop calling new_epoch outside it', 2)
  end
  self.epoch = self.epoch + 1
end

-- add_hook(hook, {name =, timing = 'pre'|'post'|'auto'}) or
-- add_hook(hook, name, timing).  A hook is a function hook(optimizer), or
-- a callable object; when hook.call_for_each_param is true it is called as
-- hook(update_rule, param) for every parameter.
function Optimizer:add_hook(hook, name, timing)
  if not self._pre_hooks then error('Optimizer.add_hook: call setup before add_hook', 2) end
  add_hook(self, hook, name, timing, 'Optimizer.add_hook')
  return self
end

function Optimizer:remove_hook(name) remove_hook(self, name, 'Optimizer.remove_hook') end

-- The registered hooks as {name = ..., hook = ..., timing = ...}, in order.
function Optimizer:hooks()
  local out = {}
  for _, e in ipairs(self._pre_hooks or {}) do out[#out + 1] = { name = e[1], hook = e[2], timing = 'pre' } end
  for _, e in ipairs(self._post_hooks or {}) do out[#out + 1] = { name = e[1], hook = e[2], timing = 'post' } end
  return out
end

-- call_hook(hook): calls one hook as call_hooks does (Chainer's public
-- method; GradientMethod's update calls it for each registered hook).
function Optimizer:call_hook(hook)
  if type(hook) == 'table' and hook.call_for_each_param then
    for p in self.target:params() do
      hook(rawget(p, 'update_rule') or nil, p)
    end
  else
    hook(self)
  end
end

-- The hooks registered for `timing` ('pre', the default, or 'post'); fn
-- names the public method in the error, which blames its caller.
local function hooks_at(self, timing, fn)
  timing = timing or 'pre'
  if timing ~= 'pre' and timing ~= 'post' then
    error(fn .. ": timing must be 'pre' or 'post' (got " .. tostring(timing) .. ')', 3)
  end
  return (timing == 'pre' and self._pre_hooks or self._post_hooks) or {}
end

function Optimizer:call_hooks(timing)
  local list = hooks_at(self, timing, 'Optimizer.call_hooks')
  for i = 1, #list do self:call_hook(list[i][2]) end
end

-- Saves/loads t, epoch and every update rule's t and state (under the
-- parameter's path, e.g. 'predictor/l1/W/m'); never the parameters.
function Optimizer:serialize(serializer)
  self.t = serializer('t', self.t)
  self.epoch = serializer('epoch', self.epoch)
  local target = rawget(self, 'target')
  if target == nil then return end
  for name, p in target:namedparams() do
    local rule = rawget(p, 'update_rule')
    if rule then rule:serialize(serializer:child(name)) end
  end
end

Optimizer.__tostring = function(self)
  local hp = rawget(self, 'hyperparam')
  local inner = hp and tostring(hp):match('%((.*)%)') or ''
  return tostring(getmetatable(self).__name) .. '(' .. inner .. ')'
end

M.Optimizer = Optimizer

---------------------------------------------------------------------------
-- GradientMethod
---------------------------------------------------------------------------
local GradientMethod = Optimizer:extend('GradientMethod')
GradientMethod.__props = setmetatable({}, { __index = Optimizer.__props })

function GradientMethod:init()
  Optimizer.init(self)
  rawset(self, 'hyperparam', Hyperparameter())
  rawset(self, '_use_fp32_update', false)
end

-- setup(link): a fresh update rule for every parameter (existing states are
-- discarded); parameters of links with update disabled get disabled rules.
function GradientMethod:setup(link)
  Optimizer.setup(self, link)
  for p in link:params() do
    local rule = self:create_update_rule()
    if self._use_fp32_update then rule:use_fp32_update() end
    if rawget(p, '_update_enabled') == false then rule.enabled = false end
    rawset(p, 'update_rule', rule)
  end
  return self
end

function GradientMethod:create_update_rule()
  error(tostring(getmetatable(self).__name) .. ': create_update_rule is not implemented', 2)
end

-- Gives every initialised parameter without a gradient a zero gradient, as
-- Chainer does before and after the hooks (so hooks and rules see arrays).
function GradientMethod:reallocate_cleared_grads()
  for p in self.target:params(false) do
    if not p._grad_var then
      p.grad = T.zeros_like(p._data)
    end
  end
end

function GradientMethod:call_hooks(timing)
  local list = hooks_at(self, timing, 'GradientMethod.call_hooks')
  for i = 1, #list do
    self:call_hook(list[i][2])
    self:reallocate_cleared_grads()
  end
end

-- update(lossfun, ...): loss = lossfun(...), cleargrads, loss:backward(),
-- then the update.  update(): the gradients are already there.
-- Order (Chainer's): pre hooks, t += 1, every rule, post hooks.
function GradientMethod:update(lossfun, ...)
  local target = rawget(self, 'target')
  if target == nil then error(tostring(getmetatable(self).__name) .. '.update: call setup(link) first', 2) end
  if lossfun ~= nil then
    if not callable(lossfun) then
      error('GradientMethod.update: lossfun must be callable (got ' .. type(lossfun) .. ')', 2)
    end
    local loss = lossfun(...)
    if type(loss) ~= 'table' or not loss._is_variable then
      error('GradientMethod.update: lossfun must return a Variable (got ' .. type(loss) .. ')', 2)
    end
    target:cleargrads()
    local scale = rawget(self, '_loss_scale')
    if scale ~= nil then loss:backward({ loss_scale = scale }) else loss:backward() end
  end
  self:reallocate_cleared_grads()
  self:check_nan_in_grads()
  self:call_hooks('pre')
  self.t = self.t + 1
  -- an overflow under dynamic loss scaling skips this update
  if self:is_safe_to_update() then
    for p in target:params() do
      local rule = rawget(p, 'update_rule')
      if rule then rule:update(p) end
    end
  end
  self:reallocate_cleared_grads()
  self:call_hooks('post')
  self:update_loss_scale()
end

-- Updates float16 parameters through float32 master copies.
function GradientMethod:use_fp32_update(flag)
  if flag == nil then flag = true end
  self._use_fp32_update = flag and true or false
  local target = rawget(self, 'target')
  if target then
    for p in target:params() do
      local rule = rawget(p, 'update_rule')
      if rule then rule:use_fp32_update(self._use_fp32_update) end
    end
  end
  return self
end

M.GradientMethod = GradientMethod

-- An optimizer class: Name, its rule class, hyperparameter names in
-- Chainer's positional order, defaults, and the values set implicitly
-- (AdamW, AMSGrad, ...).
function M.gradient_method(name, rule_cls, names, defaults, fixed, parent)
  local cls = (parent or GradientMethod):extend(name)
  cls.__props = setmetatable({}, { __index = (parent or GradientMethod).__props })
  cls._hyper_names = names
  function cls:init(...)
    GradientMethod.init(self)
    local given = M.parse_options(name, names, select('#', ...), ...)
    local hp = self.hyperparam
    for k, v in pairs(rule_cls._defaults:get_dict()) do hp[k] = v end
    for k, v in pairs(defaults or {}) do hp[k] = v end
    for k, v in pairs(fixed or {}) do hp[k] = v end
    for k, v in pairs(given) do hp[k] = v end
  end
  function cls:create_update_rule()
    return rule_cls(self.hyperparam)
  end
  return cls
end

return M
