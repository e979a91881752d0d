-- _plot.lua: line plots for PlotReport and VariableStatisticsPlot.
--
-- write(path, figure) writes <stem>.svg (drawn here as plain SVG text) and
-- <path> as a PNG rendered by gnuplot (pngcairo, else png) from a data file,
-- when gnuplot is installed (scripts/install-deps installs gnuplot-nox).
-- Without gnuplot only the SVG is written and a one-time note is printed.
--
-- figure = {series = {{label =, points = {{x, y}, ...}}, ...},
--           x_label =, title =, marker = 'x'|false, grid = true,
--           bands = {{label =, lower = {{x, y}..}, upper = {{x, y}..}}}}
local util = require 'chainer.training._util'
local fs = require 'chainer._fs'

local M = {}

local COLORS = { '#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f',
  '#bcbd22', '#17becf' }
M.COLORS = COLORS

local function finite(v) return v == v and v ~= math.huge and v ~= -math.huge end

-- "nice" tick positions covering [lo, hi]
local function ticks(lo, hi, n)
  if hi <= lo then hi = lo + 1 end
  local span = hi - lo
  local raw = span / (n or 6)
  local mag = 10 ^ math.floor(math.log10(raw))
  local step = mag
  for _, m in ipairs({ 1, 2, 2.5, 5, 10 }) do
    if m * mag >= raw then step = m * mag break end
  end
  local first = math.ceil(lo / step - 1e-9) * step
  local out = {}
  local v = first
  while v <= hi + step * 1e-9 do
    out[#out + 1] = math.abs(v) < step * 1e-9 and 0 or v
    v = v + step
  end
  return out, step
end
M.ticks = ticks

local function esc(s)
  return (tostring(s):gsub('&', '&amp;'):gsub('<', '&lt;'):gsub('>', '&gt;'):gsub('"', '&quot;'))
end

local function bounds(fig)
  local xmin, xmax, ymin, ymax = math.huge, -math.huge, math.huge, -math.huge
  local function see(p)
    if finite(p[1]) and finite(p[2]) then
      if p[1] < xmin then xmin = p[1] end
      if p[1] > xmax then xmax = p[1] end
      if p[2] < ymin then ymin = p[2] end
      if p[2] > ymax then ymax = p[2] end
    end
  end
  for _, s in ipairs(fig.series or {}) do for _, p in ipairs(s.points) do see(p) end end
  for _, b in ipairs(fig.bands or {}) do
    for _, p in ipairs(b.lower) do see(p) end
    for _, p in ipairs(b.upper) do see(p) end
  end
  if xmin > xmax then xmin, xmax, ymin, ymax = 0, 1, 0, 1 end
  if xmin == xmax then xmin, xmax = xmin - 0.5, xmax + 0.5 end
  if ymin == ymax then
    local d = math.abs(ymin) > 0 and math.abs(ymin) * 0.05 or 0.5
    ymin, ymax = ymin - d, ymax + d
  end
  local pad = (ymax - ymin) * 0.05
  return xmin, xmax, ymin - pad, ymax + pad
end

local function fmt_tick(v, step)
  if step >= 1 and v == math.floor(v) then return string.format('%d', v) end
  return util.fmt_g(v, '%.4g')
end

-- The SVG text of a figure.
function M.svg(fig)
  local W, H = 640, 400
  local ml, mr, mt, mb = 70, 210, 20, 50
  local pw, ph = W - ml - mr, H - mt - mb
  local xmin, xmax, ymin, ymax = bounds(fig)
  local function X(x) return ml + (x - xmin) / (xmax - xmin) * pw end
  local function Y(y) return mt + ph - (y - ymin) / (ymax - ymin) * ph end
  local o = {}
  o[#o + 1] = string.format('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" ' ..
    'font-family="sans-serif" font-size="12">', W, H, W, H)
  o[#o + 1] = string.format('<rect width="%d" height="%d" fill="white"/>', W, H)
  if fig.title then
    o[#o + 1] = string.format('<text x="%g" y="14" text-anchor="middle">%s</text>', ml + pw / 2, esc(fig.title))
  end
  local xt, xs = ticks(xmin, xmax)
  local yt, ys = ticks(ymin, ymax)
  for _, v in ipairs(xt) do
    if fig.grid ~= false then
      o[#o + 1] = string.format('<line x1="%.2f" y1="%d" x2="%.2f" y2="%d" stroke="#dddddd"/>', X(v), mt, X(v), mt + ph)
    end
    o[#o + 1] = string.format('<text x="%.2f" y="%d" text-anchor="middle">%s</text>', X(v), mt + ph + 16, fmt_tick(v, xs))
  end
  for _, v in ipairs(yt) do
    if fig.grid ~= false then
      o[#o + 1] = string.format('<line x1="%d" y1="%.2f" x2="%d" y2="%.2f" stroke="#dddddd"/>', ml, Y(v), ml + pw, Y(v))
    end
    o[#o + 1] = string.format('<text x="%d" y="%.2f" text-anchor="end">%s</text>', ml - 6, Y(v) + 4, fmt_tick(v, ys))
  end
  o[#o + 1] = string.format('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="black"/>', ml, mt, pw, ph)
  if fig.x_label then
    o[#o + 1] = string.format('<text x="%.2f" y="%d" text-anchor="middle">%s</text>', ml + pw / 2, H - 12, esc(fig.x_label))
  end
  local legend_y = mt + 10
  local idx = 0
  for _, b in ipairs(fig.bands or {}) do
    idx = idx + 1
    local color = b.color or COLORS[(idx - 1) % #COLORS + 1]
    local pts = {}
    for _, p in ipairs(b.upper) do pts[#pts + 1] = string.format('%.2f,%.2f', X(p[1]), Y(p[2])) end
    for i = #b.lower, 1, -1 do local p = b.lower[i] pts[#pts + 1] = string.format('%.2f,%.2f', X(p[1]), Y(p[2])) end
    if #pts > 0 then
      o[#o + 1] = string.format('<polygon points="%s" fill="%s" fill-opacity="%.2f" stroke="none"/>',
        table.concat(pts, ' '), color, b.opacity or 0.25)
    end
  end
  idx = 0
  for _, s in ipairs(fig.series or {}) do
    idx = idx + 1
    local color = s.color or COLORS[(idx - 1) % #COLORS + 1]
    local pts = {}
    for _, p in ipairs(s.points) do
      if finite(p[1]) and finite(p[2]) then pts[#pts + 1] = string.format('%.2f,%.2f', X(p[1]), Y(p[2])) end
    end
    if #pts > 0 then
      o[#o + 1] = string.format('<polyline points="%s" fill="none" stroke="%s" stroke-width="1.5"/>',
        table.concat(pts, ' '), color)
    end
    if fig.marker ~= false and #s.points <= 200 then
      for _, p in ipairs(s.points) do
        if finite(p[1]) and finite(p[2]) then
          local x, y = X(p[1]), Y(p[2])
          o[#o + 1] = string.format('<path d="M%.2f %.2fL%.2f %.2fM%.2f %.2fL%.2f %.2f" stroke="%s"/>',
            x - 3, y - 3, x + 3, y + 3, x - 3, y + 3, x + 3, y - 3, color)
        end
      end
    end
    if s.label then
      o[#o + 1] = string.format('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="1.5"/>',
        ml + pw + 12, legend_y, ml + pw + 36, legend_y, color)
      o[#o + 1] = string.format('<text x="%d" y="%d">%s</text>', ml + pw + 42, legend_y + 4, esc(s.label))
      legend_y = legend_y + 18
    end
  end
  o[#o + 1] = '</svg>'
  return table.concat(o, '\n') .. '\n'
end

local gnuplot_checked, gnuplot_terminal = false, nil
local function gnuplot()
  if not gnuplot_checked then
    gnuplot_checked = true
    local p = io.popen("command -v gnuplot >/dev/null 2>&1 && echo 'set terminal' | gnuplot 2>&1")
    local text = p and p:read('*a') or ''
    if p then p:close() end
    if text:find('pngcairo') then gnuplot_terminal = 'pngcairo size 640,400 font "sans,10"'
    elseif text:find('%f[%w]png%f[%W]') then gnuplot_terminal = 'png size 640,400' end
  end
  return gnuplot_terminal
end
M.have_gnuplot = function() return gnuplot() ~= nil end

local function q(s) return "'" .. tostring(s):gsub("'", "''") .. "'" end

local warned = false
local last_png, pending = {}, {}

local render_png

-- Writes the SVG beside `path` now and the PNG at `path` (through gnuplot).
-- Starting gnuplot costs ~0.1 s, so with opts.min_interval the PNG is
-- redrawn at most once per that many seconds; M.flush(path) draws a
-- postponed one (PlotReport calls it in finalize).
function M.write(path, fig, opts)
  local stem = path:gsub('%.[Pp][Nn][Gg]$', '')
  assert(fs.atomic_write(stem .. '.svg', M.svg(fig)))
  local min_interval = opts and opts.min_interval or 0
  local now = util.now()
  if min_interval > 0 and last_png[path] and now - last_png[path] < min_interval then
    pending[path] = fig
    return false
  end
  pending[path] = nil
  last_png[path] = now
  return render_png(path, stem, fig)
end

function M.flush(path)
  local fig = pending[path]
  if fig == nil then return false end
  pending[path] = nil
  last_png[path] = util.now()
  return render_png(path, path:gsub('%.[Pp][Nn][Gg]$', ''), fig)
end

render_png = function(path, stem, fig)
  local term = gnuplot()
  if not term then
    if not warned then
      io.stderr:write('PlotReport: gnuplot is not installed, so only ' .. stem .. '.svg is written ' ..
        '(apt-get install gnuplot-nox for the PNG)\n')
      warned = true
    end
    return false
  end
  local dat = fs.temp_path(stem .. '.dat')
  local f = assert(io.open(dat, 'w'))
  local plots = {}
  local block = 0
  for _, b in ipairs(fig.bands or {}) do
    for i, p in ipairs(b.lower) do
      local u = b.upper[i]
      f:write(string.format('%.17g %.17g %.17g\n', p[1], p[2], u[2]))
    end
    f:write('\n\n')
    plots[#plots + 1] = string.format("%s index %d using 1:2:3 with filledcurves lc rgb %s fs transparent solid 0.25 notitle",
      q(dat), block, q(b.color or COLORS[(block % #COLORS) + 1]))
    block = block + 1
  end
  local idx = 0
  for _, s in ipairs(fig.series or {}) do
    idx = idx + 1
    local n = 0
    for _, p in ipairs(s.points) do
      if finite(p[1]) and finite(p[2]) then f:write(string.format('%.17g %.17g\n', p[1], p[2])) n = n + 1 end
    end
    if n == 0 then f:write('0 NaN\n') end
    f:write('\n\n')
    local style = (fig.marker ~= false and #s.points <= 200) and 'linespoints pt 2 ps 0.8' or 'lines'
    plots[#plots + 1] = string.format('%s index %d using 1:2 with %s lw 1.5 lc rgb %s title %s',
      q(dat), block, style, q(s.color or COLORS[(idx - 1) % #COLORS + 1]), q(s.label or ''))
    block = block + 1
  end
  f:close()
  local tmp_png = fs.temp_path(path)
  local script = {
    'set terminal ' .. term,
    'set output ' .. q(tmp_png),
    'set key outside right top',
    fig.grid ~= false and 'set grid' or 'unset grid',
    'set xlabel ' .. q(fig.x_label or ''),
  }
  if fig.title then script[#script + 1] = 'set title ' .. q(fig.title) end
  script[#script + 1] = 'plot ' .. table.concat(plots, ', ')
  local gp = fs.temp_path(stem .. '.gp')
  local g = assert(io.open(gp, 'w'))
  g:write(table.concat(script, '\n'), '\n')
  g:close()
  local ok = os.execute("gnuplot '" .. gp:gsub("'", "'\\''") .. "' 2>/dev/null")
  os.remove(gp)
  os.remove(dat)
  if (ok == 0 or ok == true) and fs.exists(tmp_png) then
    return fs.replace(tmp_png, path) == true
  end
  os.remove(tmp_png)
  return false
end

return M
