-- testing/pyexpr.lua: parses and evaluates the small subset of Python that
-- the oracle's `call` fields are written in, so that the oracle runner reads
-- every argument from the call itself:
--
--   F.conv(x, W, b, stride=(2, 1), pad=1)    calls with keyword arguments
--   a + b, 2.0 / a, a ** 3.0, a @ b, -a       operators
--   x[::2, None, ..., 0], x[[0, 2, 0]]        subscripts (0-based, as Python)
--   F.max_pooling_2d(x, 2, return_indices=True)[1]
--   [[w0..w7]]                                 the oracle's range shorthand
--   lambda shape: samples                      lambdas (become Lua functions)
--
-- Statements (parse_statement) are `expr`, `name = expr` or
-- `obj.attr = expr`; assign(target, value, env) performs the assignment.
--
-- parse(text) returns an AST; eval(ast, env) evaluates it, where `env`
-- supplies names and the hooks `call(fn, args, kwargs)`, `binop(op, a, b)`,
-- `unop(op, a)`, `index(obj, terms)` and, for attribute assignment,
-- `setattr(obj, name, value)` (default: obj[name] = value).  Python tuples
-- and lists become Lua arrays; None becomes env.None (default: the
-- sentinel pyexpr.None).
local pyexpr = {}

pyexpr.None = setmetatable({}, { __tostring = function() return 'None' end })
pyexpr.Ellipsis = setmetatable({}, { __tostring = function() return '...' end })

---------------------------------------------------------------------------
-- tokenizer
---------------------------------------------------------------------------
local function tokenize(src)
  local toks, i, n = {}, 1, #src
  while i <= n do
    local c = src:sub(i, i)
    if c:match('%s') then
      i = i + 1
    elseif c:match('[%a_]') then
      local name = src:match('^[%w_]+', i)
      toks[#toks + 1] = { k = 'name', v = name }
      i = i + #name
    elseif c:match('%d') or (c == '.' and src:sub(i + 1, i + 1):match('%d')) then
      local num = src:match('^%d*%.?%d*[eE][-+]?%d+', i) or src:match('^%d*%.?%d*', i)
      toks[#toks + 1] = { k = 'num', v = tonumber(num) }
      i = i + #num
    elseif c == "'" or c == '"' then
      local j = src:find(c, i + 1, true)
      if not j then error('pyexpr: unterminated string in: ' .. src, 0) end
      toks[#toks + 1] = { k = 'str', v = src:sub(i + 1, j - 1) }
      i = j + 1
    else
      local three, two = src:sub(i, i + 2), src:sub(i, i + 1)
      local op
      if three == '...' then op = '...'
      elseif two == '**' or two == '..' or two == '->' or two == '==' then op = two
      else op = c end
      if not op:match('^[%(%)%[%],:=%.%+%-%*/@;]') and op ~= '...' and op ~= '**' and op ~= '..' and
        op ~= '->' and op ~= '==' then
        error(string.format("pyexpr: unexpected character '%s' in: %s", c, src), 0)
      end
      toks[#toks + 1] = { k = 'op', v = op }
      i = i + #op
    end
  end
  toks[#toks + 1] = { k = 'eof' }
  return toks
end

---------------------------------------------------------------------------
-- parser (precedence climbing)
---------------------------------------------------------------------------
local Parser = {}
Parser.__index = Parser

function Parser:peek(k) return self.toks[self.pos + (k or 0)] end
function Parser:next() local t = self.toks[self.pos]; self.pos = self.pos + 1; return t end
function Parser:is_op(v) local t = self.toks[self.pos]; return t.k == 'op' and t.v == v end
function Parser:expect(v)
  if not self:is_op(v) then
    error(string.format("pyexpr: expected '%s' in: %s", v, self.src), 0)
  end
  self.pos = self.pos + 1
end

local binprec = { ['+'] = 1, ['-'] = 1, ['*'] = 2, ['/'] = 2, ['@'] = 2, ['**'] = 4 }

function Parser:expr(min)
  min = min or 0
  local left = self:unary()
  while true do
    local t = self:peek()
    local p = t.k == 'op' and binprec[t.v]
    if not p or p < min then break end
    self:next()
    -- ** is right-associative and binds tighter than unary minus on its left
    local right = self:expr(t.v == '**' and p or p + 1)
    left = { k = 'bin', op = t.v, a = left, b = right }
  end
  return left
end

function Parser:unary()
  if self:is_op('-') then
    self:next()
    return { k = 'unary', op = '-', a = self:expr(3) }
  end
  if self:is_op('+') then
    self:next()
    return self:expr(3)
  end
  return self:postfix(self:atom())
end

function Parser:seq(close)
  -- comma separated items up to `close`; supports the name..name shorthand
  local items, trailing_comma = {}, false
  while not self:is_op(close) do
    local item = self:expr()
    if self:is_op('..') then
      self:next()
      local last = self:next()
      local p1, a = item.v:match('^(.-)(%d+)$')
      local p2, b = last.v:match('^(.-)(%d+)$')
      if item.k ~= 'name' or last.k ~= 'name' or p1 ~= p2 then
        error('pyexpr: bad range shorthand in: ' .. self.src, 0)
      end
      for i = tonumber(a), tonumber(b) do items[#items + 1] = { k = 'name', v = p1 .. i } end
    else
      items[#items + 1] = item
    end
    trailing_comma = false
    if self:is_op(',') then self:next(); trailing_comma = true else break end
  end
  self:expect(close)
  return items, trailing_comma
end

function Parser:atom()
  local t = self:next()
  if t.k == 'num' then return { k = 'const', v = t.v } end
  if t.k == 'str' then return { k = 'const', v = t.v } end
  if t.k == 'name' then
    if t.v == 'lambda' then return self:lambda() end
    if t.v == 'None' then return { k = 'none' } end
    if t.v == 'True' then return { k = 'const', v = true } end
    if t.v == 'False' then return { k = 'const', v = false } end
    return { k = 'name', v = t.v }
  end
  if t.k == 'op' and t.v == '(' then
    local items, comma = self:seq(')')
    if #items == 1 and not comma then return items[1] end
    return { k = 'list', items = items }
  end
  if t.k == 'op' and t.v == '[' then
    local items = self:seq(']')
    return { k = 'list', items = items }
  end
  if t.k == 'op' and t.v == '...' then return { k = 'ellipsis' } end
  error(string.format("pyexpr: unexpected '%s' in: %s", tostring(t.v or t.k), self.src), 0)
end

-- `lambda a, b: body` (after the keyword): the body is one expression,
-- which ends at a comma or a closing bracket, as in Python.
function Parser:lambda()
  local params = {}
  while not self:is_op(':') do
    local t = self:next()
    if t.k ~= 'name' then error('pyexpr: expected a parameter name in the lambda in: ' .. self.src, 0) end
    params[#params + 1] = t.v
    if self:is_op(',') then self:next() elseif not self:is_op(':') then
      error("pyexpr: expected ':' after the lambda's parameters in: " .. self.src, 0)
    end
  end
  self:expect(':')
  return { k = 'lambda', params = params, body = self:expr() }
end

function Parser:subscript_term()
  if self:is_op('...') then self:next(); return { k = 'ellipsis' } end
  local parts, cur = {}, nil
  local has_colon = false
  while true do
    if self:is_op(':') then
      self:next()
      has_colon = true
      parts[#parts + 1] = cur or false
      cur = nil
    elseif self:is_op(',') or self:is_op(']') then
      break
    else
      cur = self:expr()
    end
  end
  if not has_colon then return cur end
  parts[#parts + 1] = cur or false
  return { k = 'slice', start = parts[1] or nil, stop = parts[2] or nil, step = parts[3] or nil }
end

function Parser:postfix(node)
  while true do
    if self:is_op('.') then
      self:next()
      local name = self:next()
      node = { k = 'attr', obj = node, name = name.v }
    elseif self:is_op('(') then
      self:next()
      local args, kwargs = {}, {}
      while not self:is_op(')') do
        local t1, t2 = self:peek(), self:peek(1)
        if t1.k == 'name' and t2.k == 'op' and t2.v == '=' then
          self.pos = self.pos + 2
          kwargs[#kwargs + 1] = { name = t1.v, value = self:expr() }
        else
          args[#args + 1] = self:expr()
        end
        if self:is_op(',') then self:next() else break end
      end
      self:expect(')')
      node = { k = 'call', fn = node, args = args, kwargs = kwargs }
    elseif self:is_op('[') then
      self:next()
      local terms = {}
      while not self:is_op(']') do
        terms[#terms + 1] = self:subscript_term()
        if self:is_op(',') then self:next() else break end
      end
      self:expect(']')
      node = { k = 'index', obj = node, terms = terms }
    else
      return node
    end
  end
end

-- Parses one expression; trailing text (after the expression) is an error.
function pyexpr.parse(src)
  local p = setmetatable({ toks = tokenize(src), pos = 1, src = src }, Parser)
  local node = p:expr()
  if p:peek().k ~= 'eof' then
    error(string.format("pyexpr: unexpected '%s' after the expression in: %s", tostring(p:peek().v), src), 0)
  end
  return node
end

-- Parses `expr`, `name = expr` or `obj.attr = expr`.  Returns the target
-- (nil; a name as a string; or the AST of the attribute reference) and the
-- AST of the expression.
function pyexpr.parse_statement(src)
  local p = setmetatable({ toks = tokenize(src), pos = 1, src = src }, Parser)
  local node = p:expr()
  local target
  if p:is_op('=') then
    p:next()
    if node.k == 'name' then target = node.v
    elseif node.k == 'attr' then target = node
    else error('pyexpr: can only assign to a name or an attribute in: ' .. src, 0) end
    node = p:expr()
  end
  if p:peek().k ~= 'eof' then
    error(string.format("pyexpr: unexpected '%s' after the statement in: %s", tostring(p:peek().v), src), 0)
  end
  return target, node
end

---------------------------------------------------------------------------
-- evaluator
---------------------------------------------------------------------------
local function eval(node, env)
  local k = node.k
  if k == 'const' then return node.v end
  if k == 'none' then return env.None or pyexpr.None end
  if k == 'ellipsis' then return pyexpr.Ellipsis end
  if k == 'name' then
    local v = env.names[node.v]
    if v == nil then error("pyexpr: unknown name '" .. node.v .. "'", 0) end
    return v
  end
  if k == 'list' then
    local out = {}
    for i, item in ipairs(node.items) do out[i] = eval(item, env) end
    return out
  end
  if k == 'attr' then
    local obj = eval(node.obj, env)
    if env.attr then return env.attr(obj, node.name) end
    local v = obj[node.name]
    if v == nil then error("pyexpr: no attribute '" .. node.name .. "'", 0) end
    return v
  end
  if k == 'call' then
    local fn = eval(node.fn, env)
    local args, kwargs = {}, {}
    for i, a in ipairs(node.args) do args[i] = eval(a, env) end
    for _, kw in ipairs(node.kwargs) do kwargs[#kwargs + 1] = { name = kw.name, value = eval(kw.value, env) } end
    return env.call(fn, args, kwargs, node)
  end
  if k == 'bin' then return env.binop(node.op, eval(node.a, env), eval(node.b, env)) end
  if k == 'unary' then return env.unop(node.op, eval(node.a, env)) end
  if k == 'index' then
    local obj = eval(node.obj, env)
    local terms = {}
    for i, t in ipairs(node.terms) do
      if t.k == 'slice' then
        terms[i] = { slice = true,
          start = t.start and eval(t.start, env) or nil,
          stop = t.stop and eval(t.stop, env) or nil,
          step = t.step and eval(t.step, env) or nil }
      else
        terms[i] = eval(t, env)
      end
    end
    return env.index(obj, terms)
  end
  if k == 'lambda' then
    -- a Lua function whose parameters shadow the enclosing names
    return function(...)
      local names = setmetatable({}, { __index = env.names })
      for i, name in ipairs(node.params) do names[name] = (select(i, ...)) end
      return eval(node.body, setmetatable({ names = names }, { __index = env }))
    end
  end
  if k == 'slice' then error('pyexpr: a slice outside a subscript', 0) end
  error('pyexpr: cannot evaluate node ' .. tostring(k), 0)
end
pyexpr.eval = eval

-- Stores `value` into a target from parse_statement: a name in env.names,
-- or an attribute through env.setattr.
function pyexpr.assign(target, value, env)
  if type(target) == 'string' then
    env.names[target] = value
    return
  end
  local obj = eval(target.obj, env)
  if env.setattr then env.setattr(obj, target.name, value) else obj[target.name] = value end
end

return pyexpr
