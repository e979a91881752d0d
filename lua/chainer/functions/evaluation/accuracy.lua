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
  local acc
  if ignore ~= nil then
    local valid = T.ne(tt, ignore)
    local total = tonumber(T.sum(valid:astype('int64')):item())
    local count = tonumber(T.sum(T.logical_and(hit, valid):astype('int64')):item())
    acc = total == 0 and 0 or count / total
  else
    local n = tonumber(td.ptr.numel)
    acc = n == 0 and 0 or tonumber(T.sum(hit:astype('int64')):item()) / n
  end
  return Variable.new_var(T.array(acc, yd.dtype), false)
end

return M
