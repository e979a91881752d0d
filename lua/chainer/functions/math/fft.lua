-- functions/math/fft.lua: F.fft and F.ifft, Chainer's discrete Fourier
-- transforms over the last axis of a complex array held as a pair
-- {real, imag} (any length; ifft divides by n, as NumPy).  They return
-- real, imag.  Both are linear, and the gradient of each is the same
-- transform applied to the swapped pair {gimag, greal}, whose output comes
-- back swapped: FFT(swap(g)) = swap(conj(F) g), the adjoint.  So the
-- gradient is differentiable to any order.
local T = require 'chainer.tensor'
local args = require 'chainer._args'
local FunctionNode = require 'chainer.function_node'

local M = {}

local FFT = FunctionNode:extend('FFT')
M.FFT = FFT

function FFT:forward(inputs)
  local f = self.inverse and T.ifft or T.fft
  local yr, yi = f(inputs[1], inputs[2])
  return { yr, yi }
end

function FFT:backward(idx, gys)
  local gr, gi = gys[1], gys[2]
  -- (an output without a gradient contributes zeros)
  if gr == nil then gr = T.zeros_like(gi.array) end
  if gi == nil then gi = T.zeros_like(gr.array) end
  local out = setmetatable({ inverse = self.inverse }, FFT):apply({ gi, gr })
  return { out[2], out[1] }
end

local function transform(name, inverse)
  return function(x, imag)
    local real = x
    if imag == nil then
      if type(x) ~= 'table' or T.is_tensor(x) or x._is_variable or #x ~= 2 then
        error(string.format('%s: x must be a pair {real, imag} of Variables or tensors (got %s)', name,
          T.is_tensor(x) and 'a tensor' or (type(x) == 'table' and x._is_variable) and 'a Variable' or type(x)), 2)
      end
      real, imag = x[1], x[2]
    end
    local r = args.float_array(name, 'real', real, 2)
    local i = args.float_array(name, 'imag', imag, 2)
    if r.dtype ~= i.dtype then
      error(string.format('%s: real and imag must have one dtype (got %s and %s)', name, r.dtype, i.dtype), 2)
    end
    if r.ptr.nd < 1 then error(name .. ': real and imag must have at least one axis (got 0-d)', 2) end
    local rs, is = r.shape, i.shape
    local same = #rs == #is
    for k = 1, #rs do same = same and rs[k] == is[k] end
    if not same then
      error(string.format('%s: real and imag must have one shape (got %s and %s)', name, T.shape_str(rs),
        T.shape_str(is)), 2)
    end
    local ys = setmetatable({ inverse = inverse }, FFT):apply({ real, imag })
    return ys[1], ys[2]
  end
end

-- F.fft({real, imag}) -> real, imag (also F.fft(real, imag))
M.fft = transform('fft', false)
-- F.ifft({real, imag}) -> real, imag: the inverse, divided by n
M.ifft = transform('ifft', true)

return M
