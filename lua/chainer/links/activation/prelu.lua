-- links/activation/prelu.lua: L.PReLU(shape = {}, init = 0.25).
-- y = max(x, W*x) with W (of `shape`) broadcast from axis 1.
local F = require 'chainer.functions'
local Link = require('chainer.link').Link
local args = require 'chainer._args'
local U = require 'chainer.links._util'
local I = require 'chainer.initializers'

local PReLU = Link:extend('PReLU')
local SIGNATURE = args.signature { 'shape', 'init' }

function PReLU:init(...)
  local a = args.parse('L.PReLU', SIGNATURE, select('#', ...), ...)
  local shape = a.shape or {}
  if type(shape) == 'number' then shape = { shape } end
  self.W = U.param(I._get_initializer(a.init == nil and 0.25 or a.init, 'PReLU'), shape)
end

function PReLU:forward(x) return F.prelu(x, self.W) end

return { PReLU = PReLU }
