-- examples/dcgan/net.lua: the generator and discriminator of Chainer's
-- DCGAN example.
--
-- Generator(n_hidden, {bottom_width = 4, ch = 512, wscale = 0.02, out_ch = 3}):
--   z (N, n_hidden[, 1, 1]) -> Linear -> BN -> relu -> (N, ch, 4, 4)
--   -> three stride-2 Deconvolution2D (each BN + relu), halving the
--   channels: 8x8, 16x16, 32x32 -> 3x3 Deconvolution2D -> sigmoid:
--   images (N, out_ch, 32, 32) in [0, 1].
-- Discriminator({bottom_width = 4, ch = 512, wscale = 0.02, in_ch = 3}):
--   pairs of 3x3 (stride 1) and 4x4 (stride 2) Convolution2D, with
--   BatchNormalization (no gamma) after all but the first, leaky_relu and
--   Gaussian noise (sigma 0.2, training only) after each; Linear -> one
--   logit per image (N, 1).
-- ch = 512 is the seed's width (for 3x32x32 CIFAR-10 on a GPU);
-- train_dcgan.lua takes --ch to make both nets narrower on a CPU.
local chainer = require 'chainer'
local T = chainer.tensor
local F = require 'chainer.functions'
local L = require 'chainer.links'
local I = require 'chainer.initializers'
local config = require('chainer.config').config

local M = {}

-- h + sigma * N(0, 1) in training mode; h itself otherwise.
local function add_noise(h, sigma)
  if not config.train then return h end
  local noise = T.random.normal(0, sigma or 0.2, h.shape, h.dtype, h.device)
  return h + noise
end
M.add_noise = add_noise

local Generator = chainer.Chain:extend('Generator')
function Generator:init(n_hidden, opts)
  opts = opts or {}
  local bw, ch = opts.bottom_width or 4, opts.ch or 512
  local w = I.Normal(opts.wscale or 0.02)
  rawset(self, 'n_hidden', n_hidden)
  rawset(self, 'ch', ch)
  rawset(self, 'bottom_width', bw)
  self.l0 = L.Linear(n_hidden, bw * bw * ch, { initialW = w })
  self.dc1 = L.Deconvolution2D(ch, ch / 2, 4, { stride = 2, pad = 1, initialW = w })
  self.dc2 = L.Deconvolution2D(ch / 2, ch / 4, 4, { stride = 2, pad = 1, initialW = w })
  self.dc3 = L.Deconvolution2D(ch / 4, ch / 8, 4, { stride = 2, pad = 1, initialW = w })
  self.dc4 = L.Deconvolution2D(ch / 8, opts.out_ch or 3, 3, { stride = 1, pad = 1, initialW = w })
  self.bn0 = L.BatchNormalization(bw * bw * ch)
  self.bn1 = L.BatchNormalization(ch / 2)
  self.bn2 = L.BatchNormalization(ch / 4)
  self.bn3 = L.BatchNormalization(ch / 8)
end

-- make_hidden(batchsize): z ~ U(-1, 1), shape (batchsize, n_hidden, 1, 1).
function Generator:make_hidden(batchsize)
  return T.random.uniform(-1, 1, { batchsize, self.n_hidden, 1, 1 }, T.default_float)
end

function Generator:forward(z)
  local n = z.shape[1]
  local h = F.reshape(F.relu(self.bn0(self.l0(z))), { n, self.ch, self.bottom_width, self.bottom_width })
  h = F.relu(self.bn1(self.dc1(h)))
  h = F.relu(self.bn2(self.dc2(h)))
  h = F.relu(self.bn3(self.dc3(h)))
  return F.sigmoid(self.dc4(h))
end
M.Generator = Generator

local Discriminator = chainer.Chain:extend('Discriminator')
function Discriminator:init(opts)
  opts = opts or {}
  local bw, ch = opts.bottom_width or 4, opts.ch or 512
  local w = I.Normal(opts.wscale or 0.02)
  local function conv(i, o, k, s, p) return L.Convolution2D(i, o, k, { stride = s, pad = p, initialW = w }) end
  self.c0_0 = conv(opts.in_ch or 3, ch / 8, 3, 1, 1)
  self.c0_1 = conv(ch / 8, ch / 4, 4, 2, 1)
  self.c1_0 = conv(ch / 4, ch / 4, 3, 1, 1)
  self.c1_1 = conv(ch / 4, ch / 2, 4, 2, 1)
  self.c2_0 = conv(ch / 2, ch / 2, 3, 1, 1)
  self.c2_1 = conv(ch / 2, ch / 1, 4, 2, 1)
  self.c3_0 = conv(ch / 1, ch / 1, 3, 1, 1)
  self.l4 = L.Linear(bw * bw * ch, 1, { initialW = w })
  local nogamma = { use_gamma = false }
  self.bn0_1 = L.BatchNormalization(ch / 4, nogamma)
  self.bn1_0 = L.BatchNormalization(ch / 4, nogamma)
  self.bn1_1 = L.BatchNormalization(ch / 2, nogamma)
  self.bn2_0 = L.BatchNormalization(ch / 2, nogamma)
  self.bn2_1 = L.BatchNormalization(ch / 1, nogamma)
  self.bn3_0 = L.BatchNormalization(ch / 1, nogamma)
end

function Discriminator:forward(x)
  local lrelu = F.leaky_relu
  local h = add_noise(x)
  h = lrelu(add_noise(self.c0_0(h)))
  h = lrelu(add_noise(self.bn0_1(self.c0_1(h))))
  h = lrelu(add_noise(self.bn1_0(self.c1_0(h))))
  h = lrelu(add_noise(self.bn1_1(self.c1_1(h))))
  h = lrelu(add_noise(self.bn2_0(self.c2_0(h))))
  h = lrelu(add_noise(self.bn2_1(self.c2_1(h))))
  h = lrelu(add_noise(self.bn3_0(self.c3_0(h))))
  return self.l4(h)
end
M.Discriminator = Discriminator

return M
