-- Specs for F.shift: channel groups moved by their window offsets (centre
-- group last), zero fill, dilate, gradients, errors.
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local function_spec = require 'chainer.testing.function_spec'
local R = dofile('spec/functions/connection/conv_reference.lua')

-- group i of ng = kh*kw moves by (ky*dy, kx*dx); the centre and last
-- groups swap offsets; the last group takes the remaining channels
local function ref(x, kh, kw, dy, dx)
  local v = x:totable()
  local N, C, H, W = unpack(x.shape)
  local ng = kh * kw
  local gs = math.floor(C / ng)
  local y = {}
  for n = 1, N do
    y[n] = {}
    for c = 0, C - 1 do
      local i = math.min(math.floor(c / math.max(gs, 1)), ng - 1)
      if gs == 0 then i = ng - 1 end
      local gi = i
      if gi == math.floor((ng - 1) / 2) then gi = ng - 1 elseif gi == ng - 1 then gi = math.floor((ng - 1) / 2) end
      local ky, kx = math.floor(gi / kw) - math.floor(kh / 2), gi % kw - math.floor(kw / 2)
      local plane = {}
      for h = 1, H do
        plane[h] = {}
        for w = 1, W do
          local sh, sw = h - ky * dy, w - kx * dx
          plane[h][w] = (sh >= 1 and sh <= H and sw >= 1 and sw <= W) and v[n][c + 1][sh][sw] or 0
        end
      end
      y[n][c + 1] = plane
    end
  end
  return T.array(y, x.dtype)
end

function_spec.describe('F.shift', {
  fn = function(x) return F.shift(x) end,
  inputs = function(dt) return { T.random.uniform(-1, 1, { 2, 10, 3, 4 }, dt) } end,
  reference = function(x) return ref(x, 3, 3, 1, 1) end,
  double_backward = true,
})

function_spec.describe('F.shift ksize (3, 5) dilate 2', {
  fn = function(x) return F.shift(x, { ksize = { 3, 5 }, dilate = 2 }) end,
  inputs = function(dt) return { T.random.uniform(-1, 1, { 1, 16, 5, 6 }, dt) } end,
  reference = function(x) return ref(x, 3, 5, 2, 2) end,
})

describe('F.shift', function()
  it('moves a one-hot image of group 0 down-right by one', function()
    local x = T.zeros({ 1, 9, 3, 3 }, 'float64')
    x:set(0, 0, 1, 1, 1.0)
    local y = F.shift(x).array
    -- group 0 has offset (-1, -1): y[h, w] = x[h + 1, w + 1]
    assert.equal(1, y:get(0, 0, 0, 0))
    assert.equal(1, T.sum(y):item())
  end)

  it('rejects bad arguments with clear messages', function()
    R.errors_with(function() F.shift(T.ones({ 1, 9, 3, 3 }), { ksize = 2 }) end, 'shift', 'odd')
    R.errors_with(function() F.shift(T.ones({ 9, 3, 3 })) end, 'shift', 'x must be 4-d')
    R.errors_with(function() F.shift(T.ones({ 1, 9, 3, 3 }), { dilate = 0 }) end, 'shift', 'dilate')
  end)
end)
