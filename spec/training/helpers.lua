-- Shared helpers for the training specs: a fake updater with exact epoch
-- arithmetic, a tiny classifier problem, a string-collecting output and
-- temporary directories.
local fs = require 'chainer._fs'
local chainer = require 'chainer'
local training = require 'chainer.training'

local H = {}
local common = require 'helpers'
H.tmpdir, H.rmdir = common.tmpdir, common.rmdir

-- An updater whose epoch has `per_epoch` iterations (epoch_detail =
-- iteration / per_epoch) and no optimizers: chainer.testing's MockUpdater.
H.FakeUpdater = require('chainer.testing.training').MockUpdater

-- A writer object collecting text (for PrintReport / ProgressBar `out`).
function H.sink()
  local s = { parts = {} }
  function s:write(...)
    for i = 1, select('#', ...) do self.parts[#self.parts + 1] = tostring(select(i, ...)) end
  end
  function s:flush() end
  function s:text() return table.concat(self.parts) end
  return s
end


H.read = fs.read_file

-- A small separable classification problem and an MLP classifier.
function H.problem(n, seed)
  local T = chainer.tensor
  local datasets = require 'chainer.datasets'
  T.random.seed(seed or 0)
  local x = T.random.normal(0, 1, { n, 4 }, 'float32')
  local t = (x:sum({ axis = 1 }):gt(0)):astype('int32')
  return datasets.TupleDataset(x, t)
end

function H.model(seed)
  local T = chainer.tensor
  local L = require 'chainer.links'
  local F = require 'chainer.functions'
  T.random.seed(seed or 1)
  local MLP = chainer.Chain:extend('SpecMLP')
  function MLP:init() self.l1 = L.Linear(4, 8) self.l2 = L.Linear(8, 2) end
  function MLP:forward(x) return self.l2(F.relu(self.l1(x))) end
  return L.Classifier(MLP())
end

return H
