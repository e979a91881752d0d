-- LogReport{keys =, trigger = {1, 'epoch'}, postprocess =, filename = 'log'}
-- (alias log_name): every iteration adds the observation (or only `keys`)
-- to a DictSummary; when its trigger fires it appends the means, plus
-- `epoch`, `iteration` and `elapsed_time`, to `log` and writes the whole
-- list as JSON (indent 4) to <out>/<filename>, atomically.  The filename
-- may use '{iteration}'-style fields of the entry; filename = false writes
-- no file.
local args = require 'chainer._args'
local extension = require 'chainer.training.extension'
local reporter_mod = require 'chainer.reporter'
local json = require 'chainer.utils.json'
local util = require 'chainer.training._util'
local fs = require 'chainer._fs'

local LogReport = extension.Extension:extend('LogReport')
-- Chainer's arguments after the required ones, positional or by name
local SIGNATURE = args.signature({ 'keys', 'trigger', 'postprocess', 'filename' }, { 'log_name' })

local props = {}
LogReport.__index = require('chainer.class').property_index(props)

function LogReport:init(...)
  local opts = args.parse_at(3, 'LogReport', SIGNATURE, select('#', ...), ...)
  self._keys = opts.keys
  self._trigger = require('chainer.training.triggers').get_trigger(opts.trigger or { 1, 'epoch' })
  self._postprocess = opts.postprocess
  local fname = opts.filename
  if fname == nil then fname = opts.log_name end
  if fname == nil then fname = 'log' end
  self._log_name = fname
  self._log = {}
  self._summary = reporter_mod.DictSummary()
end

-- The list of entries written so far (tables with the means and epoch,
-- iteration, elapsed_time).
function props.log(self) return rawget(self, '_log') end

LogReport.__call = function(self, trainer)
  local obs = trainer.observation
  local keys = self._keys
  if keys == nil then
    self._summary:add(obs)
  else
    local sel = {}
    for _, k in ipairs(keys) do if obs[k] ~= nil then sel[k] = obs[k] end end
    self._summary:add(sel)
  end
  if trainer.is_before_training or self._trigger(trainer) then
    local stats = self._summary:compute_mean()
    local updater = trainer.updater
    stats.epoch = updater.epoch
    stats.iteration = updater.iteration
    stats.elapsed_time = trainer.elapsed_time
    if self._postprocess then self._postprocess(stats) end
    self._log[#self._log + 1] = stats
    if self._log_name then
      local name = util.format_template(self._log_name, stats)
      fs.mkdir_p(trainer.out)
      assert(fs.atomic_write(fs.join(trainer.out, name), json.encode(json.array(self._log), { indent = 4 })))
    end
    self._summary = reporter_mod.DictSummary()
  end
end

function LogReport:serialize(serializer)
  if type(self._trigger) == 'table' and self._trigger.serialize then
    self._trigger:serialize(util.child(serializer, '_trigger'))
  end
  self._summary:serialize(util.child(serializer, '_summary'))
  if util.is_loading(serializer) then
    local s = util.ser_string(serializer, '_log', '')
    if s and s ~= '' then
      local log = json.decode(s)
      local plain = {}
      for i, e in ipairs(log) do plain[i] = e end
      self._log = plain
    end
  else
    serializer('_log', json.encode(json.array(self._log)))
  end
end

return LogReport
