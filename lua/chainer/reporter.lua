-- reporter.lua: chainer.Reporter, chainer.report, report_scope, Summary and
-- DictSummary.
--
--   local reporter = chainer.Reporter()
--   reporter:add_observer('main', model)
--   local observation = {}
--   reporter:scope(observation, function()
--     chainer.report({loss = loss}, model)     -- observation['main/loss'] = loss
--   end)
--
-- A reporter keeps a mapping observer -> name (weak keys, identity) and the
-- current observation table.  `report(values, observer)` stores each value
-- under '<observer name>/<key>' (or `key` when no observer is given) in the
-- observation of the current reporter, the innermost one made current by
-- `scope` or `use`.  Reported Variables are detached from their graph unless
-- chainer.config.keep_graph_on_report is true.
local class = require 'chainer.class'
local cfg = require 'chainer.config'
local json = require 'chainer.utils.json'
local util = require 'chainer.training._util'

local config = cfg.config
local to_number = util.to_number

local M = {}

---------------------------------------------------------------------------
-- the stack of current reporters
---------------------------------------------------------------------------
local stack, depth = {}, 0

local function get_current_reporter()
  return stack[depth]
end
M.get_current_reporter = get_current_reporter

local function push(r) depth = depth + 1 stack[depth] = r end
local function pop(r)
  -- pops down to (and including) r: an error between push and pop must not
  -- leave stale reporters current
  while depth > 0 do
    local top = stack[depth]
    stack[depth] = nil
    depth = depth - 1
    if top == r then return end
  end
end

-- Internal, for the Trainer's loop (no closure per iteration).
M._depth = function() return depth end
M._reset_depth = function(d)
  while depth > d do stack[depth] = nil depth = depth - 1 end
end

---------------------------------------------------------------------------
-- Reporter
---------------------------------------------------------------------------
local Reporter = class.Object:extend('Reporter')
M.Reporter = Reporter

function Reporter:init()
  self._observer_names = setmetatable({}, { __mode = 'k' })
  self.observation = {}
end

local function detach(v)
  if type(v) == 'table' and v._is_variable and not config.keep_graph_on_report then
    local Variable = require 'chainer.variable'
    local d = v._data
    if d == nil then return v end
    local c = Variable(d, { requires_grad = v._requires_grad })
    c.name = v.name
    return c
  end
  return v
end

-- Registers `observer` (any table: a link, an optimizer, ...) under `name`.
function Reporter:add_observer(name, observer)
  if type(name) ~= 'string' then
    error('Reporter:add_observer: name must be a string (got ' .. type(name) .. ')', 2)
  end
  if type(observer) ~= 'table' and type(observer) ~= 'userdata' and type(observer) ~= 'cdata' then
    error('Reporter:add_observer: observer must be an object (got ' .. type(observer) .. ')', 2)
  end
  self._observer_names[observer] = name
end

-- Registers several observers under prefix .. name.  `observers` is an
-- iterator of (name, observer) pairs such as link:namedlinks{skipself = true},
-- or a list of {name, observer} pairs.
function Reporter:add_observers(prefix, observers)
  if type(observers) == 'function' then
    for name, obs in observers do self._observer_names[obs] = prefix .. name end
  elseif type(observers) == 'table' then
    for _, e in ipairs(observers) do self._observer_names[e[2]] = prefix .. e[1] end
  else
    error('Reporter:add_observers: expected an iterator of (name, observer) or a list of {name, observer} (got '
      .. type(observers) .. ')', 2)
  end
end

-- The name an observer is registered under (nil when it is not).
function Reporter:observer_name(observer) return self._observer_names[observer] end

function Reporter:report(values, observer)
  if type(values) ~= 'table' then
    error('report: values must be a table {name = value} (got ' .. type(values) .. ')', 2)
  end
  local obs = self.observation
  if observer ~= nil then
    local name = self._observer_names[observer]
    if name == nil then
      error('report: the given observer is not registered to the reporter ' ..
        '(register it with reporter:add_observer(name, observer))', 2)
    end
    for k, v in pairs(values) do obs[name .. '/' .. k] = detach(v) end
  else
    for k, v in pairs(values) do obs[k] = detach(v) end
  end
end

local function finish(self, old_obs, ok, ...)
  pop(self)
  if old_obs ~= false then self.observation = old_obs end
  if not ok then error((...), 0) end
  return ...
end

-- Reports go into `observation` while fn runs; this reporter is current.
function Reporter:scope(observation, fn)
  if type(observation) ~= 'table' then
    error('Reporter:scope: observation must be a table (got ' .. type(observation) .. ')', 2)
  end
  if type(fn) ~= 'function' then
    error('Reporter:scope: pass the scope as a function: reporter:scope(observation, function() ... end)', 2)
  end
  local old = self.observation
  self.observation = observation
  push(self)
  return finish(self, old, pcall(fn))
end

-- Makes this reporter current while fn runs (Chainer's `with reporter:`).
function Reporter:use(fn)
  if type(fn) ~= 'function' then
    error('Reporter:use: pass the scope as a function: reporter:use(function() ... end)', 2)
  end
  push(self)
  return finish(self, false, pcall(fn))
end

-- Internal, for loops that must not allocate a closure per iteration.
function Reporter:_enter(observation)
  self._saved = self.observation
  self.observation = observation
  push(self)
end
function Reporter:_exit()
  pop(self)
  self.observation = self._saved
  self._saved = nil
end

-- chainer.report(values, observer): reports to the current reporter; does
-- nothing when there is none.
function M.report(values, observer)
  local r = stack[depth]
  if r == nil then return end
  if observer ~= nil and r._observer_names[observer] == nil then
    error('report: the given observer is not registered to the reporter ' ..
      '(register it with reporter:add_observer(name, observer))', 2)
  end
  r:report(values, observer)
end

-- report_scope(observation, fn): the current reporter reports into
-- `observation` while fn runs.
function M.report_scope(observation, fn)
  local r = stack[depth]
  if r == nil then
    error('report_scope: no reporter is current (use reporter:scope(observation, fn))', 2)
  end
  if type(fn) ~= 'function' then
    error('report_scope: pass the scope as a function: report_scope(observation, function() ... end)', 2)
  end
  local old = r.observation
  r.observation = observation
  local ok, a, b, c = pcall(fn)
  r.observation = old
  if not ok then error(a, 0) end
  return a, b, c
end

---------------------------------------------------------------------------
-- Summary: online mean and standard deviation of scalars
---------------------------------------------------------------------------
local Summary = class.Object:extend('Summary')
M.Summary = Summary

function Summary:init()
  self._x, self._x2, self._n = 0, 0, 0
end

-- add(value, weight): value is a number, a one-element tensor or a
-- Variable holding one; weight defaults to 1.
function Summary:add(value, weight)
  local v = to_number(value)
  if v == nil then
    error('Summary:add: value must be a number, a 0-d tensor or a Variable holding one (got ' ..
      type(value) .. ')', 2)
  end
  local w = 1
  if weight ~= nil then
    w = to_number(weight)
    if w == nil then error('Summary:add: weight must be a number', 2) end
  end
  self._x = self._x + w * v
  self._x2 = self._x2 + w * v * v
  self._n = self._n + w
end

function Summary:compute_mean()
  return self._x / self._n
end

-- mean, std
function Summary:make_statistics()
  local mean = self._x / self._n
  local var = self._x2 / self._n - mean * mean
  if var < 0 then var = 0 end
  return mean, math.sqrt(var)
end

function Summary:serialize(serializer)
  self._x = util.ser_number(serializer, '_x', self._x)
  self._x2 = util.ser_number(serializer, '_x2', self._x2)
  self._n = util.ser_number(serializer, '_n', self._n)
end

---------------------------------------------------------------------------
-- DictSummary: one Summary per key
---------------------------------------------------------------------------
local DictSummary = class.Object:extend('DictSummary')
M.DictSummary = DictSummary

function DictSummary:init()
  self._names = {}        -- keys in first-seen order (sorted within one add)
  self._summaries = {}    -- key -> Summary
end

local function scalar_of(v)
  -- returns value, weight or nil when v is not summarisable
  if type(v) == 'table' and not v._is_variable and v[1] ~= nil and v[2] ~= nil and getmetatable(v) == nil then
    if util.is_scalar(v[1]) and util.is_scalar(v[2]) then return v[1], v[2] end
    return nil
  end
  if util.is_scalar(v) then return v, nil end
  return nil
end

-- Adds every scalar entry of `d` (numbers, one-element tensors, Variables
-- holding one, or {value, weight} pairs); other entries are skipped.
function DictSummary:add(d)
  if type(d) ~= 'table' then error('DictSummary:add: expected a table (got ' .. type(d) .. ')', 2) end
  local new
  for k, v in pairs(d) do
    local x, w = scalar_of(v)
    if x ~= nil then
      local s = self._summaries[k]
      if s == nil then
        s = Summary()
        self._summaries[k] = s
        new = new or {}
        new[#new + 1] = k
      end
      s:add(x, w)
    end
  end
  if new then
    table.sort(new)
    for _, k in ipairs(new) do self._names[#self._names + 1] = k end
  end
end

function DictSummary:compute_mean()
  local out = {}
  for k, s in pairs(self._summaries) do out[k] = s:compute_mean() end
  return out
end

-- {key = mean, ['key.std'] = std, ...}
function DictSummary:make_statistics()
  local out = {}
  for k, s in pairs(self._summaries) do
    local m, sd = s:make_statistics()
    out[k] = m
    out[k .. '.std'] = sd
  end
  return out
end

-- Keys in first-seen order.
function DictSummary:keys()
  local out = {}
  for i, k in ipairs(self._names) do out[i] = k end
  return out
end

-- Chainer's layout: `_names` (a JSON list) and `_summaries/<i>/{_x,_x2,_n}`
-- with 0-based i.
function DictSummary:serialize(serializer)
  local names_json = json.encode(json.array(self:keys()))
  local loaded = util.ser_string(serializer, '_names', names_json)
  if util.is_loading(serializer) then
    local names = json.decode(loaded)
    self._names, self._summaries = {}, {}
    for _, k in ipairs(names) do
      self._names[#self._names + 1] = k
      self._summaries[k] = Summary()
    end
  end
  local sub = util.child(serializer, '_summaries')
  for i, k in ipairs(self._names) do
    self._summaries[k]:serialize(util.child(sub, tostring(i - 1)))
  end
end

return M
