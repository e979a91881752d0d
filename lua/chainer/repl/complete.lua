-- repl/complete.lua: what Tab offers at the REPL prompt.
--
-- Pure Lua, no terminal: runtime/host/repl.c hands over the line up to the
-- cursor and gets back the candidates, so everything here is testable
-- with plain strings.
--
--   complete.candidates(line [, env])  -> start, { full tokens }
--       the token being typed starts at line:sub(start); each candidate
--       replaces it (`chainer.tensor.ara` -> `chainer.tensor.arange`)
--   complete.for_readline(line, word_start [, env]) -> { replacements }
--       the same candidates cut to replace line:sub(word_start + 1), the
--       word libedit chose with its own word-break characters
--
-- Inside code the token is a chain of names: `a.b.c` completes fields of
-- a.b (through the metatables' __index chain), `a:b` its methods.  Inside
-- a string literal it is a file name.  Inside a comment nothing completes.
local M = {}

local keywords = {}
for w in ([[and break do else elseif end false for function goto if in local nil not or
  repeat return then true until while]]):gmatch('%a+') do keywords[w] = true end
M.keywords = keywords

-- Where the line stands at its end: 'code', 'comment', or 'string' with the
-- index just after the opening quote (long strings [[...]] included).
local function context(line)
  local i, n = 1, #line
  while i <= n do
    local c = line:sub(i, i)
    if c == '-' and line:sub(i, i + 1) == '--' then
      return 'comment'
    elseif c == '"' or c == "'" then
      local j = i + 1
      while j <= n do
        local d = line:sub(j, j)
        if d == '\\' then j = j + 1
        elseif d == c then break end
        j = j + 1
      end
      if j > n then return 'string', i + 1 end
      i = j + 1
    elseif c == '[' and line:match('^%[=*%[', i) then
      local open = line:match('^%[=*%[', i)
      local close = ']' .. open:sub(2, -2) .. ']'
      local j = line:find(close, i + #open, true)
      if not j then return 'string', i + #open end
      i = j + #close
    else
      i = i + 1
    end
  end
  return 'code'
end
M.context = context

-- The tables whose keys an object answers to: the object itself (when a
-- table), then along its metatable's __index: a table __index is followed,
-- a function __index stands for the metatable itself (the class pattern of
-- chainer.class) plus the tables it closes over (method and property
-- tables, as tensors and Variables keep them).
local function sources(obj)
  local out, seen = {}, {}
  local function add(t, depth)
    if type(t) ~= 'table' or seen[t] or depth > 32 then return end
    seen[t] = true
    out[#out + 1] = t
    local mt = getmetatable(t)
    if type(mt) == 'table' then
      local idx = rawget(mt, '__index')
      if type(idx) == 'table' then add(idx, depth + 1)
      elseif type(idx) == 'function' then add(mt, depth + 1) end
    end
  end
  local function closed_over(f, depth)
    for i = 1, 60 do
      local name, v = debug.getupvalue(f, i)
      if not name then break end
      if type(v) == 'table' then add(v, depth + 1) end
    end
  end
  if type(obj) == 'table' then
    add(obj, 0)
    local mt = getmetatable(obj)
    if type(mt) == 'table' and type(rawget(mt, '__index')) == 'function' then
      closed_over(rawget(mt, '__index'), 0)
    end
  elseif type(obj) == 'cdata' then
    -- a tensor's metatable is hidden by the FFI: ask chainer.tensor
    local T = package.loaded['chainer.tensor']
    if T and T.is_tensor and T.is_tensor(obj) then
      add(T.methods, 0)
      add(T.props, 0)
    end
  elseif type(obj) == 'string' then
    add(string, 0)
  end
  return out
end
M.sources = sources

-- The identifier-like names under `obj`; methods_only keeps functions.
-- Names starting with '_' show only when the prefix does.
local function names_of(obj, prefix, methods_only)
  local found, list = {}, {}
  local hidden_ok = prefix:sub(1, 1) == '_'
  for _, t in ipairs(sources(obj)) do
    for k, v in pairs(t) do
      if type(k) == 'string' and not found[k] and k:match('^[%a_][%w_]*$') and not keywords[k]
        and k:sub(1, #prefix) == prefix and (hidden_ok or k:sub(1, 1) ~= '_')
        and (not methods_only or type(v) == 'function') then
        found[k] = true
        list[#list + 1] = k
      end
    end
  end
  table.sort(list)
  return list
end

-- Follows a.b.c from env without calling anything but __index metamethods
-- (guarded): nil when some link is missing or raises.
local function resolve(path, env)
  local obj = env
  for name in path:gmatch('[^%.:]+') do
    local ok, v = pcall(function() return obj[name] end)
    if not ok or v == nil then return nil end
    obj = v
  end
  return obj
end
M.resolve = resolve

-- File names for a partial path typed inside a string.
local function file_candidates(partial)
  local fs = require 'chainer._fs'
  local dir, base = partial:match('^(.*/)([^/]*)$')
  if not dir then dir, base = '', partial end
  local listed = dir == '' and '.' or dir
  if listed:sub(1, 2) == '~/' and os.getenv('HOME') then listed = os.getenv('HOME') .. listed:sub(2) end
  local names = fs.listdir(listed) or {}
  local out = {}
  for _, name in ipairs(names) do
    if name:sub(1, #base) == base and (base:sub(1, 1) == '.' or name:sub(1, 1) ~= '.') then
      local full = dir .. name
      out[#out + 1] = fs.is_dir(listed .. '/' .. name) and full .. '/' or full
    end
  end
  table.sort(out)
  return out
end

-- start, candidates for the token at the end of `line` (see the header).
function M.candidates(line, env)
  env = env or _G
  local where, string_start = context(line)
  if where == 'comment' then return #line + 1, {} end
  if where == 'string' then
    return string_start, file_candidates(line:sub(string_start))
  end
  -- the chain of names before the cursor: name(.name)*[.:]partial
  local chain = line:match('[%a_][%w_%.:]*$') or ''
  -- a chain glued to a preceding name character or a number is not one
  local start = #line - #chain + 1
  if chain == '' then return #line + 1, {} end
  if chain:find('::', 1, true) or chain:find('[%.:][%.:]') then return #line + 1, {} end
  local head, sep, partial = chain:match('^(.-)([%.:]?)([%w_]*)$')
  if sep == '' then
    -- a bare name: globals and keywords
    local list = names_of(env, partial, false)
    for k in pairs(keywords) do
      if k:sub(1, #partial) == partial and #partial > 0 then list[#list + 1] = k end
    end
    table.sort(list)
    return start, list
  end
  if head:find(':', 1, true) then return #line + 1, {} end   -- a:b.c is not a chain
  local obj = resolve(head, env)
  if obj == nil then return #line + 1, {} end
  local out = {}
  for _, name in ipairs(names_of(obj, partial, sep == ':')) do out[#out + 1] = head .. sep .. name end
  return start, out
end

-- The candidates as replacements of line:sub(word_start + 1) (word_start
-- counts bytes before the word, as libedit's `start` does).
function M.for_readline(line, word_start, env)
  local start, list = M.candidates(line, env)
  local out = {}
  for _, cand in ipairs(list) do
    local full = line:sub(1, start - 1) .. cand
    -- the kept part must be unchanged for the replacement to line up
    if full:sub(1, word_start) == line:sub(1, word_start) then out[#out + 1] = full:sub(word_start + 1) end
  end
  return out
end

return M
