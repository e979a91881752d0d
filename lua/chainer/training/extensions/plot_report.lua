-- PlotReport(y_keys, {x_key = 'iteration', trigger = {1, 'epoch'},
-- postprocess =, filename = 'plot.png' (alias file_name), marker = 'x',
-- grid = true}): accumulates like LogReport; each time its trigger fires it
-- adds the means of y_keys at x = epoch or iteration and redraws
-- <out>/<filename> (PNG, through gnuplot) and <out>/<stem>.svg.
--
--   trainer:extend(extensions.PlotReport({'main/loss', 'validation/main/loss'},
--     {x_key = 'epoch', filename = 'loss.png'}))
-- Chainer's positional form works in full, alone or with trailing options:
--   PlotReport(y_keys, x_key, trigger, postprocess, filename, marker, grid)
--   PlotReport({'main/loss'}, 'epoch', {filename = 'loss.png'})
local args = require 'chainer._args'
local extension = require 'chainer.training.extension'
local reporter_mod = require 'chainer.reporter'
local json = require 'chainer.utils.json'
local util = require 'chainer.training._util'
local fs = require 'chainer._fs'
local plot = require 'chainer.training.extensions._plot'

local PlotReport = extension.Extension:extend('PlotReport')
-- Chainer's arguments after the required ones, positional or by name
local SIGNATURE = args.signature({ 'x_key', 'trigger', 'postprocess', 'filename', 'marker', 'grid' }, { 'file_name', 'png_interval' })

function PlotReport:init(y_keys, ...)
  if type(y_keys) == 'string' then y_keys = { y_keys } end
  if type(y_keys) ~= 'table' or #y_keys == 0 then
    error("PlotReport: y_keys must be a key or a list of keys such as {'main/loss'}", 3)
  end
  local opts = args.parse_at(3, 'PlotReport', SIGNATURE, select('#', ...), ...)
  self._y_keys = y_keys
  self._x_key = opts.x_key or 'iteration'
  if self._x_key ~= 'epoch' and self._x_key ~= 'iteration' then
    error("PlotReport: x_key must be 'epoch' or 'iteration' (got " .. tostring(self._x_key) .. ')', 3)
  end
  self._trigger = require('chainer.training.triggers').get_trigger(opts.trigger or { 1, 'epoch' })
  self._postprocess = opts.postprocess
  self._file_name = opts.filename or opts.file_name or 'plot.png'
  self._marker = opts.marker
  if self._marker == nil then self._marker = 'x' end
  self._grid = opts.grid ~= false
  -- seconds between PNG redraws (the SVG is redrawn at every trigger; the
  -- last PNG is always drawn in finalize)
  self._png_interval = opts.png_interval or 5
  self._data = {}
  for _, k in ipairs(y_keys) do self._data[k] = {} end
  self._summary = reporter_mod.DictSummary()
end

-- PNG rendering needs gnuplot; the SVG is always written.
function PlotReport.available() return plot.have_gnuplot() end

-- The accumulated {x, y} points of a key.
function PlotReport:data(key) return self._data[key] end

PlotReport.__call = function(self, trainer)
  local obs = trainer.observation
  local sel = {}
  for _, k in ipairs(self._y_keys) do if obs[k] ~= nil then sel[k] = obs[k] end end
  self._summary:add(sel)
  if trainer.is_before_training or self._trigger(trainer) then
    local stats = self._summary:compute_mean()
    local updater = trainer.updater
    stats.epoch = updater.epoch
    stats.iteration = updater.iteration
    local x = stats[self._x_key]
    for _, k in ipairs(self._y_keys) do
      if stats[k] ~= nil then table.insert(self._data[k], { x, stats[k] }) end
    end
    self._summary = reporter_mod.DictSummary()
    local series, any = {}, false
    for i, k in ipairs(self._y_keys) do
      series[i] = { label = k, points = self._data[k] }
      if #self._data[k] > 0 then any = true end
    end
    if not any then return end
    local fig = { series = series, x_label = self._x_key, marker = self._marker and true or false, grid = self._grid }
    if self._postprocess then self._postprocess(fig, trainer) end
    fs.mkdir_p(trainer.out)
    self._path = fs.join(trainer.out, self._file_name)
    plot.write(self._path, fig, { min_interval = self._png_interval })
  end
end

function PlotReport:finalize()
  if self._path then plot.flush(self._path) end
end

-- Chainer's key is '_plot_<file name>'; the trigger's state under
-- '_trigger' is chainlua's (Chainer 7.8.1 does not save it): it may be absent.
function PlotReport:serialize(serializer)
  if type(self._trigger) == 'table' and self._trigger.serialize then
    self._trigger:serialize(util.optional_child(serializer, '_trigger'))
  end
  local key = '_plot_' .. self._file_name
  if util.is_loading(serializer) then
    local s = util.ser_string(serializer, key, '')
    if s and s ~= '' then
      local d = json.decode(s)
      for _, k in ipairs(self._y_keys) do
        local pts = {}
        for i, p in ipairs(d[k] or {}) do pts[i] = { p[1], p[2] } end
        self._data[k] = pts
      end
    end
  else
    local d = {}
    for _, k in ipairs(self._y_keys) do
      local pts = json.array({})
      for i, p in ipairs(self._data[k]) do pts[i] = json.array({ p[1], p[2] }) end
      d[k] = pts
    end
    serializer(key, json.encode(d))
  end
end

return PlotReport
