-- testing/parameterized.lua: Chainer's parameterize / product /
-- product_dict for specs on busted.
--
--   local testing = require 'chainer.testing'
--   testing.parameterize(testing.product{dtype = {'float32', 'float64'}, shape = {{3}, {2, 3}}})(
--     'F.relu', function(p)
--       it('keeps the dtype', function() ... p.dtype ... p.shape ... end)
--     end)
--
-- parameterize(p1, p2, ...) (or one list of them) returns a function that
-- registers, for each parameter table p, a busted `describe` titled with p
-- ('F.relu {dtype=float32, shape={3}}'), whose body is body(p) -- or, given
-- a FunctionTestCase / LinkTestCase class, that class's tests with p's
-- entries set on each test's instance (Chainer sets them on the class).
local M = {}

-- A short, stable text of a parameter value for titles.
local function show(v)
  if type(v) == 'table' then
    local mt = getmetatable(v)
    if mt and rawget(mt, '__name') and rawget(v, '__name') then return tostring(rawget(v, '__name')) end
    if v[1] ~= nil or next(v) == nil then
      local parts = {}
      for i = 1, #v do parts[i] = show(v[i]) end
      return '{' .. table.concat(parts, ', ') .. '}'
    end
    local keys = {}
    for k in pairs(v) do keys[#keys + 1] = tostring(k) end
    table.sort(keys)
    local parts = {}
    for i, k in ipairs(keys) do parts[i] = k .. '=' .. show(v[k]) end
    return '{' .. table.concat(parts, ', ') .. '}'
  end
  if type(v) == 'function' then return 'function' end
  return tostring(v)
end
M.show = show

local function check_params(params)
  if #params == 1 and type(params[1]) == 'table' and params[1][1] ~= nil and type(params[1][1]) == 'table'
      and getmetatable(params[1]) == nil and params[1][1][1] == nil then
    params = params[1]   -- one list of parameter tables (product's result)
  end
  if #params == 0 then error('parameterize: give at least one parameter table', 3) end
  for i, p in ipairs(params) do
    if type(p) ~= 'table' or p[1] ~= nil then
      error(string.format('parameterize: parameter %d must be a table of named values such as {dtype = ' ..
        "'float32'} (got %s)", i, type(p)), 3)
    end
  end
  return params
end

-- Registers target (a title and body, or a test case class) once per
-- parameter table in `env`'s busted (the spec file's environment).
function M._register(params, env, target, body, level)
  local describe = env.describe
  if type(describe) ~= 'function' then
    error('parameterize: call the returned function from a busted spec file (describe is not defined here)', level)
  end
  local is_case = type(target) == 'table' and type(target._register_tests) == 'function'
  if not is_case and (type(target) ~= 'string' or type(body) ~= 'function') then
    error('parameterize(...): pass a title and a function(param), or a FunctionTestCase/LinkTestCase class', level)
  end
  for i, p in ipairs(params) do
    local title = string.format('%s param %d %s', is_case and tostring(rawget(target, '__name')) or target, i - 1,
      show(p))
    if is_case then
      describe(title, function() target._register_tests(target, env, p) end)
    else
      describe(title, function() body(p) end)
    end
  end
end

-- parameterize(...)(title, body) / parameterize(...)(TestCaseClass)
function M.parameterize(...)
  local params = check_params({ ... })
  return function(target, body) M._register(params, getfenv(2), target, body, 3) end
end

-- product_dict(list1, list2, ...): every combination of one table from
-- each list, merged ({a = 1} and {b = 2} give {a = 1, b = 2}).
function M.product_dict(...)
  local lists = { ... }
  local out = { {} }
  for li, list in ipairs(lists) do
    if type(list) ~= 'table' then
      error(string.format('product_dict: argument %d must be a list of tables (got %s)', li, type(list)), 2)
    end
    local next_out = {}
    for _, acc in ipairs(out) do
      for _, d in ipairs(list) do
        if type(d) ~= 'table' then error(string.format('product_dict: argument %d holds a %s, not a table', li,
          type(d)), 2) end
        local merged = {}
        for k, v in pairs(acc) do merged[k] = v end
        for k, v in pairs(d) do merged[k] = v end
        next_out[#next_out + 1] = merged
      end
    end
    out = next_out
  end
  return out
end

-- {names = values} -> a list of tables: 'a' with {1, 2} gives {a = 1},
-- {a = 2}; 'a,b' with {{1, 'x'}, {2, 'y'}} gives {a = 1, b = 'x'}, ...
local function values_to_dicts(names, values)
  if type(values) ~= 'table' then
    error(string.format("product: the values of '%s' must be a list (got %s)", names, type(values)), 4)
  end
  local keys = {}
  for k in names:gmatch('[^,%s]+') do keys[#keys + 1] = k end
  local out = {}
  for i, v in ipairs(values) do
    if #keys == 1 then
      out[i] = { [keys[1]] = v }
    else
      if type(v) ~= 'table' or #v ~= #keys then
        error(string.format("product: each value of '%s' must be a list of %d values", names, #keys), 4)
      end
      local d = {}
      for j, k in ipairs(keys) do d[k] = v[j] end
      out[i] = d
    end
  end
  return out
end

-- from_pytest_parameterize('a,b', {{1, 'x'}, {2, 'y'}}): the list of
-- tables {a = 1, b = 'x'}, {a = 2, b = 'y'} ('a' alone takes plain values).
function M.from_pytest_parameterize(names, values)
  if type(names) ~= 'string' then
    error('from_pytest_parameterize: names must be a string such as "a,b" (got ' .. type(names) .. ')', 2)
  end
  return values_to_dicts(names, values)
end

-- parameterize_pytest(names, values) = parameterize(from_pytest_parameterize(names, values))
function M.parameterize_pytest(names, values)
  return M.parameterize(M.from_pytest_parameterize(names, values))
end

-- product{name = values, ...} (names in sorted order, as Chainer) or
-- product{list_of_tables, list_of_tables, ...} (= product_dict).
function M.product(parameter)
  if type(parameter) ~= 'table' then
    error('product: parameter must be a table {name = {values...}} or a list of lists of tables (got ' ..
      type(parameter) .. ')', 2)
  end
  if parameter[1] ~= nil then
    for _, l in ipairs(parameter) do
      if type(l) ~= 'table' then error('product: parameter must be a list of lists of tables', 2) end
    end
    return M.product_dict(unpack(parameter))
  end
  local names = {}
  for k in pairs(parameter) do names[#names + 1] = k end
  table.sort(names)
  local lists = {}
  for i, k in ipairs(names) do lists[i] = values_to_dicts(k, parameter[k]) end
  return M.product_dict(unpack(lists))
end

return M
