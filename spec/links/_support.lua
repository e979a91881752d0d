-- Shared check for the link specs: a link computes what the function it
-- wraps computes with the link's own parameters, forward and backward.
local chainer = require 'chainer'
local close = require('helpers').close
local T = chainer.tensor

local M = {}

-- c.link(xv): the link applied to a Variable of c.x; c.fn(xv, P1, P2, ...):
-- the function applied to another Variable of c.x and to Variables holding
-- copies of c.params (the link's Parameters, in the function's order).
-- Checks that the two outputs agree within c.tol and, after backward from
-- one random output gradient, that the gradients w.r.t. x and each
-- parameter agree within c.grad_tol (default c.tol).  Returns the link's
-- output, for checks by hand.
function M.check_same_as_function(c)
  local grad_tol = c.grad_tol or c.tol
  local xv, xv2 = chainer.Variable(c.x), chainer.Variable(c.x)
  local y = c.link(xv)
  local copies = {}
  for i, p in ipairs(c.params) do copies[i] = chainer.Variable(p.array:copy()) end
  local y2 = c.fn(xv2, unpack(copies))
  close(y, y2, c.tol)
  local gy = T.random.uniform(-1, 1, y.shape, 'float64')
  y.grad = gy
  y:backward()
  y2.grad = gy
  y2:backward()
  close(xv.grad, xv2.grad, grad_tol)
  for i, p in ipairs(c.params) do close(p.grad, copies[i].grad, grad_tol) end
  return y
end

return M
