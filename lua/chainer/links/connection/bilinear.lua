-- links/connection/bilinear.lua: L.Bilinear(left_size, right_size, out_size,
--   nobias = false, initialW, initial_bias = {V1, V2, b}).
-- W: (J, K, L); V1: (J, L); V2: (K, L); b: (L).  forward(e1, e2).
local F = require 'chainer.functions'
local Link = require('chainer.link').Link
local args = require 'chainer._args'
local U = require 'chainer.links._util'

local Bilinear = Link:extend('Bilinear')
local SIGNATURE = args.signature { 'left_size', 'right_size', 'out_size', 'nobias', 'initialW', 'initial_bias' }

function Bilinear:init(...)
  local a = args.parse('L.Bilinear', SIGNATURE, select('#', ...), ...)
  local J, K, L = a.left_size, a.right_size, a.out_size
  if type(J) ~= 'number' or type(K) ~= 'number' or type(L) ~= 'number' then
    error('Bilinear: left_size, right_size and out_size must be numbers', 3)
  end
  self.in_sizes = { J, K }
  self.out_size = L
  self.nobias = a.nobias and true or false
  self.W = U.param(U.weight_init(a.initialW, 'Bilinear'), { J, K, L })
  if not self.nobias then
    local V1, V2, b
    if a.initial_bias ~= nil then
      if type(a.initial_bias) ~= 'table' or #a.initial_bias ~= 3 then
        error('Bilinear: initial_bias must be a list of three initializers {V1, V2, b}', 3)
      end
      V1, V2, b = a.initial_bias[1], a.initial_bias[2], a.initial_bias[3]
    end
    self.V1 = U.param(U.weight_init(V1, 'Bilinear'), { J, L })
    self.V2 = U.param(U.weight_init(V2, 'Bilinear'), { K, L })
    self.b = U.param(U.bias_init(b, 'Bilinear'), { L })
  end
end

function Bilinear:forward(e1, e2)
  if self.nobias then return F.bilinear(e1, e2, self.W) end
  return F.bilinear(e1, e2, self.W, self.V1, self.V2, self.b)
end

return { Bilinear = Bilinear }
