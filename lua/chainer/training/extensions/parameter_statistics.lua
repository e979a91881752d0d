-- ParameterStatistics(links, {statistics = 'default', report_params = true,
-- report_grads = true, prefix =, trigger = {1, 'epoch'},
-- skip_nan_params = false}): reports statistics of every parameter (and its
-- gradient) of the given links, averaged over the trigger's period, under
-- '<prefix/><link name>/<param path>/<data|grad>/<statistic>' (e.g.
-- 'predictor/l1/W/data/mean'); a multi-valued statistic (percentile) adds
-- '/0', '/1', ...  statistics is 'default' or a table {name = function(tensor)}.
local args = require 'chainer._args'
local extension = require 'chainer.training.extension'
local reporter_mod = require 'chainer.reporter'
local stats = require 'chainer.training.extensions._stats'

local ParameterStatistics = extension.Extension:extend('ParameterStatistics')
-- Chainer's arguments after the required ones, positional or by name
local SIGNATURE = args.signature({ 'statistics', 'report_params', 'report_grads', 'prefix', 'trigger', 'skip_nan_params' })
ParameterStatistics.default_name = 'parameter_statistics'
ParameterStatistics.priority = extension.PRIORITY_WRITER

function ParameterStatistics:init(links, ...)
  local opts = args.parse_at(3, 'ParameterStatistics', SIGNATURE, select('#', ...), ...)
  if type(links) == 'table' and links._is_link then links = { links } end
  if type(links) ~= 'table' or #links == 0 then
    error('ParameterStatistics: links must be a Link or a list of Links', 3)
  end
  self._links = links
  local st = opts.statistics
  if st == nil or st == 'default' then
    self._statistics = stats.default_statistics
    self._order = stats.default_order
  else
    if type(st) ~= 'table' then error("ParameterStatistics: statistics must be 'default' or a table of functions", 3) end
    self._statistics = st
    local order = {}
    for k in pairs(st) do order[#order + 1] = k end
    table.sort(order)
    self._order = order
  end
  local attrs = {}
  if opts.report_params ~= false then attrs[#attrs + 1] = 'data' end
  if opts.report_grads ~= false then attrs[#attrs + 1] = 'grad' end
  self._attrs = attrs
  self._prefix = opts.prefix
  self._trigger = require('chainer.training.triggers').get_trigger(opts.trigger or { 1, 'epoch' })
  self._skip_nan_params = opts.skip_nan_params == true
  self._summary = reporter_mod.DictSummary()
end

local function has_nan(t)
  local v = t:isnan():any():item()
  return v == true or v == 1
end

ParameterStatistics.__call = function(self, trainer)
  local out = {}
  local prefix = self._prefix and (self._prefix .. '/') or ''
  for _, link in ipairs(self._links) do
    local link_name = rawget(link, 'name') or 'None'
    for param_name, param in link:namedparams() do
      for _, attr in ipairs(self._attrs) do
        local arr = attr == 'data' and param.array or param.grad
        if arr ~= nil then
          for _, fname in ipairs(self._order) do
            local key = prefix .. link_name .. param_name .. '/' .. attr .. '/' .. fname
            local value
            if self._skip_nan_params and has_nan(arr) then value = 0 / 0
            else value = self._statistics[fname](arr) end
            if type(value) == 'table' then
              for i, v in ipairs(value) do out[key .. '/' .. (i - 1)] = v end
            else
              out[key] = value
            end
          end
        end
      end
    end
  end
  self._summary:add(out)
  if self._trigger(trainer) then
    reporter_mod.report(self._summary:compute_mean())
    self._summary = reporter_mod.DictSummary()
  end
end

return ParameterStatistics
