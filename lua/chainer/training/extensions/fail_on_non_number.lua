-- FailOnNonNumber{check_grad = true}: stops training with an error as soon
-- as a parameter (or a gradient) of any optimizer's target holds NaN or Inf.
local args = require 'chainer._args'
local extension = require 'chainer.training.extension'

local FailOnNonNumber = extension.Extension:extend('FailOnNonNumber')
-- Chainer's arguments after the required ones, positional or by name
local SIGNATURE = args.signature({}, { 'check_grad' })

function FailOnNonNumber:init(...)
  local opts = args.parse_at(3, 'FailOnNonNumber', SIGNATURE, select('#', ...), ...)
  self._check_grad = opts.check_grad ~= false
end

local function all_finite(t)
  local f = t:isfinite()
  local v = f:all():item()
  return v == true or v == 1
end

FailOnNonNumber.__call = function(self, trainer)
  local opts = trainer.updater:get_all_optimizers()
  local names = {}
  for k in pairs(opts) do names[#names + 1] = k end
  table.sort(names)
  for _, name in ipairs(names) do
    local target = opts[name].target
    for p in target:params() do
      local d = p.array
      if d ~= nil and not all_finite(d) then
        error(string.format("Kill the process since parameters in optimizer '%s' diverge. R.I.P.", name), 0)
      end
      if self._check_grad then
        local g = p.grad
        if g ~= nil and not all_finite(g) then
          error(string.format("Kill the process since grads in optimizer '%s' diverge. R.I.P.", name), 0)
        end
      end
    end
  end
end

return FailOnNonNumber
