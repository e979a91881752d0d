-- functions/evaluation/accuracy.lua: F.accuracy(y, t, {ignore_label = nil}).
--
-- y (N, C, d1, ...) scores, t (N, d1, ...) integer labels: the fraction of
-- positions where argmax over axis 1 equals t, as a 0-d Variable of y's
-- dtype (no gradient).  Positions labelled ignore_label are left out; when
-- every label is ignored the accuracy is 0.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local Variable = require 'chainer.variable'
local checks = require 'chainer.functions.loss._checks'
local H = require 'chainer.functions.math._helpers'

local M = {}
local FN = 'accuracy'
local OPTIONS = args.accept { 'ignore_label' }

function M.accuracy(y, t, opts)
  local yd, td = args.float_array(FN, 'y', y), args.int_array(FN, 't', t)
  local ignore = H.number_or_option(FN, opts, OPTIONS, 'ignore_label', nil)
  if ignore == false then ignore = nil end
  checks.labels_fit_scores(FN, yd, td)
  local pred = T.argmax(yd, { axis = 1 }):reshape(td.shape)
  local tt = td:astype('int64')
  local hit = T.eq(pred, tt)
  -- counted and divided on y's device in float64 (exact integers, then
  -- Lua's division): no value is read back to the host, so a GPU keeps
  -- going (ParallelUpdater's copies run at once), and the result has the
  -- bits of count / total rounded to y's dtype
  local count, total
  if ignore ~= nil then
    local valid = T.ne(tt, ignore)
    total = T.maximum(T.sum(valid:astype('float64')), 1)   -- all ignored: 0 / 1
    count = T.sum(T.logical_and(hit, valid):astype('float64'))
  else
    count, total = T.sum(hit:astype('float64')), math.max(tonumber(td.ptr.numel), 1)   -- no labels: 0 / 1
  end
  local acc = T.div(count, total):astype(yd.dtype)
  return Variable.new_var(acc, false)
end

return M
