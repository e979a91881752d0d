-- dataset/rng.lua: private random streams for shuffling and random splits.
--
-- The runtime has one Philox stream per device.  A sampler or a seeded split
-- borrows the CPU stream with its own (seed, offset) and puts the global
-- state back, so its draws depend only on its seed and on how many draws it
-- made: they are reproducible, unaffected by other random calls (dropout,
-- initializers) and can be saved and restored exactly (snapshots).
local T = require 'chainer.tensor'
local C = T.C

local M = {}

-- A fresh seed drawn from the global CPU stream, so that
-- chainer.tensor.random.seed(n) makes unseeded samplers reproducible too.
function M.fresh_seed()
  return T.random.randint(0, 2^52, { 1 }, 'int64'):item()
end

-- permutation(n, seed, offset) -> int64 tensor of 0..n-1, offset after the draw.
function M.permutation(n, seed, offset)
  local gs, go = C.ch_rng_get_seed(-1), C.ch_rng_get_offset(-1)
  C.ch_rng_set_state(-1, seed, offset or 0)
  local perm = T.random.permutation(n)
  local after = tonumber(C.ch_rng_get_offset(-1))
  C.ch_rng_set_state(-1, gs, go)
  return perm, after
end

function M.check_seed(seed, fn, level)
  if seed == nil then return nil end
  if type(seed) ~= 'number' or seed ~= math.floor(seed) or seed < 0 or seed >= 2^53 then
    error(string.format('%s: seed must be a non-negative integer below 2^53 (got %s)', fn, tostring(seed)),
      (level or 2) + 1)
  end
  return seed
end

return M
