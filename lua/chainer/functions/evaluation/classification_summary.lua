-- functions/evaluation/classification_summary.lua:
--   F.classification_summary(y, t, {label_num = nil, beta = 1.0, ignore_label = -1})
--     -> precision, recall, fbeta, support
--   F.precision(y, t, opts) -> precision, support
--   F.recall(y, t, opts)    -> recall, support
--   F.fbeta_score(y, t, opts) -> fbeta, support
--   F.f1_score(y, t, opts)  -> f1, support
--
-- y (N, C, ...) scores, t (N, ...) integer labels; the prediction is the
-- argmax over axis 1.  Per class c in 0..label_num-1 (label_num defaults to
-- max(t) + 1): support = #{t = c}, precision = tp / #{pred = c}, recall =
-- tp / support, fbeta = (1 + beta^2) p r / (beta^2 p + r).  A 0/0 gives
-- NaN, as in Chainer.  Positions labelled ignore_label are left out.
-- precision, recall and fbeta are Variables of y's dtype, support an int64
-- Variable; none has a gradient.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local Variable = require 'chainer.variable'
local checks = require 'chainer.functions.loss._checks'

local M = {}

local OPTIONS = args.accept { 'label_num', 'beta', 'ignore_label' }
local F1_OPTIONS = args.accept { 'label_num', 'ignore_label' } -- beta is 1

local function summary(fn, y, t, opts)
  local yd, td = args.float_array(fn, 'y', y, 3), args.int_array(fn, 't', t, 3)
  local o = args.options(fn, opts, OPTIONS, 3)
  checks.labels_fit_scores(fn, yd, td, 3)
  local ignore = o.ignore_label
  if ignore == nil then ignore = -1 end
  local beta = o.beta or 1.0
  local tl = td:astype('int64'):reshape(-1):totable()
  local pl = T.argmax(yd, { axis = 1 }):reshape(-1):totable()
  local k = o.label_num
  if k == nil or k == false then
    k = 0
    for i = 1, #tl do if tl[i] ~= ignore and tl[i] + 1 > k then k = tl[i] + 1 end end
  end
  if type(k) ~= 'number' or k < 0 or k ~= math.floor(k) then
    error(string.format('%s: label_num must be a non-negative integer (got %s)', fn, tostring(k)), 3)
  end
  local support, relevant, tp = {}, {}, {}
  for c = 1, k do support[c], relevant[c], tp[c] = 0, 0, 0 end
  for i = 1, #tl do
    local tv = tl[i]
    if tv ~= ignore then
      if tv < 0 or tv >= k then
        error(string.format('%s: label t[%d] (flat position) is %d, out of range for label_num %d', fn, i - 1, tv, k), 3)
      end
      local pv = pl[i]
      support[tv + 1] = support[tv + 1] + 1
      if pv < k then relevant[pv + 1] = relevant[pv + 1] + 1 end
      if pv == tv then tp[tv + 1] = tp[tv + 1] + 1 end
    end
  end
  local prec, rec, fb = {}, {}, {}
  local b2 = beta * beta
  for c = 1, k do
    local p, r = tp[c] / relevant[c], tp[c] / support[c]
    prec[c], rec[c] = p, r
    fb[c] = (1 + b2) * p * r / (b2 * p + r)
  end
  local dt = yd.dtype
  local function v(list, dtype)
    if k == 0 then return Variable.new_var(T.zeros({ 0 }, dtype), false) end
    return Variable.new_var(T.array(list, dtype), false)
  end
  return v(prec, dt), v(rec, dt), v(fb, dt), v(support, 'int64')
end

function M.classification_summary(y, t, opts)
  return summary('classification_summary', y, t, opts)
end

-- precision, recall, fbeta_score: result `which` of the summary (1, 2 or
-- 3), with the support.
local function one_score(fn, which)
  return function(y, t, opts)
    local results = { summary(fn, y, t, opts) }
    return results[which], results[4]
  end
end
M.precision = one_score('precision', 1)
M.recall = one_score('recall', 2)
M.fbeta_score = one_score('fbeta_score', 3)

function M.f1_score(y, t, opts)
  local o = args.options('f1_score', opts, F1_OPTIONS)
  local _, _, f, s = summary('f1_score', y, t, { label_num = o.label_num, ignore_label = o.ignore_label, beta = 1.0 })
  return f, s
end

return M
