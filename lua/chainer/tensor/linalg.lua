-- tensor/linalg.lua: matrix products and small dense linear algebra.
-- matmul/dot/tensordot/outer/trace/gemm go to OpenBLAS (runtime/cpu/blas.c),
-- inv/det/solve/cholesky to the LAPACK inside OpenBLAS (runtime/cpu/lapack.c);
-- fft/ifft to runtime/cpu/fft.c.
local M = require 'chainer.tensor.core'
local ffi, C, check = M.ffi, M.C, M.check
local wrap, box, as_tensor = M.wrap, M.box, M.as_tensor
local methods = M.methods

local function flag(v) return (v and v ~= 0) and 1 or 0 end

-- matmul(a, b, {transa = bool, transb = bool}): NumPy matmul; transa/transb
-- transpose the last two axes of a/b without copying.
function M.matmul(a, b, opts)
  a, b = as_tensor(a), as_tensor(b)
  local ta, tb = 0, 0
  if opts ~= nil then ta, tb = flag(opts.transa), flag(opts.transb) end
  check(C.ch_matmul(a.ptr, b.ptr, ta, tb, box), 2)
  return wrap(box[0])
end
methods.matmul = M.matmul

-- gemm(c, a, b, {alpha = 1, beta = 0, transa, transb}): c = alpha*op(a)@op(b) + beta*c
-- in place on a 2-D float tensor c; returns c.
function M.gemm(c, a, b, opts)
  a, b = as_tensor(a, c.dtype), as_tensor(b, c.dtype)
  local alpha, beta, ta, tb = 1, 0, 0, 0
  if opts ~= nil then
    if opts.alpha ~= nil then alpha = opts.alpha end
    if opts.beta ~= nil then beta = opts.beta end
    ta, tb = flag(opts.transa), flag(opts.transb)
  end
  check(C.ch_gemm(ta, tb, alpha, a.ptr, b.ptr, beta, c.ptr), 2)
  return c
end
methods.gemm_ = M.gemm

-- numpy.dot
M.dot = M.binary_kernel(C.ch_dot)
methods.dot = M.dot

local axes_a_buf = ffi.new('int32_t[16]')
local axes_b_buf = ffi.new('int32_t[16]')

-- tensordot(a, b, axes): axes = n (last n of a with first n of b, default 2),
-- {{axes of a}, {axes of b}}, or {axis_a, axis_b}.
function M.tensordot(a, b, axes)
  a, b = as_tensor(a), as_tensor(b)
  if axes == nil then axes = 2 end
  local n
  if type(axes) == 'number' then
    n = axes
    if n ~= math.floor(n) or n < 0 or n > a.ndim or n > b.ndim or n > 16 then
      error(string.format('tensordot: axes = %s does not fit a %d-d and a %d-d tensor', tostring(axes), a.ndim, b.ndim), 2)
    end
    for i = 0, n - 1 do
      axes_a_buf[i] = a.ndim - n + i
      axes_b_buf[i] = i
    end
  elseif type(axes) == 'table' and #axes == 2 then
    local xa, xb = axes[1], axes[2]
    if type(xa) == 'number' then xa = { xa } end
    if type(xb) == 'number' then xb = { xb } end
    if type(xa) ~= 'table' or type(xb) ~= 'table' or #xa ~= #xb or #xa > 16 then
      error('tensordot: axes must be {{axes of a}, {axes of b}} with the same number of entries', 2)
    end
    n = #xa
    for i = 1, n do
      axes_a_buf[i - 1] = xa[i]
      axes_b_buf[i - 1] = xb[i]
    end
  else
    error(string.format('tensordot: axes must be an integer or {{axes of a}, {axes of b}} (got %s)', tostring(axes)), 2)
  end
  check(C.ch_tensordot(a.ptr, b.ptr, axes_a_buf, axes_b_buf, n, box), 2)
  return wrap(box[0])
end
methods.tensordot = M.tensordot

-- numpy.outer: the flattened a times the flattened b, as a matrix.
M.outer = M.binary_kernel(C.ch_outer)
methods.outer = M.outer

-- numpy.trace: the sum of the main diagonal (over the first two axes).
M.trace = M.unary_kernel(C.ch_trace)
methods.trace = M.trace

-- inv, det, solve work on the last two axes and batch over the rest.
M.inv = M.unary_kernel(C.ch_inv)
methods.inv = M.inv

M.det = M.unary_kernel(C.ch_det)
methods.det = M.det

-- cholesky(x): the lower triangular L with L L^T = x (x's lower triangle
-- is read), for each matrix on the last two axes.
M.cholesky = M.unary_kernel(C.ch_cholesky)
methods.cholesky = M.cholesky

-- fft(real, imag) -> real, imag: numpy.fft.fft of real + i imag over the
-- last axis (any length); ifft the inverse, divided by n.  Computed in
-- float64, returned in the inputs' float dtype.
local two = ffi.new('ch_tensor*[2]')
local function fourier(inverse)
  return function(real, imag)
    real, imag = as_tensor(real), as_tensor(imag)
    check(C.ch_fft(real.ptr, imag.ptr, inverse, two, two + 1), 2)
    return wrap(two[0]), wrap(two[1])
  end
end
M.fft, M.ifft = fourier(0), fourier(1)

-- solve(a, b): x with a @ x = b; b is (..., n) or (..., n, k).
M.solve = M.binary_kernel(C.ch_solve)
methods.solve = M.solve

return M
