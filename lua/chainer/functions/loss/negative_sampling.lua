-- functions/loss/negative_sampling.lua:
--   F.negative_sampling(x, t, W, sampler, sample_size,
--                       {reduce = 'sum', return_samples = false})
--
-- x (B, D) hidden vectors, t (B,) integer target ids (-1: ignored), W
-- (V, D) output embeddings.  sampler(shape) returns int ids of the given
-- shape: a function, or an object with a :sample(shape) method such as
-- chainer.utils.WalkerAlias.  For every row, sample_size negatives are
-- drawn and
--   loss = softplus(-W[t]·x) + sum_k softplus(W[neg_k]·x),
-- summed over the batch ('sum') or per row (B,) ('no'; 0 for ignored
-- rows).  With return_samples = true the (B, sample_size + 1) int32 ids
-- (column 0 = t) are returned as a second value.  Composed of
-- FunctionNodes: differentiable in x and W, double backprop works.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local Variable = require 'chainer.variable'
local checks = require 'chainer.functions.loss._checks'
local U = require 'chainer.functions.loss._nodes'

local M = {}
local FN = 'negative_sampling'
local SIGNATURE = args.signature { 'reduce', 'return_samples' }

local function draw(sampler, shape)
  if type(sampler) == 'function' then return sampler(shape) end
  if type(sampler) == 'table' and type(sampler.sample) == 'function' then return sampler:sample(shape) end
  if type(sampler) == 'table' and getmetatable(sampler) and getmetatable(sampler).__call then return sampler(shape) end
  error(string.format('%s: sampler must be a function of a shape or an object with :sample(shape) (got %s)', FN,
    type(sampler)), 3)
end

function M.negative_sampling(x, t, W, sampler, sample_size, opts)
  local xd, td, wd = args.float_array(FN, 'x', x), args.int_array(FN, 't', t), args.array(FN, 'W', W)
  local b, d = checks.embedding_batch(FN, xd, td, wd)
  if type(sample_size) ~= 'number' or sample_size < 0 or sample_size ~= math.floor(sample_size) then
    error(string.format('%s: sample_size must be a non-negative integer (got %s)', FN, tostring(sample_size)), 2)
  end
  local o = args.parse(FN, SIGNATURE, 1, opts)
  local red = checks.reduce(FN, o.reduce, 'sum', { 'sum', 'no' })
  local v = wd.shape[1]
  checks.labels(FN, 't', td, v, -1)
  local samples = Variable.as_array(draw(sampler, { b, sample_size + 1 }))
  if not T.is_tensor(samples) or #samples.shape ~= 2 or samples.shape[1] ~= b or samples.shape[2] ~= sample_size + 1 then
    error(string.format('%s: the sampler must return an integer tensor of shape (%d, %d)', FN, b, sample_size + 1), 2)
  end
  samples = samples:astype('int32'):copy()
  local valid = T.ne(td, -1)
  -- column 0 holds the targets (0 for ignored rows; they are masked out)
  samples:slice({}, 0):copy_(T.where(valid, td:astype('int32'), 0):astype('int32'))
  checks.labels(FN, 'samples', samples, v)
  local w = U.gather_rows(W, samples:astype('int64'))            -- (B, S+1, D)
  local xb = U.F('broadcast_to')(U.F('reshape')(x, { b, 1, d }), { b, sample_size + 1, d })
  local wx = U.F('sum')(w * xb, { axis = 2 })                    -- (B, S+1)
  local sign = T.ones({ 1, sample_size + 1 }, xd.dtype)
  sign:slice({}, 0):fill_(-1)
  local per = U.F('sum')(U.softplus(wx * sign), { axis = 1 }) * valid:astype(xd.dtype)
  local loss = red == 'sum' and U.F('sum')(per) or per
  if o.return_samples then return loss, samples end
  return loss
end

return M
