-- chainer.utils.final / enable_final: methods a subclass may not override.
--
--   local Base = chainer.utils.enable_final()           -- or enable_final(chainer.Chain)
--   Base = Base:extend('Base')
--   Base.update = chainer.utils.final(function(self) ... end)
--   local Sub = Base:extend('Sub')
--   function Sub:update() end      -- error: "Sub: method 'update' is final."
--
-- As in Chainer, the check is made where a subclass defines a method (a
-- chainlua class's methods are defined one assignment at a time, each going
-- through the class table's __newindex, which enable_final's classes extend),
-- and only below a class made by enable_final.  final(f, {action = ...})
-- chooses what overriding does: 'error' (default; Chainer's TypeError) or a
-- warning category ('UserWarning', 'FutureWarning', ...; Chainer's Warning
-- classes), which warns through chainer.utils.warnings and lets the override
-- through.
local class = require 'chainer.class'
local args = require 'chainer._args'
local warnings = require 'chainer.utils.warnings'

local M = {}

-- function -> its action, for the functions marked final
local actions = setmetatable({}, { __mode = 'k' })

local FINAL_OPTIONS = args.accept { 'action' }

-- final(f, [{action = 'error' | warning category}]) -> f, marked final.
function M.final(f, opts)
  opts = args.options('final', opts, FINAL_OPTIONS)
  if type(f) ~= 'function' then
    args.fail(string.format('final: expected the method (a function) to mark final (got %s)', type(f)), 2)
  end
  local action = opts.action or 'error'
  if type(action) ~= 'string' or (action ~= 'error' and not action:match('Warning$')) then
    args.fail(string.format("final: action must be 'error' or a warning category such as 'UserWarning' (got %s)",
      tostring(action)), 2)
  end
  actions[f] = action
  return f
end

-- The action of the method `name` some ancestor of cls marked final, if any.
local function final_action(cls, name)
  local c = rawget(cls, '__super')
  while type(c) == 'table' do
    local f = rawget(c, name)
    if f ~= nil then
      local original = class.unwrap(f)
      return actions[f] or actions[original]
    end
    c = rawget(c, '__super')
  end
  return nil
end

-- Installed on each subclass as it is made: wraps the class table's
-- __newindex (the one assignment point of its methods) with the check.
local function check_overrides(parent, cls)
  local previous = rawget(parent, '__final_previous_subclassed')
  if previous then previous(parent, cls) end
  local mt = getmetatable(cls)
  local define = mt.__newindex
  mt.__newindex = function(c, k, v)
    local action = type(k) == 'string' and final_action(c, k)
    if action == 'error' then
      error(string.format("%s: method '%s' is final.", tostring(rawget(c, '__name')), k), 2)
    elseif action then
      warnings.warn(action, string.format("Overriding method '%s'.", k))
    end
    if define then define(c, k, v) else rawset(c, k, v) end
  end
end

-- enable_final([base]) -> a new class deriving from base (a chainlua class;
-- default chainer.class.Object) below which final methods are enforced.
-- (Chainer's second argument, meta_base, has no Lua counterpart.)
function M.enable_final(base, meta_base)
  if meta_base ~= nil then
    args.fail('enable_final: meta_base (base metaclasses) has no meaning for Lua classes; pass only base', 2)
  end
  base = base or class.Object
  if type(base) ~= 'table' or rawget(base, '__name') == nil or type(base.extend) ~= 'function' then
    args.fail(string.format('enable_final: base must be a chainlua class (got %s)', type(base)), 2)
  end
  local cls = base:extend('EnableFinal' .. tostring(rawget(base, '__name')))
  -- keep a hook base already has (it runs first)
  rawset(cls, '__final_previous_subclassed', rawget(cls, '__subclassed') or base.__subclassed)
  rawset(cls, '__subclassed', check_overrides)
  return cls
end

return M
