-- _args.lua: the one argument layer of chainlua (internal; not exported).
--
-- Every function, link, optimizer, iterator, extension, dataset and updater
-- reads its arguments through these helpers, so that a misspelled option is
-- an error everywhere and every message has the same shape:
--   "<fn>: unknown option 'axes' (accepted: axis, keepdims)"
--   "<fn>: x must be a Variable or a tensor (got string)"
--
-- Errors blame the user's line: the first frame up the stack that runs
-- neither chainlua's own modules (lua/chainer/, lua/chainermn/) nor C, however
-- deep the library's calls (a Link's constructor reached through the class
-- call, a helper parsing for its public function).  The `level` arguments
-- (as Lua's error(): the level as seen by the helper's caller, 2 by default)
-- are the fallback when no such frame exists.
local T = require 'chainer.tensor'

local M = {}

local getinfo = debug.getinfo

-- error(msg) at the user's frame; `level` is relative to the function that
-- reports the error (fail's caller).
local function fail(msg, level)
  for lvl = 3, 50 do
    local info = getinfo(lvl, 'S')
    if not info then break end
    local src = info.source
    if info.what ~= 'C' and not src:find('[/\\]chainer[/\\]') and not src:find('[/\\]chainermn[/\\]') then
      error(msg, lvl)
    end
  end
  error(msg, level + 1)
end
M.fail = fail   -- for modules whose checks run below a class constructor

local EMPTY = setmetatable({}, {
  __newindex = function() error('_args: the shared empty options table is read-only', 2) end,
})
M.EMPTY = EMPTY

---------------------------------------------------------------------------
-- accepted option names
---------------------------------------------------------------------------
-- A set of accepted option names, built once per function at load time:
--   local SUM_OPTIONS = args.accept { 'axis', 'keepdims' }
-- The sorted list is kept for the error message.
function M.accept(names)
  local set = { _names = {} }
  for i, n in ipairs(names) do
    assert(type(n) == 'string' and n ~= '_names', '_args.accept: option names are strings')
    set[n] = true
    set._names[i] = n
  end
  table.sort(set._names)
  set._list = table.concat(set._names, ', ')
  return set
end

local function as_accept(allowed)
  if allowed._names then return allowed end
  -- a plain list or set given inline: build (slower; prefer accept() at load time)
  local names = {}
  if allowed[1] ~= nil then
    for _, n in ipairs(allowed) do names[#names + 1] = n end
  else
    for n in pairs(allowed) do names[#names + 1] = n end
  end
  return M.accept(names)
end

-- True for a value that can be a trailing options table: a plain table
-- with no metatable, not a tensor, not a list.
function M.is_options(v)
  return type(v) == 'table' and getmetatable(v) == nil and v[1] == nil and not T.is_tensor(v)
    and not v._is_variable and not v._is_link
end

-- Checks an options table (nil: none) against the accepted names and
-- returns it (or a shared, read-only empty table).  No allocation on the
-- common paths, so it is fine in hot functions.
function M.options(fn, opts, allowed, level)
  if opts == nil then return EMPTY end
  if type(opts) ~= 'table' or getmetatable(opts) ~= nil or T.is_tensor(opts) then
    fail(string.format('%s: options must be a table (got %s)', fn, T.is_tensor(opts) and 'a tensor' or type(opts)),
      (level or 2) + 1)
  end
  local acc = allowed._names and allowed or as_accept(allowed)
  for k in pairs(opts) do
    if acc[k] ~= true or k == '_names' or k == '_list' then
      fail(string.format("%s: unknown option '%s' (accepted: %s)", fn, tostring(k),
        acc._list ~= '' and acc._list or 'none'), (level or 2) + 1)
    end
  end
  return opts
end

-- Chainer's positional arguments with a trailing options table, as one
-- table name -> value: parse(fn, sig, n, ...) with sig = signature{...}
-- (or a plain list of names in Chainer's order), n = select('#', ...).
-- Positional values fill the names in order; a trailing plain table
-- (is_options) holds the rest by name.  Unknown names, too many positional
-- values and a name given both ways are errors (blaming the caller of the
-- function that calls parse; parse_at(level, ...) takes options()' level).
local function parse(level, fn, names, n, ...)
  local acc = names._names and names or M.signature(names)
  local order = acc._order or acc._names
  local out = {}
  local last = n
  while last > 0 and select(last, ...) == nil do last = last - 1 end
  local opts
  if last > 0 then
    local v = select(last, ...)
    if M.is_options(v) then
      opts = v
      last = last - 1
    end
  end
  if last > #order then
    fail(string.format('%s: too many positional arguments (%d given, at most %d: %s)', fn, last, #order,
      table.concat(order, ', ')), level)
  end
  for i = 1, last do
    local v = select(i, ...)
    if v ~= nil then out[order[i]] = v end
  end
  if opts then
    for k, v in pairs(opts) do
      if acc[k] ~= true then
        fail(string.format("%s: unknown option '%s' (accepted: %s)", fn, tostring(k),
          acc._list ~= '' and acc._list or 'none'), level)
      end
      if out[k] ~= nil then fail(string.format('%s: %s given both positionally and in the options', fn, k), level) end
      out[k] = v
    end
  end
  return out
end

function M.parse(fn, names, n, ...)
  local out = parse(4, fn, names, n, ...)
  return out
end

function M.parse_at(level, fn, names, n, ...)
  local out = parse((level or 2) + 2, fn, names, n, ...)
  return out
end

-- An ordered set for parse(): Chainer's positional arguments in order,
-- then (optionally) names accepted only in the options table:
--   args.signature({ 'y_keys', 'x_key', 'trigger' }, { 'file_name' })
-- Error messages list them in this order.
function M.signature(names, keyword_only)
  local all = {}
  for i, n in ipairs(names) do all[i] = n end
  for _, n in ipairs(keyword_only or {}) do all[#all + 1] = n end
  local acc = M.accept(all)
  acc._order = {}
  for i, n in ipairs(names) do acc._order[i] = n end
  acc._list = table.concat(all, ', ')
  return acc
end

---------------------------------------------------------------------------
-- arrays from Variable-or-tensor arguments (always fn, name, value)
---------------------------------------------------------------------------
local floats = { float16 = true, float32 = true, float64 = true }

local function describe(v)
  if T.is_tensor(v) then return v.dtype .. ' tensor' end
  if type(v) == 'table' and v._is_variable then return 'a Variable without data (an uninitialised Parameter)' end
  return type(v)
end

-- The tensor of a Variable or tensor argument, or an error.
function M.array(fn, name, v, level)
  local d = v
  if type(v) == 'table' and v._is_variable then d = v._data end
  if not T.is_tensor(d) then
    fail(string.format('%s: %s must be a Variable or a tensor (got %s)', fn, name, describe(v)), (level or 2) + 1)
  end
  return d
end

-- The same, and the tensor must have a float dtype.
function M.float_array(fn, name, v, level)
  local d = M.array(fn, name, v, (level or 2) + 1)
  if not floats[d.dtype] then
    fail(string.format('%s: %s must be a float tensor (float16, float32 or float64; got %s)', fn, name, d.dtype),
      (level or 2) + 1)
  end
  return d
end

-- The same, and the tensor must have an integer dtype (labels, indices).
function M.int_array(fn, name, v, level)
  local d = M.array(fn, name, v, (level or 2) + 1)
  if floats[d.dtype] or d.dtype == 'bool' then
    fail(string.format('%s: %s must be an integer tensor (got %s)', fn, name, d.dtype), (level or 2) + 1)
  end
  return d
end

return M
