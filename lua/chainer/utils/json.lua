-- utils/json.lua: a small, strict JSON reader and writer.
--
-- decode(text) returns Lua values: objects become tables with string keys,
-- arrays become 1-based sequences, null becomes json.null (a sentinel, so
-- that arrays keep their length).  encode(value, {indent = 4}) writes
-- objects with sorted keys so output is stable (LogReport's `log` file).
local json = {}

json.null = setmetatable({}, { __tostring = function() return 'null' end })

-- Marks a table as an array even when empty (encode writes [] not {}).
local array_mt = { __jsontype = 'array' }
function json.array(t) return setmetatable(t or {}, array_mt) end

---------------------------------------------------------------------------
-- decoding
---------------------------------------------------------------------------
local escapes = { ['"'] = '"', ['\\'] = '\\', ['/'] = '/', b = '\b', f = '\f', n = '\n', r = '\r', t = '\t' }

local function utf8_char(cp)
  if cp < 0x80 then return string.char(cp) end
  if cp < 0x800 then return string.char(0xC0 + math.floor(cp / 64), 0x80 + cp % 64) end
  if cp < 0x10000 then
    return string.char(0xE0 + math.floor(cp / 4096), 0x80 + math.floor(cp / 64) % 64, 0x80 + cp % 64)
  end
  return string.char(0xF0 + math.floor(cp / 262144), 0x80 + math.floor(cp / 4096) % 64,
    0x80 + math.floor(cp / 64) % 64, 0x80 + cp % 64)
end

local function decode_error(str, pos, what)
  local line, col = 1, 1
  for i = 1, pos - 1 do
    if str:sub(i, i) == '\n' then line, col = line + 1, 1 else col = col + 1 end
  end
  error(string.format('json: %s at line %d column %d', what, line, col), 0)
end

local function skip(str, pos)
  return str:find('[^ \t\r\n]', pos) or #str + 1
end

local parse_value

local function parse_string(str, pos)
  local out, i = {}, pos + 1
  while true do
    local j = str:find('["\\]', i)
    if not j then decode_error(str, pos, 'unterminated string') end
    out[#out + 1] = str:sub(i, j - 1)
    if str:sub(j, j) == '"' then return table.concat(out), j + 1 end
    local c = str:sub(j + 1, j + 1)
    if c == 'u' then
      local hex = str:sub(j + 2, j + 5)
      if not hex:match('^%x%x%x%x$') then decode_error(str, j, 'bad \\u escape') end
      local cp = tonumber(hex, 16)
      local nexti = j + 6
      if cp >= 0xD800 and cp <= 0xDBFF and str:sub(nexti, nexti + 1) == '\\u' then
        local lo = tonumber(str:sub(nexti + 2, nexti + 5), 16)
        if lo and lo >= 0xDC00 and lo <= 0xDFFF then
          cp = 0x10000 + (cp - 0xD800) * 1024 + (lo - 0xDC00)
          nexti = nexti + 6
        end
      end
      out[#out + 1] = utf8_char(cp)
      i = nexti
    elseif escapes[c] then
      out[#out + 1] = escapes[c]
      i = j + 2
    else
      decode_error(str, j, 'bad escape')
    end
  end
end

local function parse_number(str, pos)
  local num = str:match('^-?%d+%.?%d*[eE]?[-+]?%d*', pos)
  local v = num and tonumber(num)
  if not v then decode_error(str, pos, 'bad number') end
  return v, pos + #num
end

function parse_value(str, pos, depth)
  if depth > 512 then decode_error(str, pos, 'nesting too deep') end
  pos = skip(str, pos)
  local c = str:sub(pos, pos)
  if c == '{' then
    local obj = {}
    pos = skip(str, pos + 1)
    if str:sub(pos, pos) == '}' then return obj, pos + 1 end
    while true do
      pos = skip(str, pos)
      if str:sub(pos, pos) ~= '"' then decode_error(str, pos, 'expected a string key') end
      local key
      key, pos = parse_string(str, pos)
      pos = skip(str, pos)
      if str:sub(pos, pos) ~= ':' then decode_error(str, pos, "expected ':'") end
      obj[key], pos = parse_value(str, pos + 1, depth + 1)
      pos = skip(str, pos)
      local d = str:sub(pos, pos)
      if d == '}' then return obj, pos + 1 end
      if d ~= ',' then decode_error(str, pos, "expected ',' or '}'") end
      pos = pos + 1
    end
  elseif c == '[' then
    local arr, n = json.array(), 0
    pos = skip(str, pos + 1)
    if str:sub(pos, pos) == ']' then return arr, pos + 1 end
    while true do
      n = n + 1
      arr[n], pos = parse_value(str, pos, depth + 1)
      pos = skip(str, pos)
      local d = str:sub(pos, pos)
      if d == ']' then return arr, pos + 1 end
      if d ~= ',' then decode_error(str, pos, "expected ',' or ']'") end
      pos = pos + 1
    end
  elseif c == '"' then
    return parse_string(str, pos)
  elseif c == '-' or c:match('%d') then
    return parse_number(str, pos)
  elseif str:sub(pos, pos + 3) == 'true' then
    return true, pos + 4
  elseif str:sub(pos, pos + 4) == 'false' then
    return false, pos + 5
  elseif str:sub(pos, pos + 3) == 'null' then
    return json.null, pos + 4
  elseif str:sub(pos, pos + 2) == 'NaN' then     -- Python's json writes these
    return 0 / 0, pos + 3
  elseif str:sub(pos, pos + 7) == 'Infinity' then
    return math.huge, pos + 8
  elseif str:sub(pos, pos + 8) == '-Infinity' then
    return -math.huge, pos + 9
  end
  decode_error(str, pos, c == '' and 'unexpected end of input' or ("unexpected character '" .. c .. "'"))
end

function json.decode(str)
  if type(str) ~= 'string' then error('json.decode: expected a string (got ' .. type(str) .. ')', 2) end
  local value, pos = parse_value(str, 1, 0)
  pos = skip(str, pos)
  if pos <= #str then decode_error(str, pos, 'trailing characters') end
  return value
end

function json.read_file(path)
  local f, err = io.open(path, 'rb')
  if not f then error('json.read_file: cannot open ' .. tostring(err), 2) end
  local text = f:read('*a')
  f:close()
  local ok, v = pcall(json.decode, text)
  if not ok then error(path .. ': ' .. tostring(v), 2) end
  return v
end

---------------------------------------------------------------------------
-- encoding
---------------------------------------------------------------------------
local function encode_string(s)
  return '"' .. s:gsub('[%c"\\]', function(c)
    local map = { ['"'] = '\\"', ['\\'] = '\\\\', ['\n'] = '\\n', ['\t'] = '\\t', ['\r'] = '\\r',
      ['\b'] = '\\b', ['\f'] = '\\f' }
    return map[c] or string.format('\\u%04x', c:byte())
  end) .. '"'
end

local function encode_number(x)
  if x ~= x then return 'NaN' end
  if x == math.huge then return 'Infinity' end
  if x == -math.huge then return '-Infinity' end
  if x == math.floor(x) and math.abs(x) < 2 ^ 53 then return string.format('%d', x) end
  return string.format('%.17g', x)
end

local function is_array(t)
  if getmetatable(t) == array_mt then return true end
  local n = #t
  if n == 0 then return false end
  for k in pairs(t) do
    if type(k) ~= 'number' or k < 1 or k > n or k ~= math.floor(k) then return false end
  end
  return true
end

local function encode_value(v, indent, level, seen)
  local t = type(v)
  if v == nil or v == json.null then return 'null' end
  if t == 'boolean' then return tostring(v) end
  if t == 'number' then return encode_number(v) end
  if t == 'string' then return encode_string(v) end
  if t == 'cdata' then
    local n = tonumber(v)
    if n then return encode_number(n) end
  end
  if t ~= 'table' then error('json.encode: cannot encode a ' .. t, 0) end
  if seen[v] then error('json.encode: cyclic table', 0) end
  seen[v] = true
  local nl = indent and ('\n' .. string.rep(' ', indent * (level + 1))) or ''
  local close = indent and ('\n' .. string.rep(' ', indent * level)) or ''
  local sep = indent and ': ' or ':'
  local parts = {}
  local out
  if is_array(v) then
    for i = 1, #v do parts[i] = nl .. encode_value(v[i], indent, level + 1, seen) end
    out = #parts == 0 and '[]' or ('[' .. table.concat(parts, ',') .. close .. ']')
  else
    local keys = {}
    for k in pairs(v) do
      if type(k) ~= 'string' and type(k) ~= 'number' then
        error('json.encode: object keys must be strings (got ' .. type(k) .. ')', 0)
      end
      keys[#keys + 1] = tostring(k)
    end
    table.sort(keys)
    for i, k in ipairs(keys) do
      local val = v[k]
      if val == nil then val = v[tonumber(k)] end
      parts[i] = nl .. encode_string(k) .. sep .. encode_value(val, indent, level + 1, seen)
    end
    out = #parts == 0 and '{}' or ('{' .. table.concat(parts, ',') .. close .. '}')
  end
  seen[v] = nil
  return out
end

local ENCODE_OPTIONS   -- built on first use: this module loads without the C library

-- encode(value, {indent = n}): JSON text; indent n pretty-prints.
function json.encode(v, opts)
  local indent
  if opts ~= nil then
    local args = require 'chainer._args'
    ENCODE_OPTIONS = ENCODE_OPTIONS or args.accept { 'indent' }
    indent = args.options('json.encode', opts, ENCODE_OPTIONS).indent
  end
  return encode_value(v, indent, 0, {})
end

return json
