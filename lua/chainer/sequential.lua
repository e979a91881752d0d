-- sequential.lua: chainer.Sequential, an ordered container of layers.
--
--   local model = chainer.Sequential(L.Linear(nil, 100), F.relu, L.Linear(nil, 10))
--   model:append(F.softmax)
--   local y = model(x)
--
-- A layer is a Link or any callable (a plain function such as F.relu).
-- model[i] is the i-th layer (1-based, Lua positions); the links among the
-- layers are the children, named by their 0-based position among links
-- ('0', '1', ...) exactly as Chainer names them, so files are compatible.
-- Each layer receives every value the previous layer returned.
local args = require 'chainer._args'
local sequence = require 'chainer._sequence'
local link = require 'chainer.link'
local ChainList = link.ChainList
local is_link = link.is_link

local Sequential = ChainList:extend('Sequential')

local unpack = unpack or table.unpack

local function is_callable(v)
  if type(v) == 'function' then return true end
  local mt = getmetatable(v)
  return type(mt) == 'table' and mt.__call ~= nil
end

function Sequential:init(...)
  ChainList.init(self)
  rawset(self, '_layers', rawget(self, '_layers') or {})
  for i = 1, select('#', ...) do self:append((select(i, ...))) end
end

-- Rebuilds the children list (links in layer order) and the positional fields.
local function sync(self)
  local layers = self._layers
  local kids = {}
  local n_old = rawget(self, '_nraw') or 0
  for i = 1, n_old do rawset(self, i, nil) end
  for i, l in ipairs(layers) do
    rawset(self, i, l)
    if is_link(l) then
      kids[#kids + 1] = l
      rawset(l, 'name', tostring(#kids - 1))
    end
  end
  rawset(self, '_nraw', #layers)
  rawset(self, '_children', kids)
end

local function check_layer(layer, fn)
  if not is_link(layer) and not is_callable(layer) then
    error(string.format('%s: a layer must be a Link or a callable (got %s)', fn, type(layer)), 3)
  end
end

-- After a layer joined: a link moves to the model's device; returns self.
local function added(self, layer)
  if is_link(layer) then
    local dev = rawget(self, '_device')
    if dev ~= -1 then layer:to_device(dev) end
  end
  sync(self)
  return self
end

function Sequential:append(layer)
  check_layer(layer, 'append')
  local layers = self._layers
  layers[#layers + 1] = layer
  return added(self, layer)
end
Sequential.add_link = Sequential.append

-- insert(i, layer): layer becomes model[i] (1 <= i <= #model + 1; negative counts from the end).
function Sequential:insert(i, layer)
  check_layer(layer, 'insert')
  local n = #self._layers
  if type(i) ~= 'number' then error('insert: position must be a number', 2) end
  if i < 0 then i = n + 2 + i end
  if i < 1 or i > n + 1 then
    error(string.format('insert: position %d is out of range (expected 1..%d)', i, n + 1), 2)
  end
  table.insert(self._layers, i, layer)
  return added(self, layer)
end

function Sequential:extend(layers)
  if type(layers) ~= 'table' then error('extend: expected a list of layers', 2) end
  if getmetatable(layers) == Sequential or (is_link(layers) and rawget(layers, '_layers')) then
    layers = layers._layers
  end
  for _, l in ipairs(layers) do self:append(l) end
  return self
end

-- remove(layer): removes the first occurrence of layer.
function Sequential:remove(layer)
  for i, l in ipairs(self._layers) do
    if l == layer then
      table.remove(self._layers, i)
      sync(self)
      return self
    end
  end
  error('remove: the layer is not in this Sequential', 2)
end

-- pop(i): removes and returns model[i] (default: the last).
function Sequential:pop(i)
  local n = #self._layers
  i = i or n
  if i < 0 then i = n + 1 + i end
  if i < 1 or i > n then error(string.format('pop: position %s is out of range (expected 1..%d)', tostring(i), n), 2) end
  local l = table.remove(self._layers, i)
  sync(self)
  return l
end

-- remove_by_layer_type(name): removes every layer whose class name is `name`.
function Sequential:remove_by_layer_type(type_name)
  local keep = {}
  for _, l in ipairs(self._layers) do
    local cls = getmetatable(l)
    local n = is_link(l) and cls.__name or nil
    if n ~= type_name then keep[#keep + 1] = l end
  end
  rawset(self, '_layers', keep)
  sync(self)
end

function Sequential:clear()
  rawset(self, '_layers', {})
  sync(self)
end

function Sequential:index(layer) return sequence.index(self._layers, layer) end
function Sequential:count(layer) return sequence.count(self._layers, layer) end

function Sequential:count_by_layer_type(type_name)
  local n = 0
  for _, l in ipairs(self._layers) do
    if is_link(l) and getmetatable(l).__name == type_name then n = n + 1 end
  end
  return n
end

function Sequential:len() return #self._layers end

-- reverse(): the layers in the opposite order, in place (Chainer's
-- MutableSequence.reverse); returns self.
function Sequential:reverse()
  sequence.reverse(self._layers)
  sync(self)
  return self
end

-- flatten(): a new Sequential with the layers of nested Sequentials spliced
-- in, recursively (the layers themselves are shared, as in Chainer).
function Sequential:flatten()
  local out = Sequential()
  for _, l in ipairs(self._layers) do
    if getmetatable(l) == Sequential then out:extend(l:flatten()) else out:append(l) end
  end
  return out
end

function Sequential:forward(...)
  local layers = self._layers
  if #layers == 0 then error('Sequential: this Sequential has no layer', 2) end
  local n = select('#', ...)
  local xs = { ... }
  for i = 1, #layers do
    local l = layers[i]
    local out = { l(unpack(xs, 1, n)) }
    xs = out
    n = #out
  end
  return unpack(xs, 1, n)
end

-- Chainer's Sequential.repeat: the whole sequence n times.
local MODE = args.accept { 'mode' }

function Sequential:repeat_(n_repeat, opts)
  local mode = type(opts) == 'table' and args.options('Sequential.repeat_', opts, MODE).mode or opts or 'init'
  local ret = Sequential()
  for _ = 1, n_repeat do
    for _, l in ipairs(self._layers) do
      if is_link(l) then ret:append(l:copy{ mode = mode }) else ret:append(l) end
    end
  end
  return ret
end
Sequential['repeat'] = Sequential.repeat_

local function copy_with_layers(self, c, mode)
  local layers = {}
  local map = {}
  for i, child in ipairs(c._children) do map[self._children[i]] = child end
  for i, l in ipairs(self._layers) do layers[i] = map[l] or l end
  rawset(c, '_layers', layers)
  sync(c)
  return c
end

function Sequential:_copy_share()
  local c = ChainList._copy_share(self)
  return copy_with_layers(self, c, 'share')
end

function Sequential:copy(opts)
  local c = ChainList.copy(self, opts)
  return c
end

local function layer_name(l)
  if is_link(l) then return nil end
  if package.loaded['chainer.functions'] then
    for k, v in pairs(require('chainer.functions._index').all()) do if v == l then return k end end
  end
  return tostring(l)
end

Sequential.__tostring = function(self)
  local lines = { 'Sequential(' }
  local kid = 0
  for _, l in ipairs(self._layers) do
    if is_link(l) then
      lines[#lines + 1] = '  (' .. kid .. '): ' .. link.Link._render(l, '  ') .. ','
      kid = kid + 1
    else
      lines[#lines + 1] = '  ' .. layer_name(l) .. ','
    end
  end
  lines[#lines + 1] = ')'
  return table.concat(lines, '\n')
end

return Sequential
