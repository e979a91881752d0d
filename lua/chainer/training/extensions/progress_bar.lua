-- ProgressBar{training_length =, update_interval = 100, bar_length = 50,
-- out = io.stdout}: Chainer's four lines, every update_interval iterations:
--
--      total [#######...........................................] 14.03%
-- this epoch [####################..............................] 40.27%
--       1000 iter, 2 epoch / 20 epochs
--     312.68 iters/sec. Estimated time to finish: 0:00:30.123456.
--
-- On a terminal the block is redrawn in place (ESC[J, the lines, ESC[4A);
-- otherwise the lines are printed plainly each time.  The speed is measured
-- over the last (up to 100) refreshes.
local args = require 'chainer._args'
local extension = require 'chainer.training.extension'
local util = require 'chainer.training._util'

local ProgressBar = extension.Extension:extend('ProgressBar')
-- Chainer's arguments after the required ones, positional or by name
local SIGNATURE = args.signature({ 'training_length', 'update_interval', 'bar_length', 'out' })

function ProgressBar:init(...)
  local opts = args.parse_at(3, 'ProgressBar', SIGNATURE, select('#', ...), ...)
  self._training_length = opts.training_length
  self._update_interval = opts.update_interval or 100
  self._bar_length = opts.bar_length or 50
  self._out = opts.out or io.stdout
  self._recent_timing = {}
  self._drawn = false
end

local function bar(rate, len)
  local marks = math.floor(rate * len)
  return string.rep('#', marks) .. string.rep('.', len - marks)
end

-- The four lines (a table of strings ending in '\n').
function ProgressBar:get_lines(trainer)
  local updater = trainer.updater
  local iteration = updater.iteration
  local epoch = updater.epoch_detail
  if self._training_length == nil then
    local st = trainer.stop_trigger
    if type(st) == 'table' and st.get_training_length then
      local l, u = st:get_training_length()
      self._training_length = { l, u }
    else
      error('ProgressBar: pass {training_length = {n, unit}} when the stop trigger has no get_training_length', 0)
    end
  end
  local length, unit = self._training_length[1], self._training_length[2]
  local rate = unit == 'iteration' and iteration / length or epoch / length
  if rate > 1 then rate = 1 end
  local L = self._bar_length
  local lines = {}
  lines[1] = string.format('     total [%s] %5.2f%%\n', bar(rate, L), rate * 100)
  local erate = epoch - math.floor(epoch)
  lines[2] = string.format('this epoch [%s] %5.2f%%\n', bar(erate, L), erate * 100)
  lines[3] = string.format('%10d iter, %d epoch / %s %ss\n', iteration, updater.epoch, util.fmt_g(length), unit)
  -- speed over the recent refreshes
  local now = util.now()
  local rt = self._recent_timing
  rt[#rt + 1] = { iteration, epoch, now }
  local old = rt[1]
  local span = now - old[3]
  local speed_t, speed_e
  if span ~= 0 then
    speed_t = (iteration - old[1]) / span
    speed_e = (epoch - old[2]) / span
  else
    speed_t, speed_e = math.huge, math.huge
  end
  if #rt > 100 then table.remove(rt, 1) end
  local est
  if unit == 'iteration' then est = (length - iteration) / speed_t else est = (length - epoch) / speed_e end
  if est ~= est or est < 0 then est = 0 end
  lines[4] = string.format('%s iters/sec. Estimated time to finish: %s.\n',
    util.fmt_g(speed_t, '%10.5g'), util.timedelta(est))
  return lines
end

ProgressBar.__call = function(self, trainer)
  local iteration = trainer.updater.iteration
  if iteration % self._update_interval ~= 0 then return end
  local out = self._out
  local lines = self:get_lines(trainer)
  if util.isatty(out) then
    out:write('\27[J', table.concat(lines), string.format('\27[%dA', #lines))
  else
    out:write(table.concat(lines))
  end
  self._drawn = true
  if out.flush then out:flush() end
end

function ProgressBar:finalize()
  local out = self._out
  if self._drawn and util.isatty(out) then
    out:write('\27[J')
    if out.flush then out:flush() end
  end
end

return ProgressBar
