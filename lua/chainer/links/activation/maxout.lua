-- links/activation/maxout.lua: L.Maxout(in_size, out_size, pool_size, initialW,
--   initial_bias = 0)
-- Child linear = Linear(in_size, out_size * pool_size) (no bias when
-- initial_bias is false); y = the maximum over each group of pool_size.
local F = require 'chainer.functions'
local Chain = require('chainer.link').Chain
local Linear = require('chainer.links.connection.linear').Linear
local args = require 'chainer._args'

local Maxout = Chain:extend('Maxout')
local SIGNATURE = args.signature { 'in_size', 'out_size', 'pool_size', 'initialW', 'initial_bias' }

function Maxout:init(...)
  local a = args.parse('L.Maxout', SIGNATURE, select('#', ...), ...)
  if type(a.out_size) ~= 'number' or type(a.pool_size) ~= 'number' then
    error('Maxout: out_size and pool_size must be numbers', 3)
  end
  self.out_size, self.pool_size = a.out_size, a.pool_size
  local ib = a.initial_bias
  if ib == nil then ib = 0 end
  self.linear = Linear(a.in_size, a.out_size * a.pool_size,
    { nobias = ib == false, initialW = a.initialW, initial_bias = ib ~= false and ib or nil })
end

function Maxout:forward(x) return F.maxout(self.linear(x), self.pool_size) end

return { Maxout = Maxout }
