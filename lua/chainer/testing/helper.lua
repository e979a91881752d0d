-- testing/helper.lua: chainer.testing.assert_warns, with_requires and
-- without_requires, for users' specs on busted.
--
--   testing.assert_warns('FutureWarning', function() chainer.utils.experimental('f') end)
--   it('trains on a GPU', testing.with_requires('cuda', function() ... end))
--   it('says MPI is missing', testing.without_requires('mpi', function() ... end))
local warnings = require 'chainer.utils.warnings'
local args = require 'chainer._args'

local M = {}

---------------------------------------------------------------------------
-- assert_warns
---------------------------------------------------------------------------
local WARNS_OPTIONS = args.accept { 'match' }

-- Python's Warning catches every category, as isinstance does; any other
-- category matches itself.
local function category_matches(expected, got)
  return expected == 'Warning' or expected == got
end

-- assert_warns(expected, fn, [{match = pattern}]): runs fn with the warnings
-- of chainer.utils.warnings caught, and fails unless one of them has the
-- category `expected` (a string: 'UserWarning', 'FutureWarning', ...; 'Warning'
-- accepts any) and, with `match`, a message matching that Lua pattern.  An
-- error inside fn is raised again.  Returns the list of caught warnings
-- ({category = ..., message = ...}, in order), for further checks.
function M.assert_warns(expected, fn, opts)
  opts = args.options('assert_warns', opts, WARNS_OPTIONS)
  if type(expected) ~= 'string' then
    args.fail(string.format("assert_warns: expected must be a warning category name such as 'UserWarning' " ..
      '(got %s)', type(expected)), 2)
  end
  if type(fn) ~= 'function' then
    args.fail(string.format('assert_warns: fn must be a function (got %s)', type(fn)), 2)
  end
  if opts.match ~= nil and type(opts.match) ~= 'string' then
    args.fail(string.format('assert_warns: match must be a string (a Lua pattern; got %s)', type(opts.match)), 2)
  end
  local res = { warnings.catch(fn) }
  local caught = res[1]
  if not res[2] then error(res[3], 0) end
  for _, w in ipairs(caught) do
    if category_matches(expected, w.category) and (opts.match == nil or w.message:find(opts.match)) then
      return caught
    end
  end
  local seen = {}
  for i, w in ipairs(caught) do seen[i] = w.category .. ': ' .. w.message end
  error(string.format('assert_warns: %s%s not triggered (caught: %s)', expected,
    opts.match and (" matching '" .. opts.match .. "'") or '',
    #seen > 0 and table.concat(seen, '; ') or 'no warning'), 2)
end

---------------------------------------------------------------------------
-- with_requires / without_requires
---------------------------------------------------------------------------
-- The optional parts of chainlua a requirement may name; anything else is a
-- Lua module name, there when require would find it (not loaded here).
local FEATURES = {
  cuda = function() return require('chainer.cuda').available end,
  caffe = function() return require('chainer.links.caffe._net').available() end,
  gnuplot = function() return require('chainer.training.extensions').PlotReport.available() end,
  mpi = function() return (pcall(require('chainermn._mpi').lib)) end,
}

local function module_found(name)
  if package.loaded[name] ~= nil or package.preload[name] ~= nil then return true end
  return package.searchpath(name, package.path) ~= nil or package.searchpath(name, package.cpath) ~= nil
end

-- available(requirement) -> whether a feature ('cuda', 'caffe', 'gnuplot',
-- 'mpi') or a Lua module (by its require name) is there.
function M.available(requirement)
  if type(requirement) ~= 'string' or requirement == '' then
    args.fail(string.format('with_requires: a requirement must be a non-empty string (got %s)',
      type(requirement) == 'string' and "''" or type(requirement)), 3)
  end
  local feature = FEATURES[requirement]
  if feature then return feature() == true end
  return module_found(requirement)
end

-- The requirements and the test function from (req1, req2, ..., fn).
local function requirements_and_test(fname, ...)
  local n = select('#', ...)
  local fn = select(n, ...)
  if n < 2 or type(fn) ~= 'function' then
    args.fail(string.format('%s: expected one or more requirements then the test function ' ..
      "(%s('cuda', function() ... end))", fname, fname), 3)
  end
  local reqs = {}
  for i = 1, n - 1 do
    local r = select(i, ...)
    if type(r) ~= 'string' or r == '' then
      args.fail(string.format('%s: requirement %d must be a non-empty string (got %s)', fname, i, type(r)), 3)
    end
    reqs[i] = r
  end
  return reqs, fn
end

-- busted's pending, as the test function sees it (busted gives a spec
-- file's functions an environment holding it); without busted, a silent skip.
local function skip(fn, reason)
  local pending = getfenv(fn).pending
  if type(pending) == 'function' then pending(reason) end
end

-- with_requires(req..., fn) -> a test function that runs fn when every
-- requirement is available and is marked pending (skipped, with the missing
-- ones named) otherwise, as Chainer's decorator skips without the packages.
function M.with_requires(...)
  local reqs, fn = requirements_and_test('with_requires', ...)
  return function(...)
    local missing = {}
    for _, r in ipairs(reqs) do
      if not M.available(r) then missing[#missing + 1] = r end
    end
    if #missing > 0 then return skip(fn, 'requires ' .. table.concat(missing, ', ')) end
    return fn(...)
  end
end

-- without_requires(req..., fn) -> a test function that runs fn only when at
-- least one requirement is missing (to test the behaviour without them),
-- pending otherwise.
function M.without_requires(...)
  local reqs, fn = requirements_and_test('without_requires', ...)
  return function(...)
    for _, r in ipairs(reqs) do
      if not M.available(r) then return fn(...) end
    end
    return skip(fn, 'runs only without ' .. table.concat(reqs, ', '))
  end
end

return M
