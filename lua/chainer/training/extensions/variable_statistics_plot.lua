-- VariableStatisticsPlot(targets, max_sample_size = 1000, report_data = true,
-- report_grad = true, plot_mean = true, plot_std = true, percentile_sigmas =
-- {0, 0.13, 2.28, 15.87, 50, 84.13, 97.72, 99.87, 100}, trigger = {1, 'epoch'},
-- filename = 'statistics.png' (alias file_name), figsize = {6.4, 4.8},
-- marker = nil, grid = true): Chainer's positional order, or any of them by
-- name in a trailing options table.
--
-- Follows the distribution of the values (and gradients) of a Variable, a
-- Link's parameters or a list of either.  Each call (the extension's own
-- trigger: every iteration by default) records the mean, std and
-- percentiles of all the values together; a reservoir keeps at most
-- max_sample_size of these records (uniformly at random once full, as
-- Chainer).  When `trigger` fires, one figure is drawn, as Chainer's
-- matplotlib subplots: a column per kind ('data', 'grad'), a row for the
-- mean with +-std bars and a row for the percentile bands, figsize inches
-- at 100 pixels an inch: <out>/<filename> (PNG through gnuplot, the same
-- drawing as PlotReport's) and <out>/<stem>.svg.
local args = require 'chainer._args'
local extension = require 'chainer.training.extension'
local stats = require 'chainer.training.extensions._stats'
local fs = require 'chainer._fs'
local plot = require 'chainer.training.extensions._plot'
local T = require 'chainer.tensor'

local VariableStatisticsPlot = extension.Extension:extend('VariableStatisticsPlot')

local SIGNATURE = args.signature({ 'max_sample_size', 'report_data', 'report_grad', 'plot_mean', 'plot_std',
  'percentile_sigmas', 'trigger', 'filename', 'figsize', 'marker', 'grid' }, { 'file_name' })

local COLOR = '#1f77b4'   -- matplotlib's C0, as Chainer's plot
local DPI = 100           -- matplotlib's savefig default

-- The Variables of a Variable, a Link (all its parameters) or a list of them.
local function unpack_variables(x, out)
  if type(x) ~= 'table' then return out end
  if x._is_variable then
    out[#out + 1] = x
  elseif x._is_link then
    for p in x:params({ include_uninit = true }) do out[#out + 1] = p end
  else
    for _, v in ipairs(x) do unpack_variables(v, out) end
  end
  return out
end

local function check_flag(name, v, default)
  if v == nil then return default end
  if type(v) ~= 'boolean' then error('VariableStatisticsPlot: ' .. name .. ' must be true or false (got ' ..
    type(v) .. ')', 4) end
  return v
end

function VariableStatisticsPlot:init(targets, ...)
  local opts = args.parse_at(3, 'VariableStatisticsPlot', SIGNATURE, select('#', ...), ...)
  if opts.filename and opts.file_name then
    error('VariableStatisticsPlot: give filename or file_name, not both', 3)
  end
  self._vars = unpack_variables(targets, {})
  if #self._vars == 0 then
    error('VariableStatisticsPlot: targets must hold at least one Variable (a Variable, a Link or a list of them)', 3)
  end
  local size = opts.max_sample_size or 1000
  if type(size) ~= 'number' or size < 1 or size ~= math.floor(size) then
    error('VariableStatisticsPlot: max_sample_size must be a positive integer (got ' .. tostring(size) .. ')', 3)
  end
  self._max_sample_size = size
  self._report_data = check_flag('report_data', opts.report_data, true)
  self._report_grad = check_flag('report_grad', opts.report_grad, true)
  self._plot_mean = check_flag('plot_mean', opts.plot_mean, true)
  self._plot_std = check_flag('plot_std', opts.plot_std, true)
  self._grid = check_flag('grid', opts.grid, true)
  local sig = opts.percentile_sigmas
  if sig == nil then sig = { 0, 0.13, 2.28, 15.87, 50, 84.13, 97.72, 99.87, 100 } end
  if type(sig) == 'number' then sig = { sig } end
  if type(sig) ~= 'table' then
    error('VariableStatisticsPlot: percentile_sigmas must be a number or a list of numbers in [0, 100]', 3)
  end
  for _, q in ipairs(sig) do
    if type(q) ~= 'number' or q < 0 or q > 100 then
      error('VariableStatisticsPlot: percentile_sigmas must lie in [0, 100] (got ' .. tostring(q) .. ')', 3)
    end
  end
  self._percentiles = sig
  if not (self._plot_mean or self._plot_std or #sig > 0) then
    error('VariableStatisticsPlot: nothing to plot (plot_mean, plot_std and percentile_sigmas all off)', 3)
  end
  self._keys = {}
  if self._report_data then self._keys[#self._keys + 1] = 'data' end
  if self._report_grad then self._keys[#self._keys + 1] = 'grad' end
  if #self._keys == 0 then error('VariableStatisticsPlot: nothing to plot (report_data and report_grad both off)', 3) end
  local figsize = opts.figsize or { 6.4, 4.8 }
  if type(figsize) ~= 'table' or type(figsize[1]) ~= 'number' or type(figsize[2]) ~= 'number'
      or figsize[1] <= 0 or figsize[2] <= 0 or figsize[3] ~= nil then
    error('VariableStatisticsPlot: figsize must be {width, height} in inches, both positive', 3)
  end
  self._figsize = figsize
  if opts.marker ~= nil and not plot.MARKERS[opts.marker] then
    error("VariableStatisticsPlot: marker must be one of 'x', '+', 'o', 's', '.' (got " .. tostring(opts.marker) ..
      ')', 3)
  end
  self._marker = opts.marker
  self._trigger = require('chainer.training.triggers').get_trigger(opts.trigger or { 1, 'epoch' })
  self._file_name = opts.filename or opts.file_name or 'statistics.png'
  self._samples = {}   -- the reservoir: {x =, data = {mean =, std =, percentiles =}, grad = ...}
  self._counter = 0
end

-- PNG rendering needs gnuplot; the SVG is always written.
function VariableStatisticsPlot.available() return plot.have_gnuplot() end

-- The records the reservoir holds, by iteration.
function VariableStatisticsPlot:samples()
  local out = {}
  for i, s in ipairs(self._samples) do out[i] = s end
  table.sort(out, function(a, b) return a.x < b.x end)
  return out
end

function VariableStatisticsPlot:finalize()
  if self._path then plot.flush(self._path) end
end

-- The statistics of all the values of one kind, or zeros where no
-- Variable has any (Chainer leaves its row at zero).
function VariableStatisticsPlot:_statistics(kind)
  local parts = {}
  for _, v in ipairs(self._vars) do
    local a = kind == 'data' and v._data or v.grad
    if a ~= nil then parts[#parts + 1] = a:reshape(-1):astype('float64') end
  end
  local s = { mean = 0, std = 0, percentiles = {} }
  if #parts == 0 then
    for i = 1, #self._percentiles do s.percentiles[i] = 0 end
    return s
  end
  local x = #parts == 1 and parts[1] or T.concatenate(parts, 0)
  if self._plot_mean then s.mean = x:mean():item() end
  if self._plot_std then s.std = x:std():item() end
  if #self._percentiles > 0 then s.percentiles = stats.percentiles(x, self._percentiles) end
  return s
end

-- Reservoir sampling: the first max_sample_size records are kept; after
-- that the n-th replaces a random one with probability size / n.
function VariableStatisticsPlot:_add(record)
  local size = self._max_sample_size
  self._counter = self._counter + 1
  if #self._samples < size then
    self._samples[#self._samples + 1] = record
  elseif math.random() < size / self._counter then
    self._samples[math.random(size)] = record
  end
end

function VariableStatisticsPlot:_figure()
  local samples = self:samples()
  local top, bottom = {}, {}
  for _, key in ipairs(self._keys) do
    if self._plot_mean or self._plot_std then
      local pts, errs = {}, {}
      for i, s in ipairs(samples) do
        local rec = s[key]
        pts[i] = { s.x, self._plot_mean and rec.mean or rec.std }
        errs[i] = rec.std
      end
      local series = { points = pts, color = COLOR }
      if self._plot_mean and self._plot_std then
        series.label, series.errors = 'mean, std', errs
      else
        series.label = self._plot_mean and 'mean' or 'std'
      end
      top[#top + 1] = { title = key, series = { series }, marker = self._marker, grid = self._grid }
    end
    if #self._percentiles > 0 then
      local n = #self._percentiles
      local mid = math.floor(n / 2)
      local fig = { title = (self._plot_mean or self._plot_std) and '' or key, x_label = 'iteration', bands = {},
        series = {}, marker = self._marker, grid = self._grid }
      for i = 1, mid do   -- the i-th lowest with the i-th highest
        local lower, upper = {}, {}
        for j, s in ipairs(samples) do
          lower[j] = { s.x, s[key].percentiles[i] }
          upper[j] = { s.x, s[key].percentiles[n + 1 - i] }
        end
        fig.bands[#fig.bands + 1] = { lower = lower, upper = upper, color = COLOR, opacity = 0.2,
          label = (i == mid and n % 2 == 0) and 'percentile' or nil }
      end
      if n % 2 == 1 then   -- the middle one as a line
        local pts = {}
        for j, s in ipairs(samples) do pts[j] = { s.x, s[key].percentiles[mid + 1] } end
        fig.series[1] = { label = 'percentile', points = pts, color = COLOR }
      end
      bottom[#bottom + 1] = fig
    end
  end
  local rows = {}
  if #top > 0 then rows[#rows + 1] = top end
  if #bottom > 0 then rows[#rows + 1] = bottom end
  return { rows = rows, width = math.floor(self._figsize[1] * DPI + 0.5),
    height = math.floor(self._figsize[2] * DPI + 0.5) }
end

VariableStatisticsPlot.__call = function(self, trainer)
  local iteration = trainer.updater.iteration
  local record = { x = iteration ~= 0 and iteration or self._counter }
  for _, key in ipairs(self._keys) do record[key] = self:_statistics(key) end
  self:_add(record)
  if self._trigger(trainer) then
    fs.mkdir_p(trainer.out)
    self._path = fs.join(trainer.out, self._file_name)
    plot.write_grid(self._path, self:_figure(), { min_interval = 5 })
  end
end

return VariableStatisticsPlot
