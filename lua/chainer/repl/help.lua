-- repl/help.lua: help(obj) and ?obj at the REPL.
--
-- Signatures and summaries come from the docs pages, gathered by
-- scripts/gen-help-index.lua into repl/help_index.lua (index[scope][name]).
-- Here an object is traced back to a (scope, name): functions, links,
-- optimizers, tensor functions are found by walking their namespaces;
-- methods by the kind of object they are asked on (x:reshape on a tensor
-- is Tensor's reshape, on a Variable Variable's).
--
--   help.text(obj [, method])  -> the text help prints (no output)
--   help.help(obj [, method])  -> prints it; the REPL's global `help`
-- obj may also be the source text of an expression ('F.relu', 'x:reshape').
local M = {}

local index = require 'chainer.repl.help_index'

-- How a scope is written in front of a name.
local shown = {
  F = 'F.', L = 'L.', T = 'T.', ['T.random'] = 'T.random.', optimizers = 'optimizers.',
  iterators = 'chainer.iterators.', datasets = 'chainer.datasets.', extensions = 'extensions.',
  initializers = 'chainer.initializers.', serializers = 'chainer.serializers.', chainer = 'chainer.',
  Tensor = 'Tensor:', Variable = 'Variable:', Link = 'Link:', Optimizer = 'Optimizer:',
  Trainer = 'Trainer:', Iterator = 'Iterator:',
}

local function try_require(name)
  local ok, m = pcall(require, name)
  if ok and type(m) == 'table' then return m end
  return nil
end

-- Namespaces in order of preference: the first one holding a value names it.
-- (the lazy ones whole: chainer's top-level names, F and L load on first use)
local function namespaces()
  local chainer = try_require('chainer')
  if chainer then require('chainer._lazy').load_all(chainer) else chainer = {} end
  local T = try_require('chainer.tensor') or {}
  local training = try_require('chainer.training') or {}
  return {
    { 'F', try_require('chainer.functions') and require('chainer.functions._index').all() },
    { 'L', try_require('chainer.links') and require('chainer.links._index').all() },
    { 'optimizers', try_require('chainer.optimizers') },
    { 'T', T },
    { 'T.random', T.random },
    { 'Tensor', T.methods },
    { 'iterators', try_require('chainer.iterators') },
    { 'datasets', try_require('chainer.datasets') },
    { 'extensions', try_require('chainer.training.extensions') },
    { 'initializers', try_require('chainer.initializers') },
    { 'serializers', try_require('chainer.serializers') },
    { 'Variable', chainer.Variable },
    { 'Link', chainer.Link },
    { 'Optimizer', try_require('chainer.optimizer') and try_require('chainer.optimizer').Optimizer },
    { 'Trainer', training.Trainer },
    { 'chainer', chainer },
  }
end

-- A table help lists: a plain one, or F (whose metatable loads its
-- functions on first use; the listing takes the names from its index).
local function is_namespace(obj)
  return type(obj) == 'table' and (getmetatable(obj) == nil or rawequal(obj, package.loaded['chainer.functions']))
end

local reverse   -- value -> { scope, name }, built on first use
local function names_by_value()
  if reverse then return reverse end
  reverse = {}
  for _, ns in ipairs(namespaces()) do
    local scope, t = ns[1], ns[2]
    if type(t) == 'table' then
      for k, v in pairs(t) do
        if type(k) == 'string' and (type(v) == 'function' or type(v) == 'table') and reverse[v] == nil
          and k:sub(1, 1) ~= '_' then
          reverse[v] = { scope, k }
        end
      end
    end
  end
  return reverse
end

-- The entry for name in scope, else in any scope (a documented name is
-- better than none); returns entry, scope.
local function lookup(scope, name)
  local s = scope and index[scope]
  if s and s[name] then return s[name], scope end
  local scopes = {}
  for sc in pairs(index) do scopes[#scopes + 1] = sc end
  table.sort(scopes)
  for _, sc in ipairs(scopes) do
    if index[sc][name] then return index[sc][name], sc end
  end
  return nil
end

local function format(entry, scope, name)
  local sig = entry[1]
  -- a bare `reshape(shape)` from a method table reads Tensor:reshape(shape)
  if sig:sub(1, #name) == name and shown[scope] then sig = shown[scope] .. sig end
  local lines = { sig }
  local summary = entry[2]:gsub('`', '')
  if summary ~= '' then lines[#lines + 1] = '  ' .. summary end
  lines[#lines + 1] = '  (' .. entry[3] .. ')'
  return table.concat(lines, '\n')
end

local function is_tensor(v)
  local T = package.loaded['chainer.tensor']
  return T and T.is_tensor and T.is_tensor(v) or false
end

-- The class of an instance made with chainer.class, and its chain.
local function class_chain(obj)
  local out = {}
  local c = type(obj) == 'table' and getmetatable(obj) or nil
  while type(c) == 'table' and rawget(c, '__name') ~= nil do
    out[#out + 1] = c
    c = rawget(c, '__super')
  end
  return out
end

-- (scope, name) for a value, or nil.
local function name_of(v)
  local r = names_by_value()[v]
  if r then return r[1], r[2] end
  return nil
end

-- Help for method `method` of obj.
local function method_text(obj, method, label)
  local scope
  if is_tensor(obj) then
    scope = 'Tensor'
  else
    -- the nearest class in the chain that names a documented method scope
    local kind = { L = 'Link', optimizers = 'Optimizer', iterators = 'Iterator' }
    local rev = names_by_value()
    for _, cls in ipairs(class_chain(obj)) do
      local r = rev[cls]
      local sc = r and (r[1] == 'chainer' and r[2] or kind[r[1]])
      if sc and index[sc] then
        scope = sc
        break
      end
    end
  end
  local ok, fn = pcall(function() return obj[method] end)
  if not ok or fn == nil then
    return string.format('help: %s has no method %s', label or type(obj), method)
  end
  -- a method that is also a documented namespace function (T.sum, F.relu)
  local entry, sc = lookup(scope, method)
  if not entry then
    local s, n = name_of(fn)
    if s then entry, sc = lookup(s, n) end
  end
  if not entry then return string.format('help: %s:%s is not in the docs', label or 'obj', method) end
  local text = format(entry, sc, method)
  -- a method the docs list by name only (tensor-reduce.md's `sum`): the
  -- namespace function's signature says how to call it
  if not entry[1]:find('[%({]') then
    local call, csc = lookup('T', method)
    if call and call[1]:find('[%({]') and csc == 'T' then text = format(call, csc, method) .. '\n' .. text end
  end
  return text
end

local usage = [[
help(obj) or ?obj prints the signature and a one-line summary from the docs:
  help(F.relu)   ?L.Linear   ?optimizers.Adam   ?x:reshape   help(x, 'sum')
Tab completes names, fields (chainer.tensor.ara<Tab>), methods (x:re<Tab>),
and file names inside strings. The docs: docs/README.md.]]

function M.text(obj, method)
  if obj == nil and method == nil then return usage end
  local label
  if type(obj) == 'string' and obj:match('^%s*[%a_][%w_%.:]*%s*$') then
    -- source text: x:reshape, F.relu, chainer.tensor.arange
    label = obj:match('^%s*(.-)%s*$')
    local lhs, m = label:match('^(.+):([%a_][%w_]*)$')
    local chunk = load('return ' .. (lhs or label), '=help')
    local ok, v = false, nil
    if chunk then ok, v = pcall(chunk) end
    if lhs then
      if not ok or v == nil then return 'help: ' .. lhs .. ' is nil' end
      return method_text(v, m, lhs)
    end
    if not ok or v == nil then
      -- not a value here: try the written name (`?relu`, `?T.zeros`)
      local head, name = label:match('^(.-)%.?([%a_][%w_]*)$')
      local scope
      for sc, pre in pairs(shown) do if pre == head .. '.' then scope = sc end end
      local entry, sc = lookup(scope, name)
      if entry then return format(entry, sc, name) end
      return 'help: ' .. label .. ' is nil and not in the docs'
    end
    obj = v
  end
  if method ~= nil then return method_text(obj, method, label) end
  if is_tensor(obj) then
    return string.format('a tensor of shape (%s), %s on %s: see help(T.Tensor), ?x:method (docs/tensor.md)',
      table.concat(obj.shape, ', '), obj.dtype, obj.device)
  end
  local scope, name = name_of(obj)
  if not scope then
    -- an instance: its class, nearest first
    for _, cls in ipairs(class_chain(obj)) do
      scope, name = name_of(cls)
      if scope then break end
    end
  end
  if scope then
    local entry, sc = lookup(scope, name)
    if entry then return format(entry, sc, name) end
    -- an undocumented namespace (chainer.functions) is listed below
    if not is_namespace(obj) then
      return string.format('help: %s%s is not in the docs', shown[scope] or (scope .. '.'), name)
    end
  end
  local ok, shown_as = pcall(tostring, obj)
  if is_namespace(obj) then
    -- a namespace (F, chainer.tensor) or a plain table: what is in it
    local _, list = require('chainer.repl.complete').candidates('t.', { t = obj })
    for i, n in ipairs(list) do list[i] = n:sub(3) end
    local shown_names = table.concat(list, ' ', 1, math.min(#list, 12))
    return string.format('%s: a table of %d names: %s%s\n  help(%s.name) for one; %s.<Tab> lists them',
      label or 'table', #list, shown_names, #list > 12 and ' ...' or '', label or 't', label or 't')
  end
  return 'help: no documentation for ' .. (label or (ok and shown_as) or '?') .. ' (' .. type(obj) .. ')'
end

function M.help(...)
  print(M.text(...))
end

return M
