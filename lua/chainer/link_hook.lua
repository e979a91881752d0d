-- link_hook.lua: chainer.LinkHook, the base of hooks that run around a
-- Link's forward (Chainer's chainer.LinkHook).
--
--   local Hook = chainer.LinkHook:extend('MyHook')
--   function Hook:forward_preprocess(cb) print(cb.link, cb.args[1]) end
--   hook:scope(function() model(x) end)   -- every link, for the scope (Chainer's `with hook:`)
--   link:add_hook(hook)                   -- one link only; link:delete_hook(name)
--
-- The callbacks receive one table `cb` with Chainer's fields: `link`,
-- `forward_name` ('forward'), `args` (the Lua arguments of the call, a
-- list with `n`, the trailing options table included), `kwargs` (an empty
-- table: Lua passes keyword arguments inside `args`), and, after the
-- forward, `out` (its result; a list when it returned several values).
-- When the forward raises, forward_postprocess still runs, with `out` nil
-- and `error` set, so hooks that swap a weight put it back; then the error
-- propagates.
--
-- Global hooks live in one ordered list; Link.__call tests `list[1] ~= nil`
-- and the link's own hook table first, so hooks cost nothing when none is
-- registered.
local class = require 'chainer.class'

local M = {}
local list = {}          -- registered global hooks, in registration order
M.list = list

local LinkHook = class.Object:extend('LinkHook')

-- A hook's name: its `name` field (instance or class), else its class name.
local function name_of(h)
  local n = h.name
  if n ~= nil then return n end
  return getmetatable(h).__name
end
M.name_of = name_of

function LinkHook:added(link) end
function LinkHook:deleted(link) end
function LinkHook:forward_preprocess(cb) end
function LinkHook:forward_postprocess(cb) end

local function find(name)
  for i = 1, #list do
    if name_of(list[i]) == name then return i end
  end
  return nil
end

-- Registers the hook for every link until unregistered.
function LinkHook:register()
  local name = name_of(self)
  if find(name) then
    error(string.format("LinkHook: a hook named '%s' is already registered globally", tostring(name)), 2)
  end
  self:added(nil)
  list[#list + 1] = self
  return self
end

function LinkHook:unregister()
  local i = find(name_of(self))
  if i and list[i] == self then
    table.remove(list, i)
    self:deleted(nil)
  end
  return self
end

local function finish(self, ok, ...)
  self:unregister()
  if not ok then error((...), 0) end
  return ...
end

-- Registers the hook globally while fn runs (Chainer's `with hook:`);
-- unregisters it even when fn raises.  Returns what fn returns.
function LinkHook:scope(fn)
  if type(fn) ~= 'function' then
    error('LinkHook.scope: pass the scope as a function: hook:scope(function() ... end)', 2)
  end
  self:register()
  return finish(self, pcall(fn))
end

-- Global hooks by name (Chainer's chainer._get_link_hooks()), plus their
-- names in registration order as `names`.
function M.get_link_hooks()
  local out, names = {}, {}
  for i = 1, #list do
    out[name_of(list[i])] = list[i]
    names[i] = name_of(list[i])
  end
  out.names = names
  return out
end

-- The hooks that run for `link`: the global ones, then the link's own, as
-- Chainer's ordered merge does (a local hook named like a global one takes
-- the global one's place).
local function hooks_for(local_hooks)
  local out = {}
  for i = 1, #list do
    local h, name = list[i], name_of(list[i])
    out[i] = local_hooks and name ~= 'names' and local_hooks[name] or h
  end
  if local_hooks then
    for _, name in ipairs(local_hooks.names) do
      if not find(name) then out[#out + 1] = local_hooks[name] end
    end
  end
  return out
end

local function pack(...) return { n = select('#', ...), ... } end

local function post(hooks, cb, ok, ...)
  if ok then
    local n = select('#', ...)
    if n <= 1 then cb.out = (...) else cb.out = pack(...) end
  else
    cb.error = (...)
  end
  for i = 1, #hooks do hooks[i]:forward_postprocess(cb) end
  if not ok then error((...), 0) end
  return ...
end

-- Link.__call when some hook applies: pre hooks, the forward, post hooks.
function M.call_with_hooks(link, forward, local_hooks, ...)
  local hooks = hooks_for(local_hooks)
  local cb = { link = link, forward_name = 'forward', args = pack(...), kwargs = {} }
  for i = 1, #hooks do hooks[i]:forward_preprocess(cb) end
  return post(hooks, cb, pcall(forward, link, ...))
end

M.LinkHook = LinkHook
return M
