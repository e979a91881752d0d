-- chainer.user_kernel.parse: the front end of user-defined kernels.
--
-- Parses CuPy-style parameter lists ('T x, raw float32 w') and the C-like
-- subset of kernel bodies that the CPU translator (cpu_backend.lua) runs:
-- declarations, assignments (=, op=, ++, --), if/else, for, while, do-while,
-- break/continue, blocks, and expressions with C precedence, casts, the
-- ternary operator, function calls, raw-array indexing and `.size()`.
-- The CUDA path pastes the body verbatim; it is parsed only on the CPU.
local M = {}

-- Element types a kernel can name: numpy names plus the C spellings.
-- Values are the internal scalar types used by the translators.
local ctype_names = {
  bool = 'bool', bool_ = 'bool',
  int8 = 'int8', int16 = 'int16', int32 = 'int32', int64 = 'int64',
  uint8 = 'uint8', uint16 = 'uint16', uint32 = 'uint32', uint64 = 'uint64',
  float16 = 'float16', float32 = 'float32', float64 = 'float64',
  int8_t = 'int8', int16_t = 'int16', int32_t = 'int32', int64_t = 'int64',
  uint8_t = 'uint8', uint16_t = 'uint16', uint32_t = 'uint32', uint64_t = 'uint64',
  float = 'float32', double = 'float64', int = 'int32', char = 'int8', short = 'int16',
  long = 'int64', size_t = 'uint64', ptrdiff_t = 'int64', half = 'float16',
}
M.ctype_names = ctype_names

-- The dtypes a tensor can have (params name these or a placeholder).
M.dtypes = { bool = true, int8 = true, uint8 = true, int16 = true, int32 = true, int64 = true,
  float16 = true, float32 = true, float64 = true }

-- Names the kernels reserve (CuPy: `i`, `n` and names starting with `_`).
local function reserved(name) return name == 'i' or name == 'n' or name:sub(1, 1) == '_' end

local function kerr(name, fmt, ...)
  error(string.format('kernel %s: ' .. fmt, name, ...), 0)
end
M.kerr = kerr

---------------------------------------------------------------------------
-- parameter lists
---------------------------------------------------------------------------
-- parse_params('T x, raw float32 w', 'in_params', 'my_kernel') returns a
-- list of { name, type, raw, placeholder } where `type` is a dtype name or
-- a placeholder name.
function M.parse_params(s, which, kname)
  if type(s) ~= 'string' then
    kerr(kname, '%s must be a string like "T x, float32 y" (got %s)', which, type(s))
  end
  local list, seen = {}, {}
  if s:match('^%s*$') then return list end
  for item in (s .. ','):gmatch('([^,]*),') do
    local words = {}
    for w in item:gmatch('%S+') do words[#words + 1] = w end
    local is_raw = false
    if words[1] == 'raw' then is_raw = true; table.remove(words, 1) end
    if words[1] == 'const' then table.remove(words, 1) end
    if #words ~= 2 then
      kerr(kname, "bad parameter '%s' in %s '%s' (expected '[raw] TYPE NAME', e.g. 'T x' or 'raw float32 w')",
        item:match('^%s*(.-)%s*$'), which, s)
    end
    local t, name = words[1], words[2]
    if not t:match('^[%a_][%w_]*$') or not name:match('^[%a_][%w_]*$') then
      kerr(kname, "bad parameter '%s' in %s (type and name must be identifiers)", item:match('^%s*(.-)%s*$'), which)
    end
    if reserved(name) then
      kerr(kname, "parameter name '%s' in %s is reserved ('i', 'n' and names starting with '_')", name, which)
    end
    if seen[name] then kerr(kname, "parameter '%s' appears twice", name) end
    seen[name] = true
    local ct = ctype_names[t]
    local dt
    if ct then
      dt = ct
      if not M.dtypes[dt] then
        kerr(kname, "parameter '%s' has type %s, which is not a tensor dtype (use bool, int8, uint8, int16, " ..
          "int32, int64, float16, float32 or float64)", name, t)
      end
    end
    list[#list + 1] = { name = name, type = dt or t, raw = is_raw, placeholder = dt == nil }
  end
  return list
end

---------------------------------------------------------------------------
-- tokenizer
---------------------------------------------------------------------------
local ops3 = { ['<<='] = true, ['>>='] = true }
local ops2 = { ['++'] = true, ['--'] = true, ['+='] = true, ['-='] = true, ['*='] = true, ['/='] = true,
  ['%='] = true, ['&='] = true, ['|='] = true, ['^='] = true, ['=='] = true, ['!='] = true, ['<='] = true,
  ['>='] = true, ['&&'] = true, ['||'] = true, ['<<'] = true, ['>>'] = true, ['::'] = true, ['->'] = true }
local ops1 = '+-*/%<>=!~&|^?:;,.()[]{}'

-- Returns a list of tokens { k = 'id'|'num'|'op', v = text, pos = offset }.
local function tokenize(src, kname, what)
  local toks, pos, n = {}, 1, #src
  while pos <= n do
    local c = src:sub(pos, pos)
    if c:match('%s') then
      pos = pos + 1
    elseif src:sub(pos, pos + 1) == '//' then
      local e = src:find('\n', pos, true)
      pos = e and e + 1 or n + 1
    elseif src:sub(pos, pos + 1) == '/*' then
      local e = src:find('*/', pos + 2, true)
      if not e then kerr(kname, 'unterminated /* comment in %s', what) end
      pos = e + 2
    elseif c:match('[%a_]') then
      local id = src:match('^[%w_]+', pos)
      toks[#toks + 1] = { k = 'id', v = id, pos = pos }
      pos = pos + #id
    elseif c:match('%d') or (c == '.' and src:sub(pos + 1, pos + 1):match('%d')) then
      local num = src:match('^0[xX]%x+[uUlL]*', pos)
        or src:match('^%d*%.?%d*[eE][%+%-]?%d+[fFlL]?', pos)
        or src:match('^%d*%.?%d*[fFuUlL]*', pos)
      toks[#toks + 1] = { k = 'num', v = num, pos = pos }
      pos = pos + #num
    elseif c == '#' then
      kerr(kname, 'preprocessor directives are not supported in %s: %s', what, src:match('^[^\n]*', pos))
    elseif c == '"' or c == "'" then
      kerr(kname, 'string and character literals are not supported in %s: %s', what, src:match('^[^\n]*', pos))
    else
      local three, two = src:sub(pos, pos + 2), src:sub(pos, pos + 1)
      if ops3[three] then
        toks[#toks + 1] = { k = 'op', v = three, pos = pos }; pos = pos + 3
      elseif ops2[two] then
        toks[#toks + 1] = { k = 'op', v = two, pos = pos }; pos = pos + 2
      elseif ops1:find(c, 1, true) then
        toks[#toks + 1] = { k = 'op', v = c, pos = pos }; pos = pos + 1
      else
        kerr(kname, "unexpected character '%s' in %s", c, what)
      end
    end
  end
  toks[#toks + 1] = { k = 'eof', v = '<end>', pos = n + 1 }
  return toks
end
M.tokenize = tokenize

---------------------------------------------------------------------------
-- parser
---------------------------------------------------------------------------
local Parser = {}
Parser.__index = Parser

-- `typenames` maps extra type names (placeholders, _type_reduce) to their
-- scalar types; C and numpy type names are always known.
local function new_parser(src, kname, what, typenames)
  return setmetatable({ src = src, toks = tokenize(src, kname, what), i = 1, kname = kname, what = what,
    typenames = typenames or {} }, Parser)
end

function Parser:peek(k) return self.toks[self.i + (k or 0)] end
function Parser:next() local t = self.toks[self.i]; self.i = self.i + 1; return t end

-- The text around a token, for error messages.
function Parser:context(tok)
  local line_start = self.src:sub(1, tok.pos):match('.*\n()') or 1
  local line = self.src:match('^[^\n]*', line_start)
  return line:match('^%s*(.-)%s*$')
end

function Parser:fail(tok, fmt, ...)
  kerr(self.kname, '%s in %s, near \'%s\' (in: %s)', string.format(fmt, ...), self.what, tok.v, self:context(tok))
end
M.fail_at = function(node, fmt, ...)
  error({ kernel_node = node, msg = string.format(fmt, ...) }, 0)
end

function Parser:expect(v)
  local t = self:next()
  if t.v ~= v or t.k == 'num' then self:fail(t, "expected '%s'", v) end
  return t
end

function Parser:accept(v)
  local t = self:peek()
  if t.v == v and t.k ~= 'num' then self.i = self.i + 1; return t end
  return nil
end

-- Is the token at offset k the start of a type name?
function Parser:is_type_at(k)
  local t = self:peek(k)
  if t.k ~= 'id' then return false end
  local v = t.v
  return ctype_names[v] ~= nil or self.typenames[v] ~= nil or v == 'unsigned' or v == 'signed' or v == 'const'
    or v == 'auto'
end

-- Parses a type ('const unsigned long long', 'T', 'float32', 'auto') and
-- returns its scalar type ('auto' for auto).
function Parser:parse_type()
  while self:accept('const') or self:accept('volatile') do end
  local t = self:next()
  local v = t.v
  if v == 'auto' then return 'auto' end
  if v == 'unsigned' or v == 'signed' then
    local base = 'int32'
    local nx = self:peek()
    if nx.v == 'char' then self:next(); base = 'int8'
    elseif nx.v == 'short' then self:next(); base = 'int16'; self:accept('int')
    elseif nx.v == 'long' then self:next(); base = 'int64'; self:accept('long'); self:accept('int')
    elseif nx.v == 'int' then self:next() end
    if v == 'unsigned' then base = 'u' .. base end
    return base
  end
  if v == 'long' then
    self:accept('long'); self:accept('int')
    if self:peek().v == 'double' then self:next(); return 'float64' end
    return 'int64'
  end
  if v == 'short' then self:accept('int'); return 'int16' end
  local st = ctype_names[v] or self.typenames[v]
  if not st then self:fail(t, 'expected a type') end
  while self:accept('const') do end
  return st
end

local binprec = {
  ['||'] = 1, ['&&'] = 2, ['|'] = 3, ['^'] = 4, ['&'] = 5, ['=='] = 6, ['!='] = 6,
  ['<'] = 7, ['>'] = 7, ['<='] = 7, ['>='] = 7, ['<<'] = 8, ['>>'] = 8,
  ['+'] = 9, ['-'] = 9, ['*'] = 10, ['/'] = 10, ['%'] = 10,
}

local function parse_number(p, tok)
  local s = tok.v
  local body, suffix = s:match('^(.-)([fFuUlL]*)$')
  if s:match('^0[xX]') then body, suffix = s:match('^(0[xX]%x+)([uUlL]*)$') end
  local v = tonumber(body)
  if not v or body == '' or body == '.' then p:fail(tok, 'bad number') end
  local t
  local is_float = not s:match('^0[xX]') and body:match('[%.eE]') ~= nil
  local sl = suffix:lower()
  if is_float then
    t = sl:find('f') and 'float32' or 'float64'
  else
    if sl:find('f') then p:fail(tok, 'bad number') end
    local long = sl:find('l') ~= nil
    local uns = sl:find('u') ~= nil
    if long or v > 2147483647 then t = uns and 'uint64' or 'int64' else t = uns and 'uint32' or 'int32' end
  end
  return { k = 'num', v = v, t = t, tok = tok }
end

function Parser:primary()
  local t = self:next()
  if t.k == 'num' then return parse_number(self, t) end
  if t.v == '(' then
    local e = self:expr()
    self:expect(')')
    e.paren = true
    return e
  end
  if t.k == 'id' then
    if t.v == 'true' or t.v == 'false' then return { k = 'bool', v = t.v == 'true', t = 'bool', tok = t } end
    if self:accept('::') then
      local m = self:next()
      if m.k ~= 'id' then self:fail(m, 'expected a name after ::') end
      return { k = 'name', name = t.v .. '::' .. m.v, tok = t }
    end
    return { k = 'name', name = t.v, tok = t }
  end
  self:fail(t, 'expected an expression')
end

function Parser:postfix()
  local e = self:primary()
  while true do
    local t = self:peek()
    if t.v == '(' and t.k == 'op' then
      if e.k ~= 'name' then self:fail(t, 'only named functions can be called') end
      self:next()
      local args = {}
      if not self:accept(')') then
        repeat args[#args + 1] = self:expr() until not self:accept(',')
        self:expect(')')
      end
      e = { k = 'call', f = e.name, args = args, tok = e.tok }
    elseif t.v == '[' and t.k == 'op' then
      if e.k ~= 'name' then self:fail(t, 'only raw parameters can be indexed') end
      self:next()
      local idx = self:expr()
      self:expect(']')
      e = { k = 'index', name = e.name, idx = idx, tok = e.tok }
    elseif t.v == '.' and t.k == 'op' then
      if e.k ~= 'name' then self:fail(t, "'.' applies to a parameter name only") end
      self:next()
      local m = self:next()
      if m.k ~= 'id' then self:fail(m, "expected a method name after '.'") end
      self:expect('(')
      self:expect(')')
      e = { k = 'method', name = e.name, method = m.v, tok = e.tok }
    elseif (t.v == '++' or t.v == '--') and t.k == 'op' then
      self:next()
      e = { k = 'postinc', op = t.v, a = e, tok = t }
    else
      return e
    end
  end
end

function Parser:unary()
  local t = self:peek()
  if t.k == 'op' then
    if t.v == '-' or t.v == '+' or t.v == '!' or t.v == '~' then
      self:next()
      return { k = 'un', op = t.v, a = self:unary(), tok = t }
    end
    if t.v == '++' or t.v == '--' then
      self:next()
      return { k = 'preinc', op = t.v, a = self:unary(), tok = t }
    end
    -- a cast: '(' type ')' unary
    if t.v == '(' and self:is_type_at(1) then
      self:next()
      local ty = self:parse_type()
      self:expect(')')
      return { k = 'cast', t = ty, a = self:unary(), tok = t }
    end
  end
  -- functional cast T(x), float(x), static_cast<T>(x)
  if t.k == 'id' and t.v == 'static_cast' then
    self:next(); self:expect('<')
    local ty = self:parse_type()
    self:expect('>'); self:expect('(')
    local a = self:expr()
    self:expect(')')
    return { k = 'cast', t = ty, a = a, tok = t }
  end
  if t.k == 'id' and self:is_type_at(0) and self:peek(1).v == '(' and t.v ~= 'const' and t.v ~= 'auto' then
    local ty = self:parse_type()
    self:expect('(')
    local a = self:expr()
    self:expect(')')
    return { k = 'cast', t = ty, a = a, tok = t }
  end
  return self:postfix()
end

function Parser:binary(minprec)
  local lhs = self:unary()
  while true do
    local t = self:peek()
    local prec = t.k == 'op' and binprec[t.v]
    if not prec or prec < minprec then return lhs end
    self:next()
    local rhs = self:binary(prec + 1)
    lhs = { k = 'bin', op = t.v, a = lhs, b = rhs, tok = t }
  end
end

function Parser:ternary()
  local c = self:binary(1)
  local t = self:peek()
  if t.v == '?' and t.k == 'op' then
    self:next()
    local a = self:expr()
    self:expect(':')
    local b = self:ternary()
    return { k = 'tern', c = c, a = a, b = b, tok = t }
  end
  return c
end

local assign_ops = { ['='] = true, ['+='] = true, ['-='] = true, ['*='] = true, ['/='] = true, ['%='] = true,
  ['&='] = true, ['|='] = true, ['^='] = true, ['<<='] = true, ['>>='] = true }

-- An expression; assignments are allowed here so that 'a = b = c' and
-- 'x += 1' parse, and the translator rejects them where C values are needed.
function Parser:expr()
  local lhs = self:ternary()
  local t = self:peek()
  if t.k == 'op' and assign_ops[t.v] then
    self:next()
    local rhs = self:expr()
    return { k = 'assign', op = t.v, lhs = lhs, rhs = rhs, tok = t }
  end
  if t.v == ',' and t.k == 'op' and self.comma_ok then
    -- the comma operator (only in for-loop steps)
    local list = { lhs }
    while self:accept(',') do list[#list + 1] = self:expr_nocomma() end
    return { k = 'comma', list = list, tok = t }
  end
  return lhs
end

function Parser:expr_nocomma()
  local saved = self.comma_ok
  self.comma_ok = false
  local e = self:expr()
  self.comma_ok = saved
  return e
end

function Parser:decl(tok)
  local ty = self:parse_type()
  local items = {}
  repeat
    local nt = self:next()
    if nt.k ~= 'id' then self:fail(nt, 'expected a variable name') end
    if ctype_names[nt.v] or self.typenames[nt.v] then self:fail(nt, 'expected a variable name, not a type') end
    if self:peek().v == '[' then self:fail(self:peek(), 'local arrays are not supported') end
    local init
    if self:accept('=') then init = self:expr_nocomma() end
    items[#items + 1] = { name = nt.v, init = init, tok = nt }
  until not self:accept(',')
  return { k = 'decl', t = ty, items = items, tok = tok }
end

function Parser:statement()
  local t = self:peek()
  if t.k == 'op' then
    if t.v == '{' then
      self:next()
      local list = {}
      while not self:accept('}') do
        if self:peek().k == 'eof' then self:fail(self:peek(), "missing '}'") end
        list[#list + 1] = self:statement()
      end
      return { k = 'block', list = list, tok = t }
    end
    if t.v == ';' then self:next(); return { k = 'empty', tok = t } end
  end
  if t.k == 'id' then
    local v = t.v
    if v == 'if' then
      self:next(); self:expect('(')
      local c = self:expr_nocomma()
      self:expect(')')
      local a = self:statement()
      local b
      if self:peek().v == 'else' and self:peek().k == 'id' then self:next(); b = self:statement() end
      return { k = 'if', c = c, a = a, b = b, tok = t }
    elseif v == 'for' then
      self:next(); self:expect('(')
      local init
      if not self:accept(';') then
        if self:is_type_at(0) then init = self:decl(self:peek()) else
          init = { k = 'expr', e = self:expr_nocomma(), tok = self:peek() }
        end
        self:expect(';')
      end
      local cond
      if not self:accept(';') then cond = self:expr_nocomma(); self:expect(';') end
      local step
      if not self:accept(')') then
        self.comma_ok = true
        step = { k = 'expr', e = self:expr(), tok = self:peek() }
        self.comma_ok = false
        self:expect(')')
      end
      return { k = 'for', init = init, cond = cond, step = step, body = self:statement(), tok = t }
    elseif v == 'while' then
      self:next(); self:expect('(')
      local c = self:expr_nocomma()
      self:expect(')')
      return { k = 'while', c = c, body = self:statement(), tok = t }
    elseif v == 'do' then
      self:next()
      local body = self:statement()
      local w = self:next()
      if w.v ~= 'while' then self:fail(w, "expected 'while' after a do-block") end
      self:expect('(')
      local c = self:expr_nocomma()
      self:expect(')'); self:expect(';')
      return { k = 'dowhile', c = c, body = body, tok = t }
    elseif v == 'break' or v == 'continue' then
      self:next(); self:expect(';')
      return { k = v, tok = t }
    elseif v == 'return' or v == 'goto' or v == 'switch' or v == 'case' or v == 'struct' or v == 'typedef' then
      self:fail(t, "'%s' is not supported by the CPU translator", v)
    elseif self:is_type_at(0) and not (self:peek(1).v == '(' and v ~= 'const' and v ~= 'auto'
        and not self:is_type_at(1)) then
      local d = self:decl(t)
      self:expect(';')
      return d
    end
  end
  local e = self:expr_nocomma()
  self:expect(';')
  return { k = 'expr', e = e, tok = t }
end

-- Parses a statement list (an elementwise body or a post-map expression).
-- A missing final ';' is supplied, as CuPy does for one-line bodies.
function M.parse_body(src, kname, what, typenames)
  if type(src) ~= 'string' then kerr(kname, '%s must be a string (got %s)', what, type(src)) end
  local p = new_parser(src, kname, what, typenames)
  local list = {}
  while p:peek().k ~= 'eof' do
    -- 'z = x' at the very end without ';'
    local save = p.i
    local ok, st = pcall(p.statement, p)
    if not ok then
      p.i = save
      local ok2, e = pcall(p.expr_nocomma, p)
      if ok2 and p:peek().k == 'eof' then
        st = { k = 'expr', e = e, tok = p.toks[save] }
      else
        error(st, 0)
      end
    end
    list[#list + 1] = st
  end
  return { k = 'block', list = list, tok = p.toks[1], src = src }
end

-- Parses one expression (map_expr, reduce_expr, identity).
function M.parse_expr(src, kname, what, typenames)
  if type(src) ~= 'string' then kerr(kname, '%s must be a string (got %s)', what, type(src)) end
  local p = new_parser(src, kname, what, typenames)
  if p:peek().k == 'eof' then kerr(kname, '%s is empty', what) end
  local e = p:expr_nocomma()
  local t = p:peek()
  if t.k ~= 'eof' then p:fail(t, 'unexpected text after the expression') end
  e.src = src
  return e
end

-- The source line of a node, for translator errors.
function M.node_context(src, node)
  if not (node and node.tok and src) then return '' end
  local pos = node.tok.pos
  local line_start = src:sub(1, pos):match('.*\n()') or 1
  return src:match('^[^\n]*', line_start):match('^%s*(.-)%s*$')
end

return M
