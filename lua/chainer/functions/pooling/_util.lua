-- functions/pooling/_util.lua: argument checks and the four linear window
-- nodes every pooling function is made of (not exported into F).
--
--   WindowPool    y[o] = sum / mean of x over window o        (average pooling)
--   WindowSpread  its adjoint: gy[o] spread over window o     (its gradient, unpooling)
--   IndexScatter  g[o] added at window cell indexes[o]        (max pooling's gradient, upsampling)
--   IndexGather   its adjoint: x read at window cell indexes[o]
--
-- Each one's backward is the other of its pair, so gradients of any order
-- work.  The C kernels are runtime/cpu/pooling.c.
local ffi = require 'ffi'
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local args = require 'chainer._args'
local Window = require 'chainer.functions._window'

local C, check, box, wrap = T.C, T.check, T.box, T.wrap

local U = {}

local box2 = ffi.new('ch_tensor*[1]')
local i64 = Window.i64

-- The pooling kernels (ROI ones too) take float32 / float64: float16 runs
-- through float32 and is rounded back.
local function f32(x)
  if x.dtype == 'float16' then return x:astype('float32'), 'float16' end
  return x, nil
end
local function back(y, dt) if dt then return y:astype(dt) end return y end

-- The kernel call call(x) (returning the C status, its result in T.box) on
-- x so converted; the result in x's dtype.  Errors blame the caller of the
-- function calling compute (which must not tail-call it: `return (...)`).
function U.compute(x, call)
  local xx, dt = f32(x)
  check(call(xx), 4)
  return back(wrap(box[0]), dt)
end

-- ---- arguments --------------------------------------------------------
-- x must be a float (N, C, *nsp) tensor.
function U.check_x(fn, x, nsp, level)
  local d = args.float_array(fn, 'x', x, (level or 2) + 1)
  if nsp and d.ndim ~= nsp + 2 then
    error(string.format('%s: x must be %d-d (N, C, %d spatial axes), got %d-d with shape %s', fn, nsp + 2, nsp,
      d.ndim, T.shape_str(d.shape)), (level or 2) + 1)
  end
  if not nsp and d.ndim < 3 then
    error(string.format('%s: x must have at least 3 dimensions (N, C, spatial...), got %d-d', fn, d.ndim),
      (level or 2) + 1)
  end
  return d
end

-- ksize, stride (default ksize), pad (default 0) for nsp axes.
function U.geometry(fn, o, nsp, level)
  level = (level or 2) + 1
  if o.ksize == nil then error(string.format('%s: ksize is required', fn), level) end
  local k = Window.tuple(fn, 'ksize', o.ksize, nsp, nil, 1, level)
  local s = (o.stride == nil or o.stride == false) and k or Window.tuple(fn, 'stride', o.stride, nsp, nil, 1, level)
  local p = Window.tuple(fn, 'pad', o.pad, nsp, 0, 0, level)
  return k, s, p
end

-- The window geometry of pooling an input of `shape` (nsp spatial axes)
-- with ksize k, stride s and pad p: output sizes in floor mode, or in ceil
-- mode with cover_all; an empty output is an error.
function U.pooling_geometry(fn, shape, nsp, k, s, p, cover_all, level)
  local in_size, out_size = {}, {}
  for i = 1, nsp do
    in_size[i] = shape[i + 2]
    out_size[i] = Window.outsize(in_size[i], k[i], s[i], p[i], cover_all)
    if out_size[i] < 1 then
      error(string.format('%s: the output would be empty on spatial axis %d (size %d, ksize %d, stride %d, pad %d)',
        fn, i - 1, in_size[i], k[i], s[i], p[i]), (level or 2) + 1)
    end
  end
  return { nsp = nsp, k = k, s = s, p = p, in_size = in_size, out_size = out_size }
end

-- ---- kernels -----------------------------------------------------------
-- geo: { nsp, k, s, p, in_size, out_size } (Lua arrays of spatial sizes)
function U.max_pool(x, geo)
  local xx, dt = f32(x)
  check(C.ch_max_pool_forward(xx.ptr, geo.nsp, i64(1, geo.k), i64(2, geo.s), i64(3, geo.p), i64(4, geo.out_size),
    box, box2), 3)
  local y, ix = wrap(box[0]), wrap(box2[0])
  return back(y, dt), ix
end

function U.scatter(g, ix, geo)
  return (U.compute(g, function(gg)
    return C.ch_max_pool_scatter(gg.ptr, ix.ptr, geo.nsp, i64(1, geo.k), i64(2, geo.s), i64(3, geo.p),
      i64(4, geo.in_size), box)
  end))
end

function U.gather(x, ix, geo)
  return (U.compute(x, function(xx)
    return C.ch_max_pool_gather(xx.ptr, ix.ptr, geo.nsp, i64(1, geo.k), i64(2, geo.s), i64(3, geo.p), box)
  end))
end

function U.avg_pool(x, geo, mode)
  return (U.compute(x, function(xx)
    return C.ch_avg_pool_forward(xx.ptr, geo.nsp, i64(1, geo.k), i64(2, geo.s), i64(3, geo.p),
      i64(4, geo.out_size), mode, box)
  end))
end

function U.avg_spread(g, geo, mode)
  return (U.compute(g, function(gg)
    return C.ch_avg_pool_backward(gg.ptr, geo.nsp, i64(1, geo.k), i64(2, geo.s), i64(3, geo.p),
      i64(4, geo.in_size), mode, box)
  end))
end

-- ---- nodes ---------------------------------------------------------------
-- The geometry's spatial sizes depend on N and C only through the planes,
-- so a node built for one batch works for its gradients.
local WindowPool = FunctionNode:extend('WindowPool')
local WindowSpread = FunctionNode:extend('WindowSpread')
local IndexScatter = FunctionNode:extend('IndexScatter')
local IndexGather = FunctionNode:extend('IndexGather')
U.WindowPool, U.WindowSpread, U.IndexScatter, U.IndexGather = WindowPool, WindowSpread, IndexScatter, IndexGather

local function node(cls, geo, mode, ix)
  local f = setmetatable({}, cls)
  f.geo, f.mode, f.indexes = geo, mode, ix
  return f
end
U.node = node

function WindowPool:forward(inputs) return { U.avg_pool(inputs[1], self.geo, self.mode) } end
function WindowPool:backward(idx, gys)
  return { node(WindowSpread, self.geo, self.mode):apply({ gys[1] })[1] }
end

function WindowSpread:forward(inputs) return { U.avg_spread(inputs[1], self.geo, self.mode) } end
function WindowSpread:backward(idx, gys)
  return { node(WindowPool, self.geo, self.mode):apply({ gys[1] })[1] }
end

function IndexScatter:forward(inputs) return { U.scatter(inputs[1], self.indexes, self.geo) } end
function IndexScatter:backward(idx, gys)
  return { node(IndexGather, self.geo, nil, self.indexes):apply({ gys[1] })[1] }
end

function IndexGather:forward(inputs) return { U.gather(inputs[1], self.indexes, self.geo) } end
function IndexGather:backward(idx, gys)
  return { node(IndexScatter, self.geo, nil, self.indexes):apply({ gys[1] })[1] }
end

-- Max pooling: the forward keeps the argmax positions; its gradient is an
-- IndexScatter (Chainer's MaxPoolingNDGrad), whose gradient is a gather.
local MaxPooling = FunctionNode:extend('MaxPoolingND')
U.MaxPooling = MaxPooling
function MaxPooling:forward(inputs)
  local y, ix = U.max_pool(inputs[1], self.geo)
  self.indexes = ix
  return { y }
end
function MaxPooling:backward(idx, gys)
  return { node(IndexScatter, self.geo, nil, self.indexes):apply({ gys[1] })[1] }
end

return U
