-- Stable sort / argsort and unique on a real GPU (issue 15), compared with
-- the CPU bit for bit (a stable sort's result is unique; NaN last
-- ascending, first descending).  Tagged `gpu`: run without a GPU it
-- reports one pending line.
--
-- NOTE: written without access to a GPU and not yet run on one; the
-- kernels' per-item code runs emulated in tests/cuda/test_sort.cu.
local T = require 'chainer.tensor'

local G = require 'cuda.helpers'
local agree, rand = G.agree, G.rand
local R = T.random

local DTYPES = { 'bool', 'int8', 'uint8', 'int16', 'int32', 'int64', 'float16', 'float32', 'float64' }

describe('sort and unique on a GPU #gpu', function()
  if G.without_gpu('sort') then return end

  before_each(function() R.seed(8) end)

  -- many ties, and NaNs for the float dtypes
  local function keys(dt, shape)
    local x = rand(dt, shape, -4, 4)
    if dt:find('^float') then
      x = (x * 2):floor() / 2
      x = T.where(rand('bool', shape), x, T.full(shape, 0 / 0, dt))
    end
    return x
  end

  it('sort and argsort agree with the CPU along every axis, both orders, strided input', function()
    for _, dt in ipairs(DTYPES) do
      local x = keys(dt, { 5, 37, 6 }):transpose({ 1, 0, 2 })
      for axis = 0, 2 do
        for _, desc in ipairs({ false, true }) do
          local o = { axis = axis, descending = desc }
          local what = string.format('%s axis %d %s', dt, axis, desc and 'descending' or 'ascending')
          agree(T.sort(x:to_gpu(), o), T.sort(x, o), 'sort ' .. what, 1, true)
          agree(T.argsort(x:to_gpu(), o), T.argsort(x, o), 'argsort ' .. what, 1, true)
        end
      end
      agree(T.sort(x:to_gpu(), { axis = false }), T.sort(x, { axis = false }), 'sort flat ' .. dt, 1, true)
    end
  end)

  it('unique with inverse and counts agrees with the CPU', function()
    for _, dt in ipairs(DTYPES) do
      local x = keys(dt, { 50, 101 }):flip(1)
      local v, i, c = T.unique(x, { return_inverse = true, return_counts = true })
      local gv, gi, gc = T.unique(x:to_gpu(), { return_inverse = true, return_counts = true })
      agree(gv, v, 'unique values ' .. dt, 1, true)
      agree(gi, i, 'unique inverse ' .. dt, 1, true)
      agree(gc, c, 'unique counts ' .. dt, 1, true)
    end
  end)
end)
