-- tensor/print.lua: NumPy-like text form of a tensor.
--   tensor([[0.5, 1. ],
--           [2. , 3.5]], dtype=float32)
-- Large tensors are summarised with '...' (3 entries each side of an axis
-- longer than 6 once the tensor has over `threshold` elements).
local M = require 'chainer.tensor.core'

local print_options = { threshold = 1000, edgeitems = 3, precision = 4, linewidth = 80 }
M.print_options = print_options

local function fmt_float(x, precision, use_exp, all_integral)
  if x ~= x then return 'nan' end
  if x == math.huge then return 'inf' end
  if x == -math.huge then return '-inf' end
  if use_exp then return string.format('%.' .. precision .. 'e', x) end
  if all_integral then return string.format('%.0f.', x) end
  local s = string.format('%.' .. precision .. 'f', x)
  s = s:gsub('0+$', '')            -- 2.5000 -> 2.5, 3.0000 -> 3.
  return s
end

function M.format_body(t)
  local shape = t.shape
  local nd = #shape
  local dtype = t.dtype
  local summary = t.size > print_options.threshold
  local src = t
  if summary then
    -- only the edges are needed: slice them out before converting to Lua
    local edge = print_options.edgeitems
    local terms = {}
    src = t
    for a = 0, nd - 1 do
      if shape[a + 1] > 2 * edge then
        local head = src:slice(unpack(terms), { 0, edge })
        local tail = src:slice(unpack(terms), { -edge, nil })
        src = M.concatenate and M.concatenate({ head, tail }, a) or src
      end
      terms[#terms + 1] = { nil, nil }
    end
  end
  local values = src:totable()
  if nd == 0 then values = { values } end
  -- decide the number format from all shown values
  local flat = {}
  local function collect(v, d)
    if d > math.max(nd, 1) then flat[#flat + 1] = v return end
    for i = 1, #v do collect(v[i], d + 1) end
  end
  collect(values, 1)
  local is_float = dtype == 'float16' or dtype == 'float32' or dtype == 'float64'
  local use_exp, all_integral = false, true
  if is_float then
    local maxabs, minabs = 0, math.huge
    for _, x in ipairs(flat) do
      if x == x and math.abs(x) ~= math.huge then
        local a = math.abs(x)
        if a > maxabs then maxabs = a end
        if a > 0 and a < minabs then minabs = a end
        if x ~= math.floor(x) then all_integral = false end
      end
    end
    use_exp = maxabs >= 1e8 or (minabs < 1e-4 and minabs > 0) or (maxabs > 0 and maxabs / minabs > 1e8 and minabs < 1)
  end
  local width = 0
  local function str_of(x)
    if type(x) == 'boolean' then return x and 'True' or 'False' end
    if is_float then return fmt_float(x, print_options.precision, use_exp, all_integral) end
    return string.format('%d', x)
  end
  -- NumPy's alignment: fixed-point floats line up on the decimal point (the
  -- integer parts padded on the left, the fractions on the right to the
  -- longest of each), everything else is right-justified to a common width.
  local int_width, frac_width = 0, -1
  if is_float and not use_exp then
    for _, x in ipairs(flat) do
      local whole, frac = str_of(x):match('^([^.]*)%.(.*)$')
      if whole then
        int_width = math.max(int_width, #whole)
        frac_width = math.max(frac_width, #frac)
      end
    end
  end
  if frac_width >= 0 then
    local plain = str_of
    str_of = function(x)
      local s = plain(x)
      local whole, frac = s:match('^([^.]*)%.(.*)$')
      if not whole then return s end   -- nan and inf are right-justified below
      return string.rep(' ', int_width - #whole) .. s .. string.rep(' ', frac_width - #frac)
    end
  end
  for _, x in ipairs(flat) do
    local s = str_of(x)
    if #s > width then width = #s end
  end
  local function render(v, d, indent)
    if nd == 0 then return str_of(v[1]) end
    local parts = {}
    local last = d == nd
    local n = #v
    local edge = print_options.edgeitems
    for i = 1, n do
      if summary and shape[d] > 2 * edge and i == edge + 1 then
        parts[#parts + 1] = '...'
      end
      if last then
        local s = str_of(v[i])
        parts[#parts + 1] = string.rep(' ', width - #s) .. s
      else
        parts[#parts + 1] = render(v[i], d + 1, indent .. ' ')
      end
    end
    if last then
      -- wrap long rows
      local line, lines = '', {}
      for i, p in ipairs(parts) do
        local piece = p .. (i < #parts and ', ' or '')
        if #line + #piece > print_options.linewidth - #indent and line ~= '' then
          lines[#lines + 1] = line
          line = ''
        end
        line = line .. piece
      end
      lines[#lines + 1] = line
      return '[' .. table.concat(lines, '\n' .. indent .. ' ') .. ']'
    end
    local sep = ',' .. string.rep('\n', nd - d) .. indent .. ' '
    return '[' .. table.concat(parts, sep) .. ']'
  end
  return render(values, 1, '')
end

function M.tostring(t)
  local ok, body = pcall(M.format_body, t)
  if not ok then body = '<' .. tostring(body) .. '>' end
  local prefix = 'tensor('
  body = body:gsub('\n', '\n' .. string.rep(' ', #prefix))
  local suffix = ', dtype=' .. t.dtype
  if t.size == 0 then suffix = suffix .. ', shape=' .. M.shape_str(t.shape) end
  if t.ptr.dev ~= -1 then suffix = suffix .. ", device='" .. t.device .. "'" end
  return prefix .. body .. suffix .. ')'
end

return M
