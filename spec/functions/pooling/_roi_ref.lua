-- spec/functions/pooling/_roi_ref.lua: plain-loop references of the ROI
-- functions for their specs, written from the algorithms' descriptions.
-- rois: a Lua table of rows (y_min, x_min, y_max, x_max) (the float32
-- values the kernel sees), idx: their 0-based images; outputs
-- (R, C, outh, outw) in x's dtype.
local T = require('chainer').tensor

local RR = {}

-- Python's round(): halves to the even neighbour.
local function round_half_even(v)
  local f = math.floor(v)
  local d = v - f
  if d > 0.5 then return f + 1 elseif d < 0.5 then return f end
  return (f % 2 == 0) and f or f + 1
end

-- outsize (an integer or {h, w}) as two numbers.
function RR.pair(v) if type(v) == 'table' then return v[1], v[2] end return v, v end

-- out[r][c][i][j] = cell(plane, g, i, j) with g = geometry(roi row) and
-- plane the ROI's image's channel c (a nested table, 1-based).
local function over_rois(x, rois, idx, outh, outw, geometry, cell)
  local xs, C = x:totable(), x.shape[2]
  local out = {}
  for r, b in ipairs(rois) do
    local g = geometry(b)
    out[r] = {}
    for c = 1, C do
      local plane = xs[idx[r] + 1][c]
      out[r][c] = {}
      for i = 0, outh - 1 do
        out[r][c][i + 1] = {}
        for j = 0, outw - 1 do out[r][c][i + 1][j + 1] = cell(plane, g, i, j) end
      end
    end
  end
  return T.array(out, x.dtype)
end

-- ROI pooling: corners rounded half to even, a span of max(end - start +
-- extra, 1) cells split into bins [floor(i b), ceil((i + 1) b)) clipped to
-- the image; op 'max' (empty: what an empty bin gives) or 'mean' (0).
function RR.pool(x, rois, idx, outh, outw, scale, extra, op, empty)
  local H, W = x.shape[3], x.shape[4]
  local function clip(v, n) return math.min(math.max(v, 0), n) end
  return over_rois(x, rois, idx, outh, outw, function(b)
    local y0, x0 = round_half_even(b[1] * scale), round_half_even(b[2] * scale)
    local y1, x1 = round_half_even(b[3] * scale), round_half_even(b[4] * scale)
    return { y0 = y0, x0 = x0, bh = math.max(y1 - y0 + extra, 1) / outh, bw = math.max(x1 - x0 + extra, 1) / outw }
  end, function(plane, g, i, j)
    local h0, h1 = clip(math.floor(i * g.bh) + g.y0, H), clip(math.ceil((i + 1) * g.bh) + g.y0, H)
    local w0, w1 = clip(math.floor(j * g.bw) + g.x0, W), clip(math.ceil((j + 1) * g.bw) + g.x0, W)
    local best, sum, n = nil, 0, 0
    for h = h0, h1 - 1 do
      for w = w0, w1 - 1 do
        local v = plane[h + 1][w + 1]
        if best == nil or v > best then best = v end
        sum, n = sum + v, n + 1
      end
    end
    if op == 'max' then return best or empty end
    return n > 0 and sum / n or 0
  end)
end

-- The bilinear interpolation of plane (H x W) at (y, xx), nil for a point
-- more than one cell outside; points within it are clamped to the border.
local function bilinear(plane, H, W, y, xx)
  if y < -1 or y > H or xx < -1 or xx > W then return nil end
  y, xx = math.min(math.max(y, 0), H - 1), math.min(math.max(xx, 0), W - 1)
  local yl, xl = math.floor(y), math.floor(xx)
  local yh, xh = math.min(yl + 1, H - 1), math.min(xl + 1, W - 1)
  local ly, lx = y - yl, xx - xl
  local hy, hx = 1 - ly, 1 - lx
  return hy * hx * plane[yl + 1][xl + 1] + hy * lx * plane[yl + 1][xh + 1]
    + ly * hx * plane[yh + 1][xl + 1] + ly * lx * plane[yh + 1][xh + 1]
end

-- ROIAlign: corners scaled, not rounded (sizes at least 1); each bin
-- samples sr (an integer or {h, w}; nil: ceil(roi size / bins)) points per
-- axis at the centres of a regular sub-grid; op 'mean' (outside points
-- count 0) or 'max' (-inf when no point is inside).
function RR.align(x, rois, idx, outh, outw, scale, sr, op)
  local H, W = x.shape[3], x.shape[4]
  if type(sr) == 'number' then sr = { sr, sr } end
  return over_rois(x, rois, idx, outh, outw, function(b)
    local y0, x0 = b[1] * scale, b[2] * scale
    local rh, rw = math.max(b[3] * scale - y0, 1), math.max(b[4] * scale - x0, 1)
    return { y0 = y0, x0 = x0, bh = rh / outh, bw = rw / outw,
      gh = sr and sr[1] or math.ceil(rh / outh), gw = sr and sr[2] or math.ceil(rw / outw) }
  end, function(plane, g, i, j)
    local best, acc = -math.huge, 0
    for iy = 0, g.gh - 1 do
      for ix = 0, g.gw - 1 do
        local v = bilinear(plane, H, W, g.y0 + i * g.bh + (iy + 0.5) * g.bh / g.gh,
          g.x0 + j * g.bw + (ix + 0.5) * g.bw / g.gw)
        if v then
          acc = acc + v
          if v > best then best = v end
        end
      end
    end
    if op == 'max' then return best end
    return acc / (g.gh * g.gw)
  end)
end

-- The cases both ROIAlign specs run (opts: outsize, scale, sampling_ratio).
RR.ALIGN_CASES = {
  { name = '2x2 scale 1', opts = { outsize = 2, scale = 1.0 } },
  { name = '3x2 scale 0.6 sampling 2', opts = { outsize = { 3, 2 }, scale = 0.6, sampling_ratio = 2 } },
  { name = '2x3 sampling {1, 3}', opts = { outsize = { 2, 3 }, scale = 1.0, sampling_ratio = { 1, 3 } } },
}

return RR
