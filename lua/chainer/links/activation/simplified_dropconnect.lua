-- links/activation/simplified_dropconnect.lua: L.SimplifiedDropconnect(in_size,
--   out_size, ratio = 0.5, nobias = false, initialW, initial_bias)
-- A Linear whose weights are dropped at random in training;
-- forward(x, train = config.train, mask = nil, use_batchwise_mask = true),
-- also forward(x, {train =, mask =, use_batchwise_mask =}).
-- L.SimplifiedDropconnect(out_size) infers in_size at the first call.
local F = require 'chainer.functions'
local config = require('chainer.config').config
local Link = require('chainer.link').Link
local args = require 'chainer._args'
local U = require 'chainer.links._util'

local SimplifiedDropconnect = Link:extend('SimplifiedDropconnect')
local SIGNATURE = args.signature { 'in_size', 'out_size', 'ratio', 'nobias', 'initialW', 'initial_bias' }
local CALL_SIGNATURE = args.signature { 'train', 'mask', 'use_batchwise_mask' }

function SimplifiedDropconnect:init(...)
  local a = args.parse('L.SimplifiedDropconnect', SIGNATURE, select('#', ...), ...)
  local in_size, out_size = a.in_size, a.out_size
  if out_size == nil then in_size, out_size = nil, in_size end
  self.in_size, self.out_size = in_size, out_size
  self.ratio = a.ratio or 0.5
  self.W = U.param(U.weight_init(a.initialW, 'SimplifiedDropconnect'), in_size and { out_size, in_size } or nil)
  if not a.nobias then self.b = U.param(U.bias_init(a.initial_bias, 'SimplifiedDropconnect'), { out_size }) end
end

function SimplifiedDropconnect:forward(x, ...)
  local train, mask, use_batchwise_mask
  if select('#', ...) > 0 then
    local a = args.parse('L.SimplifiedDropconnect', CALL_SIGNATURE, select('#', ...), ...)
    train, mask, use_batchwise_mask = a.train, a.mask, a.use_batchwise_mask
  end
  if self.W._data == nil then
    local xd = U.input_data('simplified_dropconnect', x)
    self.W:initialize({ self.out_size, tonumber(xd.ptr.numel) / xd.shape[1] })
  end
  if train == nil then train = config.train end
  if use_batchwise_mask == nil then use_batchwise_mask = true end
  if F.simplified_dropconnect == nil then
    error('SimplifiedDropconnect: F.simplified_dropconnect is not available', 2)
  end
  -- F.simplified_dropconnect takes Chainer's keyword arguments as an options table
  return F.simplified_dropconnect(x, self.W, self.b, { ratio = self.ratio, train = train, mask = mask,
    use_batchwise_mask = use_batchwise_mask })
end

return { SimplifiedDropconnect = SimplifiedDropconnect }
