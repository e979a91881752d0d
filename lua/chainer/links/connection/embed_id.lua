-- links/connection/embed_id.lua: L.EmbedID(in_size, out_size, {initialW, ignore_label}).
-- W: (in_size, out_size), default N(0, 1) (Chainer's Normal(1.0)); ids are 0-based.
local F = require 'chainer.functions'
local Link = require('chainer.link').Link
local args = require 'chainer._args'
local U = require 'chainer.links._util'
local I = require 'chainer.initializers'

local EmbedID = Link:extend('EmbedID')
local SIGNATURE = args.signature { 'in_size', 'out_size', 'initialW', 'ignore_label' }

-- EmbedID.from_params(W, ignore_label): an EmbedID of W's shape (in_size,
-- out_size) whose table starts as a copy of W (Chainer 7).
local FROM_PARAMS = args.signature { 'W', 'ignore_label' }
function EmbedID.from_params(...)
  local fn = 'L.EmbedID.from_params'
  local a = args.parse(fn, FROM_PARAMS, select('#', ...), ...)
  local w = U.from_params_arrays(fn, a.W, nil, 2)
  return EmbedID(w.shape[1], w.shape[2], w, a.ignore_label)
end

function EmbedID:init(...)
  local a = args.parse('L.EmbedID', SIGNATURE, select('#', ...), ...)
  if type(a.in_size) ~= 'number' or type(a.out_size) ~= 'number' then
    error('EmbedID: in_size and out_size must be numbers', 3)
  end
  self.in_size, self.out_size = a.in_size, a.out_size
  self.ignore_label = a.ignore_label
  self.W = U.param(U.weight_init(a.initialW, 'EmbedID', I.Normal(1.0)), { a.in_size, a.out_size })
end

function EmbedID:printable_specs()
  return { { 'in_size', self.in_size }, { 'out_size', self.out_size }, { 'ignore_label', self.ignore_label } }
end

function EmbedID:forward(x)
  if self.ignore_label ~= nil then return F.embed_id(x, self.W, { ignore_label = self.ignore_label }) end
  return F.embed_id(x, self.W)
end

return { EmbedID = EmbedID }
