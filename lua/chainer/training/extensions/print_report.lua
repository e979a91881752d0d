-- PrintReport(entries, {log_report = 'LogReport', out = io.stdout}): prints
-- the chosen entries of each new LogReport entry as a row, in Chainer's
-- format: column width w = max(10, #entry); the header (printed once) pads
-- each name to w and joins them with two spaces; each row cell is
-- '%-<w>g' followed by two spaces (w + 2 spaces for a missing value).
-- On a terminal each row is preceded by ESC[J, which clears what the
-- ProgressBar drew below the cursor.
local args = require 'chainer._args'
local extension = require 'chainer.training.extension'
local util = require 'chainer.training._util'

local PrintReport = extension.Extension:extend('PrintReport')
-- Chainer's arguments after the required ones, positional or by name
local SIGNATURE = args.signature({ 'log_report', 'out' })

function PrintReport:init(entries, ...)
  local opts = args.parse_at(3, 'PrintReport', SIGNATURE, select('#', ...), ...)
  if type(entries) ~= 'table' or #entries == 0 then
    error("PrintReport: entries must be a list of keys such as {'epoch', 'main/loss'}", 3)
  end
  self._entries = entries
  self._log_report = opts.log_report or 'LogReport'
  self._out = opts.out or io.stdout
  self._log_len = 0
  local header, templates = {}, {}
  for i, e in ipairs(entries) do
    local w = math.max(10, #e)
    header[i] = e .. string.rep(' ', w - #e)
    templates[i] = { e, '%-' .. w .. 'g  ', string.rep(' ', w + 2), w }
  end
  self._header = table.concat(header, '  ') .. '\n'
  self._templates = templates
end

-- The row text for one log entry (without ESC[J).
function PrintReport:format_row(observation)
  local parts = {}
  for i, t in ipairs(self._templates) do
    local v = observation[t[1]]
    if v == nil then
      parts[i] = t[3]
    elseif type(v) == 'number' then
      parts[i] = util.fmt_g(v, t[2])
    else
      local s = tostring(v)
      parts[i] = s .. string.rep(' ', t[4] - #s) .. '  '
    end
  end
  return table.concat(parts) .. '\n'
end

PrintReport.__call = function(self, trainer)
  local out = self._out
  if self._header then
    out:write(self._header)
    self._header = nil
  end
  local lr = self._log_report
  if type(lr) == 'string' then
    lr = trainer:get_extension(lr)
  elseif type(lr) == 'table' then
    lr(trainer)
  else
    error('PrintReport: log_report must be a LogReport or the name of one', 2)
  end
  local log = lr.log
  local tty = util.isatty(out)
  while #log > self._log_len do
    self._log_len = self._log_len + 1
    if tty then out:write('\27[J') end
    out:write(self:format_row(log[self._log_len]))
  end
  if out.flush then out:flush() end
end

function PrintReport:serialize(serializer)
  local lr = self._log_report
  if type(lr) == 'table' and lr.serialize then lr:serialize(util.child(serializer, '_log_report')) end
end

return PrintReport
