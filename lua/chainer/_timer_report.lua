-- _timer_report.lua: what the function and link TimerHooks share: the
-- summary of a call history and Chainer's print_report table.
--
--   report.summary(history)                -- history: { {name, seconds}, ... }
--   report.print(summary, 'FunctionName', unit, file, 'TimerHook.print_report')
local M = {}

-- Chainer's TimerHook.table: the factor of each unit.
M.UNITS = { sec = 1, ms = 1e3, us = 1e6, ns = 1e9 }

-- { names = {names in first-seen order}, [name] = {elapsed_time = seconds, occurrence = n} }
-- from history entries {name, seconds}.  With `fields` (a list of names),
-- entry {name, v1, v2, ...} adds v1 to fields[1], v2 to fields[2], ...
-- (the memory profile hook sums used and acquired bytes this way).
local TIME_FIELDS = { 'elapsed_time' }
function M.summary(history, fields)
  fields = fields or TIME_FIELDS
  local out, names = {}, {}
  for _, e in ipairs(history) do
    local r = out[e[1]]
    if not r then
      r = { occurrence = 0 }
      for _, f in ipairs(fields) do r[f] = 0 end
      out[e[1]] = r
      names[#names + 1] = e[1]
    end
    for i, f in ipairs(fields) do r[f] = r[f] + e[i + 1] end
    r.occurrence = r.occurrence + 1
  end
  out.names = names
  return out
end

-- The largest unit in which `seconds` is at least 1 (Chainer's choice).
local function choose_unit(seconds)
  local factor = 1
  for _, unit in ipairs { 'sec', 'ms', 'us' } do
    if seconds * factor >= 1 then return factor, unit end
    factor = factor * 1000
  end
  return factor, 'ns'
end

-- One row per name with its total time and number of calls, right-aligned
-- columns headed by `first_column`.  unit: 'auto' (default: the unit of the
-- largest time), 'auto_foreach' (each row its own), 'sec', 'ms', 'us' or
-- 'ns'.  file: an open file (default io.stdout), or false to only return
-- the text.  Returns the text.
function M.print(s, first_column, unit, file, fn)
  unit = unit or 'auto'
  local auto_foreach = unit == 'auto_foreach'
  local factor
  if unit == 'auto' then
    local max = 0
    for _, name in ipairs(s.names) do max = math.max(max, s[name].elapsed_time) end
    factor, unit = choose_unit(max)
  elseif not auto_foreach then
    factor = M.UNITS[unit]
    if factor == nil then
      error(fn .. ": unit must be 'auto', 'auto_foreach', 'sec', 'ms', 'us' or 'ns' (got "
        .. tostring(unit) .. ')', 3)
    end
  end
  local rows = { { first_column, 'ElapsedTime', 'Occurrence' } }
  for _, name in ipairs(s.names) do
    local r = s[name]
    if auto_foreach then factor, unit = choose_unit(r.elapsed_time) end
    rows[#rows + 1] = { name, string.format('%3.2f%s', r.elapsed_time * factor, unit), tostring(r.occurrence) }
  end
  return M.write_table(rows, file)
end

-- Writes rows (lists of strings, the header first) as right-aligned columns
-- two spaces apart, as Chainer's hooks print their reports, on file (default
-- io.stdout; false: nowhere).  Returns the text.  (The memory profile hook
-- prints its table with it too.)
function M.write_table(rows, file)
  local widths = {}
  for _, row in ipairs(rows) do
    for i = 1, #row do widths[i] = math.max(widths[i] or 0, #row[i]) end
  end
  local lines = {}
  for r, row in ipairs(rows) do
    local cells = {}
    for i = 1, #row do cells[i] = string.rep(' ', widths[i] - #row[i]) .. row[i] end
    lines[r] = table.concat(cells, '  ')
  end
  local text = table.concat(lines, '\n') .. '\n'
  if file ~= false then
    local f = file or io.stdout
    f:write(text)
    if f.flush then f:flush() end
  end
  return text
end

return M
