-- link.lua: chainer.Link, chainer.Chain and chainer.ChainList.
--
--   local MLP = chainer.Chain:extend('MLP')
--   function MLP:init(n_units, n_out)
--     self.l1 = L.Linear(nil, n_units)     -- registered: assigned inside init
--     self.l2 = L.Linear(nil, n_out)
--   end
--   function MLP:forward(x) return self.l2(F.relu(self.l1(x))) end
--   local model = MLP(100, 10); local y = model(x)
--
-- Registration (Chainer's init_scope): while a Link is being constructed
-- (its `init` runs) assigning a chainer.Parameter to a field registers it
-- as a parameter, and, in a Chain, assigning a Link registers it as a child.
-- Later additions use `link:init_scope(function() ... end)`, `add_param`,
-- `add_link`.  Registered values live in the instance's own fields, so
-- `self.l1` is a plain table read.
--
-- Traversal order is Chainer's: a link's own parameters sorted by name,
-- then its children (Chain: sorted by name; ChainList: by position).
-- ChainList children are 1-based in Lua (`model[1]`) but keep Chainer's
-- names '0', '1', ... in paths and files ('/0/W'), so model files move
-- between Chainer and chainlua unchanged.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local class = require 'chainer.class'
local Parameter = require 'chainer.parameter'

local is_tensor = T.is_tensor

local function is_link(v) return type(v) == 'table' and v._is_link == true end
local function is_param(v) return type(v) == 'table' and v._is_parameter == true end

-- The keys of t, sorted (a deterministic order for registration and files).
local function sorted_keys(t)
  local names = {}
  for k in pairs(t) do names[#names + 1] = k end
  table.sort(names)
  return names
end

---------------------------------------------------------------------------
-- Link
---------------------------------------------------------------------------
local sequence = require 'chainer._sequence'
local Link = class.Object:extend('Link')
class.check_self(Link)   -- model.cleargrads() (a dot) names the method
Link._is_link = true

local props = {}
Link.__props = props

-- Methods first (through the class chain), then computed properties.
Link.__index = class.property_index(props)

-- Fields assigned inside the init scope register parameters (and, in a
-- Chain, child links).  __newindex only sees new fields; a registered name
-- that is later overwritten with something else simply stops counting.
Link.__newindex = function(self, k, v)
  if type(v) == 'table' and rawget(self, '_within_init_scope') then
    if v._is_parameter then
      self:_register_param(k, v)
      return
    elseif v._is_link then
      local reg = getmetatable(self)._register_child
      if reg then reg(self, k, v) return end
    end
  end
  rawset(self, k, v)
end

-- Hooks (chainer.LinkHook): the global list and the link's own table are
-- nil/empty unless a hook is registered, so the plain path is two reads.
local link_hook = require 'chainer.link_hook'
local global_link_hooks = link_hook.list
local call_with_hooks = link_hook.call_with_hooks

Link.__call = function(self, ...)
  local fwd = self.forward
  if fwd == nil then
    error(string.format('%s: this link has no forward method (define %s:forward(...))',
      tostring(getmetatable(self).__name), tostring(getmetatable(self).__name)), 2)
  end
  local local_hooks = rawget(self, 'local_link_hooks')
  if global_link_hooks[1] == nil and local_hooks == nil then return fwd(self, ...) end
  return call_with_hooks(self, fwd, local_hooks, ...)
end

-- link:add_hook(hook, [name]): registers a LinkHook for this link only
-- (name: the hook's `name` by default); a name used twice is an error.
-- Returns the link, as Chainer does.
function Link:add_hook(hook, name)
  if type(hook) ~= 'table' or not class.Object.isinstance(hook, link_hook.LinkHook) then
    error(string.format('add_hook: hook must be a chainer.LinkHook (got %s)',
      type(hook) == 'table' and tostring(getmetatable(hook) and getmetatable(hook).__name) or type(hook)), 2)
  end
  if name == nil then name = link_hook.name_of(hook) end
  if type(name) ~= 'string' or name == 'names' then
    error('add_hook: name must be a string other than \'names\' (got ' .. (type(name) == 'string' and "'names'" or type(name)) .. ')', 2)
  end
  local lh = rawget(self, 'local_link_hooks')
  if lh and lh[name] then
    error(string.format("add_hook: a hook named '%s' is already registered to this link", name), 2)
  end
  hook:added(self)   -- may refuse the link (an error) before anything changes
  if not lh then
    lh = { names = {} }
    rawset(self, 'local_link_hooks', lh)
  end
  lh[name] = hook
  lh.names[#lh.names + 1] = name
  return self
end

-- link:delete_hook(name): unregisters the link's hook of that name.
function Link:delete_hook(name)
  local lh = rawget(self, 'local_link_hooks')
  if not lh or lh[name] == nil or name == 'names' then
    error(string.format("delete_hook: no hook named '%s' is registered to this link", tostring(name)), 2)
  end
  local hook = lh[name]
  lh[name] = nil
  for i = #lh.names, 1, -1 do
    if lh.names[i] == name then table.remove(lh.names, i) end
  end
  if lh.names[1] == nil then rawset(self, 'local_link_hooks', nil) end   -- back to the plain path
  hook:deleted(self)
end

-- link.local_link_hooks: { names = {...in order}, [name] = hook } (an empty
-- one when the link has none).
function props.local_link_hooks(self) return { names = {} } end

-- Raw bookkeeping fields of every link.
local function setup(self)
  if rawget(self, '_params') then return end
  rawset(self, '_params', {})        -- name -> true
  rawset(self, '_persistent', {})    -- name -> true
  rawset(self, '_device', -1)
  rawset(self, '_within_init_scope', false)
end
Link._setup = setup

-- Runs the class's `init` on a new instance inside the init scope (called
-- in tail position, so that init's error levels see the user's call).
local function run_init(self, cls, ...)
  rawset(self, '_within_init_scope', true)
  local init = cls.init
  if init then init(self, ...) end
  rawset(self, '_within_init_scope', false)
  return self
end

-- Instances run `init` inside the init scope.
function Link.new(cls, ...)
  local self = setmetatable({}, cls)
  setup(self)
  return run_init(self, cls, ...)
end

-- Link{W = {3, 4}, b = 3}: Chainer v1's shape keywords (uninitialised (NaN) parameters).
function Link:init(params)
  setup(self)
  if params ~= nil then
    if type(params) ~= 'table' then
      error('Link: the argument must be a table {name = shape, ...} (got ' .. type(params) .. ')', 3)
    end
    for _, k in ipairs(sorted_keys(params)) do self:add_param(k, params[k]) end
  end
end

-- Stores a new parameter or child link as self[name]: it takes that name
-- and moves to self's device.
local function adopt(self, name, obj)
  rawset(obj, 'name', name)
  local dev = rawget(self, '_device')
  if dev ~= -1 then obj:to_device(dev) end
  rawset(self, name, obj)
end

function Link:_register_param(name, p)
  if type(name) ~= 'string' then
    error('Link: parameter names must be strings (got ' .. type(name) .. ')', 3)
  end
  self._params[name] = true
  self._persistent[name] = nil
  adopt(self, name, p)
end

-- Runs fn() with registration on (Chainer's `with self.init_scope():`).
function Link:init_scope(fn)
  local old = rawget(self, '_within_init_scope')
  rawset(self, '_within_init_scope', true)
  local ok, err = pcall(fn, self)
  rawset(self, '_within_init_scope', old)
  if not ok then error(err, 0) end
  return self
end

function props.within_init_scope(self) return rawget(self, '_within_init_scope') == true end
function props.device(self) return T.device_name(rawget(self, '_device') or -1) end
function props.xp() return T end

-- add_param(name, shape, {dtype =, initializer =}) or add_param(name, parameter);
-- Chainer's positional (name, shape, dtype, initializer) works too.
local ADD_PARAM_SIGNATURE = args.signature { 'dtype', 'initializer' }

function Link:add_param(name, shape, ...)
  if type(name) ~= 'string' or name == '' then
    error('add_param: name must be a non-empty string (got ' .. type(name) .. ')', 2)
  end
  if rawget(self, name) ~= nil or getmetatable(self)[name] ~= nil then
    error(string.format("add_param: cannot register a new parameter '%s': the attribute already exists", name), 2)
  end
  local p
  if is_param(shape) then
    p = shape
  else
    local opts = args.parse_at(2, 'add_param', ADD_PARAM_SIGNATURE, select('#', ...), ...)
    local init = opts.initializer
    if init == nil then
      local I = require 'chainer.initializers'
      init = I.NaN(opts.dtype)
    elseif opts.dtype ~= nil and type(init) == 'number' then
      local I = require 'chainer.initializers'
      init = I.Constant(init, opts.dtype)
    end
    p = Parameter(init, shape)
  end
  self:_register_param(name, p)
  return p
end

-- add_persistent(name, value): a serialised non-parameter value (tensor, number, boolean).
function Link:add_persistent(name, value)
  if type(name) ~= 'string' or name == '' then
    error('add_persistent: name must be a non-empty string (got ' .. type(name) .. ')', 2)
  end
  if rawget(self, name) ~= nil or getmetatable(self)[name] ~= nil then
    error(string.format("add_persistent: cannot register a new persistent value '%s': the attribute already exists", name), 2)
  end
  local dev = rawget(self, '_device')
  if dev ~= -1 and is_tensor(value) then value = value:to_device(dev) end
  rawset(self, name, value)
  self._persistent[name] = true
end

-- register_persistent(name): an existing attribute becomes persistent.
function Link:register_persistent(name)
  if rawget(self, name) == nil and not self._persistent[name] then
    error(string.format("register_persistent: '%s' is not an attribute of this link", tostring(name)), 2)
  end
  if self._params[name] then
    error(string.format("register_persistent: '%s' is a parameter", name), 2)
  end
  self._persistent[name] = true
end

-- Sorted names of the registered parameters still present.
local function param_names(self)
  local names = {}
  for k in pairs(self._params) do
    if is_param(rawget(self, k)) then names[#names + 1] = k end
  end
  table.sort(names)
  return names
end
Link._param_names = param_names

local function persistent_names(self) return sorted_keys(self._persistent) end
Link._persistent_names = persistent_names

-- Child links in traversal order as a list of {name, link}; none for a plain Link.
function Link:_child_list() return {} end

-- An iterator over a prepared list (values, or pairs when `pairs_` is set).
local function list_iter(list, pairs_)
  local i = 0
  if pairs_ then
    return function()
      i = i + 1
      local e = list[i]
      if e then return e[1], e[2] end
    end
  end
  return function()
    i = i + 1
    return list[i]
  end
end

local function collect_named_params(self, prefix, out, include_uninit)
  for _, name in ipairs(param_names(self)) do
    local p = rawget(self, name)
    if include_uninit or p._data ~= nil then out[#out + 1] = { prefix .. '/' .. name, p } end
  end
  for _, e in ipairs(self:_child_list()) do
    collect_named_params(e[2], prefix .. '/' .. e[1], out, include_uninit)
  end
end

local INCLUDE_UNINIT = args.accept { 'include_uninit' }
local function include_uninit_opt(opts, fn)
  if opts == nil then return true end
  if type(opts) == 'boolean' then return opts end
  return args.options(fn, opts, INCLUDE_UNINIT, 3).include_uninit ~= false
end

-- for p in link:params{include_uninit = true} do ... end
function Link:params(opts)
  local inc = include_uninit_opt(opts, 'params')
  local named = {}
  collect_named_params(self, '', named, inc)
  local out = {}
  for i, e in ipairs(named) do out[i] = e[2] end
  return list_iter(out)
end

-- for path, p in link:namedparams() do ... end   ('/l1/W', sorted as Chainer)
function Link:namedparams(opts)
  local inc = include_uninit_opt(opts, 'namedparams')
  local named = {}
  collect_named_params(self, '', named, inc)
  return list_iter(named, true)
end

local SKIPSELF = args.accept { 'skipself' }
local function skipself_opt(opts, fn)
  if opts == nil then return false end
  if type(opts) == 'boolean' then return opts end
  return args.options(fn, opts, SKIPSELF, 3).skipself == true
end

local function collect_links(self, prefix, out, skipself)
  if not skipself then out[#out + 1] = { prefix == '' and '/' or prefix, self } end
  for _, e in ipairs(self:_child_list()) do
    collect_links(e[2], prefix .. '/' .. e[1], out, false)
  end
end

-- for path, l in link:namedlinks{skipself = false} do ... end  ('/', '/l1', ...)
function Link:namedlinks(opts)
  local out = {}
  collect_links(self, '', out, skipself_opt(opts, 'namedlinks'))
  return list_iter(out, true)
end

function Link:links(opts)
  local out = {}
  collect_links(self, '', out, skipself_opt(opts, 'links'))
  local ls = {}
  for i, e in ipairs(out) do ls[i] = e[2] end
  return list_iter(ls)
end

function Link:children()
  local ls = {}
  for i, e in ipairs(self:_child_list()) do ls[i] = e[2] end
  return list_iter(ls)
end

function Link:cleargrads()
  for p in self:params() do p:cleargrad() end
end

function Link:zerograds()
  for p in self:params() do p:zerograd() end
end

-- Adds the gradients of `link` (same architecture) into this link's.
function Link:addgrads(link)
  if not is_link(link) then error('addgrads: expected a Link (got ' .. type(link) .. ')', 2) end
  for _, name in ipairs(param_names(self)) do
    local src = rawget(link, name)
    if not is_param(src) then
      error(string.format("addgrads: the source link has no parameter '%s'", name), 2)
    end
    rawget(self, name):addgrad(src)
  end
  for _, e in ipairs(self:_child_list()) do
    local other = link:_child(e[1])
    if other == nil then error(string.format("addgrads: the source link has no child '%s'", e[1]), 2) end
    e[2]:addgrads(other)
  end
end

-- Copies parameter values (and persistent values) from `link`.
function Link:copyparams(link, copy_persistent)
  if not is_link(link) then error('copyparams: expected a Link (got ' .. type(link) .. ')', 2) end
  if copy_persistent == nil then copy_persistent = true end
  for _, name in ipairs(param_names(self)) do
    local src = rawget(link, name)
    if not is_param(src) then
      error(string.format("copyparams: the source link has no parameter '%s'", name), 2)
    end
    if src._data ~= nil then rawget(self, name):copydata(src) end
  end
  if copy_persistent then
    for _, name in ipairs(persistent_names(self)) do
      local dst, src = rawget(self, name), rawget(link, name)
      if is_tensor(dst) and is_tensor(src) then
        if src.ptr.dev ~= dst.ptr.dev then src = src:to_device(dst.ptr.dev) end
        dst:copy_(src)
      elseif is_tensor(src) then
        rawset(self, name, src:copy())
      else
        rawset(self, name, src)
      end
    end
  end
  for _, e in ipairs(self:_child_list()) do
    local other = link:_child(e[1])
    if other == nil then error(string.format("copyparams: the source link has no child '%s'", e[1]), 2) end
    e[2]:copyparams(other, copy_persistent)
  end
end

-- The child registered under `name` (nil for a plain Link).
function Link:_child(name) return nil end

---------------------------------------------------------------------------
-- copies
---------------------------------------------------------------------------
local function is_instance_table(v)
  if type(v) ~= 'table' then return false end
  if rawget(v, '__name') ~= nil then return false end   -- a class
  local mt = getmetatable(v)
  if mt == nil then return true end
  return type(mt) == 'table' and rawget(mt, '__name') ~= nil
end

-- Deep copy of links, parameters, tensors and plain tables (shared: functions, classes, modules).
local function deepcopy(v, memo)
  if type(v) ~= 'table' then return v end
  local seen = memo[v]
  if seen ~= nil then return seen end
  if is_tensor(v) then
    local c = v:copy()
    memo[v] = c
    return c
  end
  if v._is_variable then
    local c = setmetatable({}, getmetatable(v))
    memo[v] = c
    for k, x in pairs(v) do rawset(c, k, x) end
    local d = rawget(v, '_data')
    if d ~= nil then rawset(c, '_data', d:copy()) end
    local g = rawget(v, '_grad_var')
    if g then rawset(c, '_grad_var', require('chainer.variable').new_var(g._data:copy(), true)) end
    rawset(c, '_node', false)
    rawset(c, '_grad_slot', nil)   -- the slot is the original's (_grad_bucket.lua)
    if rawget(v, 'update_rule') ~= nil then rawset(c, 'update_rule', false) end
    return c
  end
  if not is_instance_table(v) then return v end
  local c = setmetatable({}, getmetatable(v))
  memo[v] = c
  for k, x in pairs(v) do rawset(c, deepcopy(k, memo), deepcopy(x, memo)) end
  return c
end

local function shallow(self)
  local c = setmetatable({}, getmetatable(self))
  for k, v in pairs(self) do rawset(c, k, v) end
  local ps, pe = {}, {}
  for k in pairs(self._params) do ps[k] = true end
  for k in pairs(self._persistent) do pe[k] = true end
  rawset(c, '_params', ps)
  rawset(c, '_persistent', pe)
  rawset(c, 'name', nil)
  for _, name in ipairs(param_names(self)) do
    local p = rawget(self, name)
    local q = setmetatable({}, getmetatable(p))
    for k, x in pairs(p) do rawset(q, k, x) end
    rawset(q, '_node', false)
    rawset(q, '_grad_var', false)
    rawset(q, '_grad_slot', nil)   -- the slot is the original's (_grad_bucket.lua)
    rawset(q, 'update_rule', false)
    rawset(c, name, q)
  end
  return c
end

-- copy{mode = 'share'|'copy'|'init'} (or copy('share')): 'share' makes new
-- Parameter objects sharing the arrays (grads cleared), 'copy' deep-copies
-- the arrays, 'init' deep-copies and re-initialises every parameter with
-- its initializer.
local MODE = args.accept { 'mode' }

function Link:copy(opts)
  local mode = type(opts) == 'table' and args.options('copy', opts, MODE).mode or opts or 'share'
  if mode ~= 'share' and mode ~= 'copy' and mode ~= 'init' then
    error("copy: mode must be 'share', 'copy' or 'init' (got " .. tostring(mode) .. ')', 2)
  end
  if mode == 'share' then return self:_copy_share() end
  local c = deepcopy(self, {})
  rawset(c, 'name', nil)
  if mode == 'init' then
    for p in c:params{ include_uninit = false } do p:initialize(p.shape) end
  end
  return c
end

function Link:_copy_share() return shallow(self) end
Link._shallow = shallow

-- repeat_(n, {mode = 'init'}): a Sequential of n copies (Chainer's `repeat`).
function Link:repeat_(n_repeat, opts)
  local mode = type(opts) == 'table' and args.options('repeat_', opts, MODE).mode or opts or 'init'
  if mode ~= 'share' and mode ~= 'copy' and mode ~= 'init' then
    error("repeat_: mode must be 'share', 'copy' or 'init' (got " .. tostring(mode) .. ')', 2)
  end
  if type(n_repeat) ~= 'number' then error('repeat_: n_repeat must be a number', 2) end
  local Sequential = require 'chainer.sequential'
  local ret = Sequential()
  for _ = 1, n_repeat do ret:append(self:copy{ mode = mode }) end
  return ret
end
Link['repeat'] = Link.repeat_

---------------------------------------------------------------------------
-- serialization and devices
---------------------------------------------------------------------------
-- Saves or loads this link's parameters and persistent values (children in subclasses).
function Link:serialize(serializer)
  for _, name in ipairs(param_names(self)) do
    local p = rawget(self, name)
    local before = p._data
    local data = serializer(name, before)
    if before == nil and data ~= nil then
      p:initialize(data.shape)
      local d = p._data
      if data.ptr.dev ~= d.ptr.dev then data = data:to_device(d.ptr.dev) end
      if data.ptr.dt ~= d.ptr.dt then data = data:astype(d.dtype) end
      d:copy_(data)
    end
  end
  for _, name in ipairs(persistent_names(self)) do
    rawset(self, name, serializer(name, rawget(self, name)))
  end
  for _, e in ipairs(self:_child_list()) do
    e[2]:serialize(serializer:child(e[1]))
  end
end

-- Moves parameters and persistent tensors (and children) to `device`.
function Link:to_device(device)
  local dev = T.device_id(device)
  for _, name in ipairs(param_names(self)) do rawget(self, name):to_device(dev) end
  for _, name in ipairs(persistent_names(self)) do
    local v = rawget(self, name)
    if is_tensor(v) then rawset(self, name, v:to_device(dev)) end
  end
  rawset(self, '_device', dev)
  for _, e in ipairs(self:_child_list()) do e[2]:to_device(dev) end
  return self
end
function Link:to_cpu() return self:to_device(-1) end
function Link:to_gpu(device) return self:to_device(device or 0) end

-- Update switches: rules made later by an optimizer read `_update_enabled`.
local function set_update(self, on)
  for p in self:params() do
    rawset(p, '_update_enabled', on)
    local rule = rawget(p, 'update_rule')
    if rule then rule.enabled = on end
  end
end
function Link:disable_update() set_update(self, false) end
function Link:enable_update() set_update(self, true) end
function props.update_enabled(self)
  for p in self:params() do
    local rule = rawget(p, 'update_rule')
    if rule then
      if rule.enabled then return true end
    elseif rawget(p, '_update_enabled') ~= false then
      return true
    end
  end
  return false
end

function Link:count_params()
  local n = 0
  for p in self:params() do
    if p._data ~= nil then n = n + tonumber(p._data.ptr.numel) end
  end
  return n
end

---------------------------------------------------------------------------
-- printing
---------------------------------------------------------------------------
local function spec_value(v)
  if v == nil then return 'nil' end
  if type(v) == 'table' and not is_tensor(v) then
    local parts = {}
    for i = 1, #v do parts[i] = spec_value(v[i]) end
    return '{' .. table.concat(parts, ', ') .. '}'
  end
  if type(v) == 'string' then return "'" .. v .. "'" end
  return tostring(v)
end

-- printable_specs(): the {{name, value}, ...} shown in the link's header
-- (Chainer's property; a link with constructor arguments overrides it).
function Link:printable_specs() return {} end

-- Chainer 7's classmethod: the links that build from existing arrays
-- define their own (Linear, EmbedID, Convolution1D/2D/3D, ConvolutionND).
function Link.from_params()
  error('from_params: this link class does not build from parameters (Linear, EmbedID, ' ..
    'Convolution1D/2D/3D and ConvolutionND do)', 2)
end

local function header(self)
  local name = tostring(getmetatable(self).__name)
  local specs = self.printable_specs and self:printable_specs() or nil
  if specs and #specs > 0 then
    local parts = {}
    for i, e in ipairs(specs) do parts[i] = e[1] .. '=' .. spec_value(e[2]) end
    return name .. '(' .. table.concat(parts, ', ') .. ')'
  end
  return name .. '()'
end

local function render(self, indent)
  local kids = self:_child_list()
  if #kids == 0 then return header(self) end
  local name = tostring(getmetatable(self).__name)
  local lines = { name .. '(' }
  local pad = indent .. '  '
  for _, e in ipairs(kids) do
    lines[#lines + 1] = pad .. '(' .. e[1] .. '): ' .. render(e[2], pad) .. ','
  end
  lines[#lines + 1] = indent .. ')'
  return table.concat(lines, '\n')
end
Link._render = render

Link.__tostring = function(self) return render(self, '') end

---------------------------------------------------------------------------
-- Chain
---------------------------------------------------------------------------
local Chain = Link:extend('Chain')

-- Chain{l1 = link, ...}: named children (Chainer v1's keyword form).
function Chain:init(links)
  setup(self)
  rawset(self, '_children', rawget(self, '_children') or {})
  if links ~= nil then
    if type(links) ~= 'table' or is_link(links) then
      error('Chain: the argument must be a table {name = link, ...}', 3)
    end
    for _, k in ipairs(sorted_keys(links)) do self:add_link(k, links[k]) end
  end
end

-- Link.new with the children table in place before init runs (init
-- registers children in the init scope); Chain and ChainList share it.
local function new_with_children(cls, ...)
  local self = setmetatable({}, cls)
  setup(self)
  rawset(self, '_children', {})
  return run_init(self, cls, ...)
end
Chain.new = new_with_children

function Chain:_register_child(name, link)
  if type(name) ~= 'string' then
    error('Chain: child names must be strings (got ' .. type(name) .. ')', 3)
  end
  self._children[name] = true
  adopt(self, name, link)
end

-- add_link(name, link): registers a child outside the init scope.
function Chain:add_link(name, link)
  if type(name) ~= 'string' or name == '' then
    error('add_link: name must be a non-empty string (got ' .. type(name) .. ')', 2)
  end
  if not is_link(link) then error('add_link: expected a Link (got ' .. type(link) .. ')', 2) end
  if rawget(self, name) ~= nil or getmetatable(self)[name] ~= nil then
    error(string.format("add_link: cannot register a new link '%s': the attribute already exists", name), 2)
  end
  self:_register_child(name, link)
  return link
end

function Chain:_child_list()
  local out = {}
  for k in pairs(self._children) do
    local c = rawget(self, k)
    if is_link(c) then out[#out + 1] = k end
  end
  table.sort(out)
  for i, k in ipairs(out) do out[i] = { k, rawget(self, k) } end
  return out
end

function Chain:_child(name)
  local c = rawget(self, name)
  if self._children[name] and is_link(c) then return c end
  return nil
end

function Chain:_copy_share()
  local c = shallow(self)
  local kids = {}
  for k in pairs(self._children) do kids[k] = true end
  rawset(c, '_children', kids)
  for _, e in ipairs(self:_child_list()) do
    local copied = e[2]:copy{ mode = 'share' }
    rawset(copied, 'name', e[1])
    rawset(c, e[1], copied)
  end
  return c
end

-- Chainer's chain['l1']: the child (or attribute) of that name.
function Chain:get(name) return rawget(self, name) end

---------------------------------------------------------------------------
-- ChainList
---------------------------------------------------------------------------
local ChainList = Link:extend('ChainList')

-- ChainList(link1, link2, ...): children by position, model[1] is the first.
function ChainList:init(...)
  setup(self)
  rawset(self, '_children', rawget(self, '_children') or {})
  for i = 1, select('#', ...) do self:add_link((select(i, ...))) end
end

ChainList.new = new_with_children

function ChainList:_register_child(name)
  error(string.format("ChainList: cannot register the link '%s' by assignment; use add_link(link)", tostring(name)), 3)
end

local function renumber(self)
  for i, c in ipairs(self._children) do rawset(c, 'name', tostring(i - 1)) end
end

-- add_link(link): appends a child; it is named by its 0-based position ('0', '1', ...).
function ChainList:add_link(link)
  if not is_link(link) then error('add_link: expected a Link (got ' .. type(link) .. ')', 2) end
  local kids = self._children
  kids[#kids + 1] = link
  rawset(self, #kids, link)
  rawset(link, 'name', tostring(#kids - 1))
  local dev = rawget(self, '_device')
  if dev ~= -1 then link:to_device(dev) end
  return link
end
ChainList.append = ChainList.add_link

function ChainList:len() return #self._children end

-- After a change to _children: model[i] and the names '0', '1', ... follow
-- the new order.
local function resync(self, old_n)
  for i = #self._children + 1, old_n do rawset(self, i, nil) end
  for i, c in ipairs(self._children) do rawset(self, i, c) end
  renumber(self)
end

-- Chainer's ChainList is a MutableSequence: insert, pop, remove, reverse,
-- clear, index and count, on 1-based positions as every Lua sequence.
function ChainList:insert(i, link)
  if not is_link(link) then error('ChainList.insert: expected a Link (got ' .. type(link) .. ')', 2) end
  local n = #self._children
  if type(i) ~= 'number' then error('ChainList.insert: position must be a number (got ' .. type(i) .. ')', 2) end
  if i < 0 then i = n + 2 + i end
  if i < 1 or i > n + 1 then
    error(string.format('ChainList.insert: position %d is out of range (expected 1..%d)', i, n + 1), 2)
  end
  table.insert(self._children, i, link)
  local dev = rawget(self, '_device')
  if dev ~= -1 then link:to_device(dev) end
  resync(self, n)
  return self
end

-- pop(i): removes and returns model[i] (default: the last).
function ChainList:pop(i)
  local n = #self._children
  i = i or n
  if type(i) ~= 'number' then error('ChainList.pop: position must be a number (got ' .. type(i) .. ')', 2) end
  if i < 0 then i = n + 1 + i end
  if i < 1 or i > n then
    error(string.format('ChainList.pop: position %s is out of range (expected 1..%d)', tostring(i), n), 2)
  end
  local link = table.remove(self._children, i)
  resync(self, n)
  return link
end

function ChainList:index(link) return sequence.index(self._children, link) end
function ChainList:count(link) return sequence.count(self._children, link) end

-- remove(link): removes its first occurrence.
function ChainList:remove(link)
  local i = self:index(link)
  if i == nil then error('ChainList.remove: the link is not in this ChainList', 2) end
  self:pop(i)
  return self
end

function ChainList:reverse()
  sequence.reverse(self._children)
  resync(self, #self._children)
  return self
end

function ChainList:clear()
  local n = #self._children
  rawset(self, '_children', {})
  resync(self, n)
  return self
end

function ChainList:_child_list()
  local out = {}
  for i, c in ipairs(self._children) do out[i] = { tostring(i - 1), c } end
  return out
end

function ChainList:_child(name)
  local i = tonumber(name)
  return i and self._children[i + 1] or nil
end

function ChainList:_copy_share()
  local c = shallow(self)
  local kids = {}
  for i, child in ipairs(self._children) do
    local copied = child:copy{ mode = 'share' }
    rawset(copied, 'name', tostring(i - 1))
    kids[i] = copied
    rawset(c, i, copied)
  end
  rawset(c, '_children', kids)
  return c
end

ChainList._renumber = renumber

return {
  Link = Link,
  Chain = Chain,
  ChainList = ChainList,
  is_link = is_link,
  deepcopy = deepcopy,
}
