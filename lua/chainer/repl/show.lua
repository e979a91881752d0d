-- repl/show.lua: how the REPL prints a value.
--
-- Values with a __tostring (tensors, Variables, links, optimizers) print
-- as tostring gives them.  Plain tables print as Lua source, short and one
-- level deep at a time; a list of integers reads like the shapes in error
-- messages, `(2, 3)` (`(5,)` for one entry, as Chainer prints a tuple).
-- Other chainer objects (datasets, iterators, trainers) print as their class
-- with their length and their plain fields: `SerialIterator(batch_size=100,
-- epoch=0, ...)`.
local M = {}

local MAX_ITEMS = 12   -- entries shown of a table before "..."
local MAX_DEPTH = 2    -- nesting shown before "{...}"

local function is_identifier(k)
  return type(k) == 'string' and k:match('^[%a_][%w_]*$') ~= nil
end

-- A list of integers: 1..n keys, nothing else.
local function int_list(t)
  local n = 0
  for k, v in pairs(t) do
    if type(k) ~= 'number' or type(v) ~= 'number' or v ~= math.floor(v) then return false end
    n = n + 1
  end
  if n == 0 then return false end
  for i = 1, n do if t[i] == nil then return false end end
  return true
end

function M.shape(t)
  local parts = {}
  for i = 1, #t do parts[i] = string.format('%d', t[i]) end
  if #parts == 1 then return '(' .. parts[1] .. ',)' end
  return '(' .. table.concat(parts, ', ') .. ')'
end

local value

-- A plain scalar or string inside a table.
local function scalar(v)
  if type(v) == 'string' then return string.format('%q', v):gsub('\\\n', '\\n') end
  return tostring(v)
end

-- The length of an object that has one (datasets: __len or :len()).
local function length_of(obj)
  local mt = getmetatable(obj)
  local f = type(mt) == 'table' and (rawget(mt, '__len') or mt.len)
  if type(f) ~= 'function' then return nil end
  local ok, n = pcall(f, obj)
  if ok and type(n) == 'number' then return n end
  return nil
end

-- A chainer object without __tostring: Class(len=N, field=value, ...).
local function object(obj, cls)
  local parts = {}
  local n = length_of(obj)
  if n then parts[#parts + 1] = 'len=' .. n end
  local keys = {}
  for k, v in pairs(obj) do
    local tv = type(v)
    if is_identifier(k) and k:sub(1, 1) ~= '_' and (tv == 'number' or tv == 'string' or tv == 'boolean') then
      keys[#keys + 1] = k
    end
  end
  table.sort(keys)
  for i, k in ipairs(keys) do
    if i > MAX_ITEMS then
      parts[#parts + 1] = '...'
      break
    end
    parts[#parts + 1] = k .. '=' .. scalar(obj[k])
  end
  return tostring(rawget(cls, '__name')) .. '(' .. table.concat(parts, ', ') .. ')'
end

local function plain_table(t, depth, seen)
  if seen[t] then return '{<cycle>}' end
  if depth > MAX_DEPTH then return '{...}' end
  if int_list(t) then return M.shape(t) end
  seen[t] = true
  local parts, n = {}, #t
  for i = 1, math.min(n, MAX_ITEMS) do parts[#parts + 1] = value(t[i], depth + 1, seen) end
  local keys = {}
  for k in pairs(t) do
    if not (type(k) == 'number' and k >= 1 and k <= n and k == math.floor(k)) then keys[#keys + 1] = k end
  end
  table.sort(keys, function(a, b)
    if type(a) == type(b) and (type(a) == 'string' or type(a) == 'number') then return a < b end
    return type(a) < type(b)
  end)
  local shown = #parts
  for _, k in ipairs(keys) do
    if shown >= MAX_ITEMS then break end
    local key = is_identifier(k) and k or ('[' .. scalar(k) .. ']')
    parts[#parts + 1] = key .. ' = ' .. value(t[k], depth + 1, seen)
    shown = shown + 1
  end
  if n + #keys > shown then parts[#parts + 1] = '...' end
  seen[t] = nil
  return '{' .. table.concat(parts, ', ') .. '}'
end

value = function(v, depth, seen)
  if type(v) == 'string' then return depth == 0 and v or scalar(v) end
  if type(v) ~= 'table' or (type(getmetatable(v)) == 'table' and rawget(getmetatable(v), '__tostring')) then
    local ok, s = pcall(tostring, v)
    return ok and s or ('<tostring failed: ' .. tostring(s) .. '>')
  end
  local mt = getmetatable(v)
  if type(mt) == 'table' and rawget(mt, '__name') ~= nil then
    if rawget(mt, '__index') == mt or type(rawget(mt, '__index')) == 'function' then return object(v, mt) end
  end
  if mt == nil then return plain_table(v, depth, seen) end
  return tostring(v)
end

-- The text the REPL prints for one value (a top-level string prints raw,
-- as print would).
function M.value(v)
  return value(v, 0, {})
end

-- The REPL's line for several values: tab-separated, as print does.
function M.values(...)
  local n = select('#', ...)
  local parts = {}
  for i = 1, n do parts[i] = M.value((select(i, ...))) end
  return table.concat(parts, '\t')
end

return M
