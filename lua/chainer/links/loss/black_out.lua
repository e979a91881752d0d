-- links/loss/black_out.lua: L.BlackOut(in_size, counts, sample_size).
-- W (n_vocab, in_size) ~ LeCunNormal; forward(x, t) draws sample_size
-- negatives per example from counts (or uses self.sample_data when set).
local F = require 'chainer.functions'
local Link = require('chainer.link').Link
local args = require 'chainer._args'
local U = require 'chainer.links._util'
local I = require 'chainer.initializers'

local BlackOut = Link:extend('BlackOut')
local SIGNATURE = args.signature { 'in_size', 'counts', 'sample_size' }

function BlackOut:init(...)
  local a = args.parse('L.BlackOut', SIGNATURE, select('#', ...), ...)
  self.sample_size = a.sample_size
  local sampler, n = U.unigram_sampler(a.counts, 1)
  rawset(self, 'sampler', sampler)
  rawset(self, 'sample_data', nil)
  self.W = U.param(I.LeCunNormal(), { n, a.in_size })
end

function BlackOut:forward(x, t)
  local samples = rawget(self, 'sample_data')
  if samples == nil then
    samples = self.sampler:sample({ U.data(x).shape[1], self.sample_size })
  end
  return F.black_out(x, t, self.W, samples)
end

return { BlackOut = BlackOut }
