-- training/_util.lua: small helpers shared by the Trainer, triggers and
-- extensions: a monotonic clock, terminal detection, Python-compatible
-- number formatting and the serializer glue.  Files go through chainer._fs.
local T = require 'chainer.tensor'
local libc = require 'chainer._libc'
local base_serializer = require 'chainer.serializer'

local M = {}

-- The keys of t in sorted order: named iterators, optimizers and targets
-- are visited in this order, as Chainer's sorted(dict).
function M.sorted_keys(t)
  local ks = {}
  for k in pairs(t) do ks[#ks + 1] = k end
  table.sort(ks)
  return ks
end

-- Whether x is a dataset iterator (a table with :next()).
function M.is_iterator(x) return type(x) == 'table' and type(x.next) == 'function' end

-- Chainer's "one X or a dict with 'main'": {main = value} when is_one(value),
-- value itself when it is a table whose main is_one accepts; else the
-- error message, blaming the caller of the constructor that calls this.
function M.main_table(value, is_one, message)
  if is_one(value) then return { main = value } end
  if type(value) ~= 'table' or not is_one(value.main) then error(message, 4) end
  return value
end

-- f called with a converter's output: a Lua array spread as arguments, a
-- table of named arrays or a single array as one argument (the updaters'
-- loss calls).
function M.call_with_arrays(f, in_arrays)
  if type(in_arrays) == 'table' and not in_arrays._is_variable and in_arrays[1] ~= nil then
    return f(unpack(in_arrays, 1, #in_arrays))
  end
  return f(in_arrays)
end

-- Finalizes every iterator of a {name = iterator} table that can be.
function M.finalize_iterators(iterators)
  for _, k in ipairs(M.sorted_keys(iterators)) do
    local it = iterators[k]
    if it.finalize then it:finalize() end
  end
end

-- Seconds from a monotonic clock.
M.now = libc.monotonic

-- True when `out` (io.stdout / io.stderr) is a terminal.  Any other file
-- or writer object is not.  CHAINLUA_PROGRESS=plain forces plain output.
function M.isatty(out)
  if os.getenv('CHAINLUA_PROGRESS') == 'plain' then return false end
  if out == io.stdout then return libc.isatty(1) end
  if out == io.stderr then return libc.isatty(2) end
  return false
end

---------------------------------------------------------------------------
-- numbers
---------------------------------------------------------------------------
-- Lua number of a scalar: number, boolean, 0-d/1-element tensor, Variable,
-- 64-bit cdata.  Returns nil for anything else.
function M.to_number(v)
  local tv = type(v)
  if tv == 'number' then return v end
  if tv == 'boolean' then return v and 1 or 0 end
  if tv == 'cdata' then
    if T.is_tensor(v) then return v:item() end
    return tonumber(v)
  end
  if tv == 'table' then
    if v._is_variable then
      local d = v._data
      if d == nil then return nil end
      return d:item()
    end
  end
  return nil
end

-- True when v is a scalar a summary can take (number, 0-d or 1-element
-- tensor, Variable holding one).
function M.is_scalar(v)
  local tv = type(v)
  if tv == 'number' then return true end
  if tv == 'cdata' then return T.is_tensor(v) and tonumber(v.ptr.numel) == 1 or tonumber(v) ~= nil end
  if tv == 'table' and v._is_variable then
    local d = v._data
    return d ~= nil and tonumber(d.ptr.numel) == 1
  end
  return false
end

-- Python's '{:g}' (also the 'g' of '{:<10g}'): C's %g plus Python's
-- spelling of the special values.
function M.fmt_g(x, spec)
  spec = spec or '%g'
  if x ~= x or x == math.huge or x == -math.huge then
    local s = spec:gsub('%.%d+g$', 'g'):gsub('g$', 's')
    return s:format(x ~= x and 'nan' or (x > 0 and 'inf' or '-inf'))
  end
  return spec:format(x)
end

-- Python's str(datetime.timedelta(seconds=s)): 'H:MM:SS[.ffffff]' with a
-- leading 'D day(s), ' when at least one day.
function M.timedelta(s)
  if s ~= s or s == math.huge then return 'inf' end
  local us = math.floor(s * 1e6 + 0.5)
  local neg = us < 0
  if neg then us = -us end
  local days = math.floor(us / 86400e6)
  us = us - days * 86400e6
  local secs = math.floor(us / 1e6)
  local frac = us - secs * 1e6
  local h, m, sec = math.floor(secs / 3600), math.floor(secs / 60) % 60, secs % 60
  local out = string.format('%d:%02d:%02d', h, m, sec)
  if frac ~= 0 then out = out .. string.format('.%06d', frac) end
  if days > 0 then out = string.format('%d day%s, %s', days, days == 1 and '' or 's', out) end
  if neg then out = '-' .. out end
  return out
end

---------------------------------------------------------------------------
-- templates
---------------------------------------------------------------------------
-- Python's str.format with one positional argument for filename templates:
-- '{.updater.iteration}', '{0.updater.epoch}', '{.updater.epoch:03d}' walk
-- fields of `obj`; '{name}' reads obj[name] (LogReport's '{iteration}').
local function py_spec(v, spec)
  if spec == nil or spec == '' then
    if type(v) == 'number' and v == math.floor(v) and math.abs(v) < 2 ^ 53 then
      return string.format('%d', v)
    end
    return tostring(v)
  end
  local conv = spec:sub(-1)
  if conv:match('%a') then
    if conv == 'd' then return string.format('%' .. spec, v) end
    return string.format('%' .. spec, v)
  end
  return string.format('%' .. spec .. 's', tostring(v))
end

function M.format_template(template, obj)
  if type(template) == 'function' then return template(obj) end
  return (template:gsub('{([^{}]*)}', function(field)
    local path, spec = field:match('^([^:]*):?(.*)$')
    local v = obj
    if path == '' or path == '0' then
      v = obj
    else
      path = path:gsub('^0', '')
      local first = true
      for part in path:gmatch('[^.]+') do
        if v == nil then break end
        v = v[part]
        first = false
      end
      if first then v = obj[path] end
    end
    if v == nil then
      error(string.format("template '%s': %s is not defined", template, field), 0)
    end
    return py_spec(v, spec)
  end))
end

-- A Lua pattern that matches the file names a template produces: each
-- field becomes a captured number run.  Returns the pattern and whether
-- the template had a field at all.
function M.template_pattern(template)
  local pat, nfields = {}, 0
  local pos = 1
  while true do
    local s, e = template:find('{[^{}]*}', pos)
    local lit = template:sub(pos, (s or 0) - 1)
    if not s then lit = template:sub(pos) end
    pat[#pat + 1] = lit:gsub('[%^%$%(%)%%%.%[%]%*%+%-%?]', '%%%0')
    if not s then break end
    pat[#pat + 1] = '([%d%.%-]+)'
    nfields = nfields + 1
    pos = e + 1
  end
  return '^' .. table.concat(pat) .. '$', nfields
end

---------------------------------------------------------------------------
-- serializers
---------------------------------------------------------------------------
-- True when `s` reads values back (a deserializer).  Serializers written
-- for chainlua mark themselves; a plain callable test double can set
-- `is_loading`/`is_deserializer` too.
function M.is_loading(s)
  if type(s) ~= 'table' then return false end
  if s.is_loading ~= nil then return s.is_loading == true end
  if s.is_deserializer ~= nil then return s.is_deserializer == true end
  if s.is_serializer ~= nil then return s.is_serializer ~= true end
  local mt = getmetatable(s)
  while type(mt) == 'table' do
    local name = rawget(mt, '__name')
    if type(name) == 'string' then
      if name:find('Deserializer') then return true end
      if name:find('Serializer') then return false end
    end
    mt = rawget(mt, '__super')
  end
  return false
end

function M.child(s, name)
  if s.child then return s:child(name) end
  return s[name]
end

-- State that may be absent from a file (chainer.serializer's optional mark).
M.optional = base_serializer.optional
M.optional_child = base_serializer.optional_child
M.tolerate_extra = base_serializer.tolerate_extra

-- serializer(key, number) returning a Lua number on load.
function M.ser_number(s, key, v)
  local r = s(key, v)
  if r == nil then return v end
  local n = M.to_number(r)
  if n == nil then return v end
  return n
end

function M.ser_bool(s, key, v)
  local r = s(key, v)
  if r == nil then return v end
  if type(r) == 'boolean' then return r end
  local n = M.to_number(r)
  if n == nil then return v end
  return n ~= 0
end

-- Strings travel as Lua strings (the NPZ serializer stores them as 0-d
-- unicode arrays, Chainer's layout); a tensor of codes is decoded too.
-- The previous-call state of IntervalTrigger and ManualScheduleTrigger
-- (_previous_iteration, _previous_epoch_detail): remembered after each call,
-- serialized under Chainer's keys.
function M.remember_previous(trigger, updater)
  trigger._previous_iteration = updater.iteration
  local ed = updater.epoch_detail
  if ed ~= nil then trigger._previous_epoch_detail = ed end
end

function M.serialize_previous(trigger, s)
  trigger._previous_iteration = M.ser_number(s, 'previous_iteration', trigger._previous_iteration)
  trigger._previous_epoch_detail = M.ser_number(s, 'previous_epoch_detail', trigger._previous_epoch_detail)
end

function M.ser_string(s, key, v)
  local r = s(key, v)
  if r == nil then return v end
  if type(r) == 'string' then return r end
  if T.is_tensor(r) and r.tostring then return r:tostring() end
  return tostring(r)
end

return M
