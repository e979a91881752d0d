-- VariableStatisticsPlot(targets, {max_sample_size = 1000, report_data =
-- true, report_grad = true, plot_mean = true, plot_std = true,
-- percentile_sigmas = {0, 0.13, 2.28, 15.87, 50, 84.13, 97.72, 99.87, 100},
-- trigger = {1, 'epoch'}, filename = 'statistics.png' (alias file_name)}):
-- follows the distribution of a Link's parameters (or of a Variable) over
-- training: at each trigger it records the percentiles, mean and std of the
-- values (and gradients) and redraws one plot per kind, with the
-- percentile bands shaded: <stem>_data.png/.svg and <stem>_grad.png/.svg.
local args = require 'chainer._args'
local extension = require 'chainer.training.extension'
local stats = require 'chainer.training.extensions._stats'
local fs = require 'chainer._fs'
local plot = require 'chainer.training.extensions._plot'
local T = require 'chainer.tensor'

local VariableStatisticsPlot = extension.Extension:extend('VariableStatisticsPlot')

-- Options by name only: Chainer's positional order includes arguments
-- chainlua does not implement (max_sample_size, figsize, marker, grid), so
-- a positional value is refused rather than misread.
local OPTIONS = args.accept { 'report_data', 'report_grad', 'plot_mean', 'plot_std', 'percentile_sigmas', 'trigger',
  'filename', 'file_name' }

function VariableStatisticsPlot:init(targets, opts, ...)
  if select('#', ...) > 0 or (opts ~= nil and not args.is_options(opts)) then
    error('VariableStatisticsPlot: pass the options by name, VariableStatisticsPlot(targets, {trigger = ..., ' ..
      'filename = ...}); the positional form is not supported', 3)
  end
  opts = args.options('VariableStatisticsPlot', opts, OPTIONS, 3)
  if type(targets) ~= 'table' then
    error('VariableStatisticsPlot: targets must be a Link, a Variable or a list of them', 3)
  end
  if targets._is_link or targets._is_variable then targets = { targets } end
  self._targets = targets
  self._report_data = opts.report_data ~= false
  self._report_grad = opts.report_grad ~= false
  self._plot_mean = opts.plot_mean ~= false
  self._plot_std = opts.plot_std ~= false
  self._percentiles = opts.percentile_sigmas or { 0, 0.13, 2.28, 15.87, 50, 84.13, 97.72, 99.87, 100 }
  self._trigger = require('chainer.training.triggers').get_trigger(opts.trigger or { 1, 'epoch' })
  self._file_name = opts.filename or opts.file_name or 'statistics.png'
  self._samples = { data = {}, grad = {} }
  self._paths = {}
end

function VariableStatisticsPlot:finalize()
  for _, path in pairs(self._paths) do plot.flush(path) end
end

-- All values of the targets (data or grad) as one flat tensor, or nil.
local function gather(targets, kind)
  local parts = {}
  local function add(v)
    local a = kind == 'data' and v.array or v.grad
    if a ~= nil then parts[#parts + 1] = a:reshape(-1):astype('float64') end
  end
  for _, t in ipairs(targets) do
    if t._is_link then for p in t:params() do add(p) end else add(t) end
  end
  if #parts == 0 then return nil end
  if #parts == 1 then return parts[1] end
  return T.concatenate(parts, 0)
end

VariableStatisticsPlot.__call = function(self, trainer)
  if not self._trigger(trainer) then return end
  local x = trainer.updater.iteration
  local kinds = {}
  if self._report_data then kinds[#kinds + 1] = 'data' end
  if self._report_grad then kinds[#kinds + 1] = 'grad' end
  local stem = self._file_name:gsub('%.[Pp][Nn][Gg]$', '')
  for _, kind in ipairs(kinds) do
    local v = gather(self._targets, kind)
    if v ~= nil then
      local s = {
        x = x, percentiles = stats.percentiles(v, self._percentiles),
        mean = v:mean():item(), std = v:std():item(),
      }
      table.insert(self._samples[kind], s)
      local samples = self._samples[kind]
      local bands, series = {}, {}
      local np = #self._percentiles
      for i = 1, math.floor(np / 2) do
        local lower, upper = {}, {}
        for j, smp in ipairs(samples) do
          lower[j] = { smp.x, smp.percentiles[i] }
          upper[j] = { smp.x, smp.percentiles[np + 1 - i] }
        end
        bands[#bands + 1] = { lower = lower, upper = upper, color = '#1f77b4', opacity = 0.15 }
      end
      if self._plot_mean then
        local pts = {}
        for j, smp in ipairs(samples) do pts[j] = { smp.x, smp.mean } end
        series[#series + 1] = { label = 'mean', points = pts, color = '#d62728' }
      end
      if self._plot_std then
        local up, lo = {}, {}
        for j, smp in ipairs(samples) do up[j] = { smp.x, smp.mean + smp.std } lo[j] = { smp.x, smp.mean - smp.std } end
        series[#series + 1] = { label = 'mean + std', points = up, color = '#2ca02c' }
        series[#series + 1] = { label = 'mean - std', points = lo, color = '#2ca02c' }
      end
      fs.mkdir_p(trainer.out)
      local path = fs.join(trainer.out, stem .. '_' .. kind .. '.png')
      self._paths[kind] = path
      plot.write(path, { series = series, bands = bands, x_label = 'iteration', title = kind, marker = false, grid = true },
        { min_interval = 5 })
    end
  end
end

return VariableStatisticsPlot
