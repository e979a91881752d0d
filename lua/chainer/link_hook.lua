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

local global_hooks = require 'chainer._global_hooks'

local M = {}
local LinkHook = class.Object:extend('LinkHook')
local registry = global_hooks.new(LinkHook, 'LinkHook')
local list, find = registry.list, registry.find  -- in registration order
M.list = list
local name_of = global_hooks.name_of
M.name_of = name_of

function LinkHook:added(link) end
function LinkHook:deleted(link) end
function LinkHook:forward_preprocess(cb) end
function LinkHook:forward_postprocess(cb) end

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
