-- links/loss/crf1d.lua: L.CRF1d(n_label, initial_cost = 0, transpose = false).
-- Parameter cost (n_label, n_label), the transition costs of a linear-chain
-- CRF.  forward(xs, ys, {reduce = 'mean'}) is F.crf1d's negative log
-- likelihood and argmax(xs) F.argmax_crf1d's best paths; xs and ys are Lua
-- lists, time-major (xs[t] is (batch, n_label)) with the batch sorted by
-- length.  transpose = true (Chainer's batch-major sequences) is refused.
local F = require 'chainer.functions'
local Link = require('chainer.link').Link
local args = require 'chainer._args'
local U = require 'chainer.links._util'
local I = require 'chainer.initializers'

local CRF1d = Link:extend('CRF1d')
local SIGNATURE = args.signature { 'n_label', 'initial_cost', 'transpose' }
local CALL_OPTIONS = args.accept { 'reduce' }

function CRF1d:init(...)
  local a = args.parse('L.CRF1d', SIGNATURE, select('#', ...), ...)
  if type(a.n_label) ~= 'number' then error('CRF1d: n_label must be a number', 3) end
  if a.transpose then
    error('CRF1d: transpose = true (batch-major sequences) is not supported; ' ..
      'pass time-major lists (see F.transpose_sequence)', 3)
  end
  local ic = a.initial_cost
  if ic == nil then ic = 0 end
  self.cost = U.param(I._get_initializer(ic, 'CRF1d'), { a.n_label, a.n_label })
end

-- forward(xs, ys, {reduce = 'mean'})
function CRF1d:forward(xs, ys, opts)
  if opts ~= nil then args.options('L.CRF1d', opts, CALL_OPTIONS) end
  return F.crf1d(self.cost, xs, ys, opts)
end

function CRF1d:argmax(xs) return F.argmax_crf1d(self.cost, xs) end

return { CRF1d = CRF1d }
