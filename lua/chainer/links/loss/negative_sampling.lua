-- links/loss/negative_sampling.lua: L.NegativeSampling(in_size, counts,
--   sample_size, power = 0.75, dtype)
-- W zeros (n_vocab, in_size); negatives drawn from counts^power.
-- forward(x, t, {reduce = 'sum'}).
local F = require 'chainer.functions'
local Link = require('chainer.link').Link
local args = require 'chainer._args'
local U = require 'chainer.links._util'
local I = require 'chainer.initializers'

local NegativeSampling = Link:extend('NegativeSampling')
local SIGNATURE = args.signature { 'in_size', 'counts', 'sample_size', 'power', 'dtype' }
local CALL_OPTIONS = args.accept { 'reduce' }

function NegativeSampling:init(...)
  local a = args.parse('L.NegativeSampling', SIGNATURE, select('#', ...), ...)
  self.sample_size = a.sample_size
  self.power = a.power or 0.75
  local sampler, n = U.unigram_sampler(a.counts, self.power)
  rawset(self, 'sampler', sampler)
  self.W = U.param(I.Zero(a.dtype), { n, a.in_size })
end

-- forward(x, t, {reduce = 'sum'})
function NegativeSampling:forward(x, t, opts)
  if opts ~= nil then args.options('L.NegativeSampling', opts, CALL_OPTIONS) end
  return F.negative_sampling(x, t, self.W, self.sampler, self.sample_size, opts)
end

return { NegativeSampling = NegativeSampling }
