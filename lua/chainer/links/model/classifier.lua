-- links/model/classifier.lua: L.Classifier(predictor, lossfun, accfun, label_key = -1).
--
-- model(x..., t): y = predictor(x...), loss = lossfun(y, t), accuracy =
-- accfun(y, t) (when compute_accuracy); reports {loss =, accuracy =} to
-- chainer.reporter with the classifier as observer (when the reporter
-- module exists) and returns loss.  label_key is Chainer's position of t
-- among the arguments (0-based; negative counts from the end).
local Chain = require('chainer.link').Chain
local F = require 'chainer.functions'
local args = require 'chainer._args'

local Classifier = Chain:extend('Classifier')
local SIGNATURE = args.signature { 'predictor', 'lossfun', 'accfun', 'label_key' }

local function is_callable(v)
  if type(v) == 'function' then return true end
  local mt = getmetatable(v)
  return type(mt) == 'table' and mt.__call ~= nil
end

function Classifier:init(...)
  local a = args.parse('L.Classifier', SIGNATURE, select('#', ...), ...)
  local predictor = a.predictor
  if not is_callable(predictor) then
    error('Classifier: predictor must be a Link or a callable (got ' .. type(predictor) .. ')', 3)
  end
  local lossfun = a.lossfun or F.softmax_cross_entropy
  local accfun = a.accfun or F.accuracy
  local label_key = a.label_key or -1
  if type(label_key) ~= 'number' then
    error('Classifier: label_key must be an integer position (got ' .. type(label_key) .. ')', 3)
  end
  rawset(self, 'lossfun', lossfun)
  rawset(self, 'accfun', accfun)
  rawset(self, 'label_key', label_key)
  rawset(self, 'compute_accuracy', true)
  rawset(self, 'y', nil)
  rawset(self, 'loss', nil)
  rawset(self, 'accuracy', nil)
  self.predictor = predictor
end

local reporter_mod
local function reporter()
  if reporter_mod == nil then
    local ok, mod = pcall(require, 'chainer.reporter')
    reporter_mod = ok and mod or false
  end
  return reporter_mod
end

function Classifier:forward(...)
  local n = select('#', ...)
  local args = { ... }
  local key = self.label_key
  local pos = key < 0 and n + key + 1 or key + 1
  if pos < 1 or pos > n then
    error(string.format('Classifier: label_key %d is out of range for %d arguments', key, n), 2)
  end
  local t = args[pos]
  table.remove(args, pos)
  rawset(self, 'y', nil)
  rawset(self, 'loss', nil)
  rawset(self, 'accuracy', nil)
  local y = self.predictor(unpack(args, 1, n - 1))
  rawset(self, 'y', y)
  local loss = self.lossfun(y, t)
  rawset(self, 'loss', loss)
  local rep = reporter()
  if rep then rep.report({ loss = loss }, self) end
  if self.compute_accuracy then
    local acc = self.accfun(y, t)
    rawset(self, 'accuracy', acc)
    if rep then rep.report({ accuracy = acc }, self) end
  end
  return loss
end

return { Classifier = Classifier }
