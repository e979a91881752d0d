-- examples/dcgan/updater.lua: DCGANUpdater, a StandardUpdater subclass
-- whose update_core trains the discriminator and then the generator.
--
--   DCGANUpdater{models = {gen, dis}, iterator = it,
--                optimizer = {gen = opt_gen, dis = opt_dis}, device = -1}
--
-- One step: x_real = batch / 255; z ~ U(-1, 1); x_fake = gen(z);
--   dis/loss = sum(softplus(-dis(x_real))) / B + sum(softplus(dis(x_fake))) / B
--   gen/loss = sum(softplus(-dis(x_fake))) / B
-- Both losses come from one forward pass.  The discriminator's optimizer
-- clears the gradients after the losses are computed, backpropagates
-- dis/loss and updates dis; the generator's optimizer then clears again,
-- backpropagates gen/loss through dis into gen and updates gen (the order
-- the seed relies on).
local chainer = require 'chainer'
local F = require 'chainer.functions'
local training = require 'chainer.training'

local DCGANUpdater = training.updaters.StandardUpdater:extend('DCGANUpdater')

function DCGANUpdater:init(opts)
  if type(opts) ~= 'table' or type(opts.models) ~= 'table' or opts.models[1] == nil or opts.models[2] == nil then
    error('DCGANUpdater: expected {models = {gen, dis}, iterator =, optimizer = {gen =, dis =}, device =}', 3)
  end
  local opt = opts.optimizer
  if type(opt) ~= 'table' or opt.gen == nil or opt.dis == nil then
    error('DCGANUpdater: optimizer must be a table {gen = opt_gen, dis = opt_dis}', 3)
  end
  self.gen, self.dis = opts.models[1], opts.models[2]
  -- chainlua's StandardUpdater insists on a 'main' optimizer (Chainer's
  -- does not), so it is set up with one and then given the named pair;
  -- the Trainer registers the reporter observers 'gen' and 'dis' from it.
  training.updaters.StandardUpdater.init(self, opts.iterator, opt.gen,
    { device = opts.device, converter = opts.converter })
  self._optimizers = { gen = opt.gen, dis = opt.dis }
  if opts.device ~= nil then self.dis:to_device(opts.device) end
end

function DCGANUpdater:loss_dis(dis, y_fake, y_real)
  local batchsize = y_fake.shape[1]
  local L1 = F.sum(F.softplus(-y_real)) / batchsize
  local L2 = F.sum(F.softplus(y_fake)) / batchsize
  local loss = L1 + L2
  chainer.report({ loss = loss }, dis)
  return loss
end

function DCGANUpdater:loss_gen(gen, y_fake)
  local batchsize = y_fake.shape[1]
  local loss = F.sum(F.softplus(-y_fake)) / batchsize
  chainer.report({ loss = loss }, gen)
  return loss
end

function DCGANUpdater:update_core()
  local gen_optimizer = self:get_optimizer('gen')
  local dis_optimizer = self:get_optimizer('dis')
  local it = self:get_iterator('main')
  local batch = it:next()
  local x_real = chainer.Variable(self.converter(batch, self.device)) / 255
  local gen, dis = self.gen, self.dis
  local batchsize = x_real.shape[1]

  local y_real = dis(x_real)
  local z = chainer.Variable(gen:make_hidden(batchsize))
  if self.device ~= nil and self.device ~= -1 and self.device ~= 'cpu' then z:to_device(self.device) end
  local x_fake = gen(z)
  local y_fake = dis(x_fake)

  dis_optimizer:update(function(d, yf, yr) return self:loss_dis(d, yf, yr) end, dis, y_fake, y_real)
  gen_optimizer:update(function(g, yf) return self:loss_gen(g, yf) end, gen, y_fake)
end

return DCGANUpdater
