-- _plot.lua: line plots for PlotReport and VariableStatisticsPlot.
--
-- write(path, figure) writes <stem>.svg (drawn here as plain SVG text) and
-- <path> as a PNG rendered by gnuplot (pngcairo, else png) from a data file,
-- when gnuplot is installed (scripts/install-deps installs gnuplot-nox).
-- Without gnuplot only the SVG is written and a one-time note is printed.
--
-- figure = {series = {{label =, points = {{x, y}, ...}, errors = {e, ...}}, ...},
--           x_label =, title =, marker = 'x'|'o'|'+'|'s'|'.'|true|false, grid = true,
--           bands = {{label =, lower = {{x, y}..}, upper = {{x, y}..}}}}
-- A series with `errors` gets a vertical bar of +-errors[i] at each point.
--
-- write_grid(path, {rows = {{figure, figure}, {figure, figure}}, width =,
-- height =}) draws several figures as the panels of one image (the
-- subplots of one matplotlib figure), width x height pixels in all.
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

-- Marker styles: matplotlib's letter -> how the SVG and gnuplot draw it.
local MARKERS = {
  x = { svg = 'cross', pt = 2 }, ['+'] = { svg = 'plus', pt = 1 }, o = { svg = 'circle', pt = 6 },
  s = { svg = 'square', pt = 4 }, ['.'] = { svg = 'dot', pt = 7, ps = 0.3 },
}
M.MARKERS = MARKERS

local function marker_style(fig, n)
  local m = fig.marker
  if m == nil or m == false or n > 200 then return nil end
  if m == true then m = 'x' end
  return MARKERS[m] or MARKERS.x
end

local function svg_marker(o, style, x, y, color)
  if style.svg == 'cross' then
    o[#o + 1] = string.format('<path d="M%.2f %.2fL%.2f %.2fM%.2f %.2fL%.2f %.2f" stroke="%s"/>',
      x - 3, y - 3, x + 3, y + 3, x - 3, y + 3, x + 3, y - 3, color)
  elseif style.svg == 'plus' then
    o[#o + 1] = string.format('<path d="M%.2f %.2fL%.2f %.2fM%.2f %.2fL%.2f %.2f" stroke="%s"/>',
      x - 4, y, x + 4, y, x, y - 4, x, y + 4, color)
  elseif style.svg == 'circle' then
    o[#o + 1] = string.format('<circle cx="%.2f" cy="%.2f" r="3" fill="none" stroke="%s"/>', x, y, color)
  elseif style.svg == 'square' then
    o[#o + 1] = string.format('<rect x="%.2f" y="%.2f" width="6" height="6" fill="none" stroke="%s"/>',
      x - 3, y - 3, color)
  else
    o[#o + 1] = string.format('<circle cx="%.2f" cy="%.2f" r="1.5" fill="%s"/>', x, y, color)
  end
end

-- Appends the SVG elements of one figure drawn in the box (x0, y0, W, H);
-- `legend_w`: the room kept on the right for the legend.
local function svg_panel(o, fig, x0, y0, W, H, legend_w)
  local ml, mr, mt, mb = 70, legend_w, 20, 50
  local pw, ph = W - ml - mr, H - mt - mb
  local xmin, xmax, ymin, ymax = bounds(fig)
  local function X(x) return x0 + ml + (x - xmin) / (xmax - xmin) * pw end
  local function Y(y) return y0 + mt + ph - (y - ymin) / (ymax - ymin) * ph end
  local left, top = x0 + ml, y0 + mt
  if fig.title then
    o[#o + 1] = string.format('<text x="%g" y="%g" text-anchor="middle">%s</text>', left + pw / 2, y0 + 14,
      esc(fig.title))
  end
  local xt, xs = ticks(xmin, xmax)
  local yt, ys = ticks(ymin, ymax)
  for _, v in ipairs(xt) do
    if fig.grid ~= false then
      o[#o + 1] = string.format('<line x1="%.2f" y1="%d" x2="%.2f" y2="%d" stroke="#dddddd"/>', X(v), top, X(v),
        top + ph)
    end
    o[#o + 1] = string.format('<text x="%.2f" y="%d" text-anchor="middle">%s</text>', X(v), top + ph + 16,
      fmt_tick(v, xs))
  end
  for _, v in ipairs(yt) do
    if fig.grid ~= false then
      o[#o + 1] = string.format('<line x1="%d" y1="%.2f" x2="%d" y2="%.2f" stroke="#dddddd"/>', left, Y(v),
        left + pw, Y(v))
    end
    o[#o + 1] = string.format('<text x="%d" y="%.2f" text-anchor="end">%s</text>', left - 6, Y(v) + 4,
      fmt_tick(v, ys))
  end
  o[#o + 1] = string.format('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="black"/>', left, top,
    pw, ph)
  if fig.x_label then
    o[#o + 1] = string.format('<text x="%.2f" y="%d" text-anchor="middle">%s</text>', left + pw / 2, y0 + H - 12,
      esc(fig.x_label))
  end
  local legend_y = top + 10
  local function legend(label, color, swatch)
    if not label then return end
    if swatch then
      o[#o + 1] = string.format('<rect x="%d" y="%d" width="24" height="10" fill="%s" fill-opacity="0.25"/>',
        left + pw + 12, legend_y - 5, color)
    else
      o[#o + 1] = string.format('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="1.5"/>',
        left + pw + 12, legend_y, left + pw + 36, legend_y, color)
    end
    o[#o + 1] = string.format('<text x="%d" y="%d">%s</text>', left + pw + 42, legend_y + 4, esc(label))
    legend_y = legend_y + 18
  end
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
    legend(b.label, color, true)
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
    if s.errors then
      for i, p in ipairs(s.points) do
        local e = s.errors[i]
        if e and finite(p[1]) and finite(p[2]) and finite(e) then
          o[#o + 1] = string.format('<line x1="%.2f" y1="%.2f" x2="%.2f" y2="%.2f" stroke="%s" stroke-opacity="0.4"/>',
            X(p[1]), Y(p[2] - e), X(p[1]), Y(p[2] + e), color)
        end
      end
    end
    local style = marker_style(fig, #s.points)
    if style then
      for _, p in ipairs(s.points) do
        if finite(p[1]) and finite(p[2]) then svg_marker(o, style, X(p[1]), Y(p[2]), color) end
      end
    end
    legend(s.label, color, false)
  end
end

local function svg_open(W, H)
  return {
    string.format('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" ' ..
      'font-family="sans-serif" font-size="12">', W, H, W, H),
    string.format('<rect width="%d" height="%d" fill="white"/>', W, H),
  }
end

-- The SVG text of a figure.
function M.svg(fig)
  local o = svg_open(640, 400)
  svg_panel(o, fig, 0, 0, 640, 400, 210)
  o[#o + 1] = '</svg>'
  return table.concat(o, '\n') .. '\n'
end

-- The SVG text of a grid of figures (see write_grid).
function M.svg_grid(grid)
  local W, H = grid.width, grid.height
  local nrows, ncols = #grid.rows, #grid.rows[1]
  local cw, ch = W / ncols, H / nrows
  local o = svg_open(W, H)
  for r, row in ipairs(grid.rows) do
    for c, fig in ipairs(row) do
      svg_panel(o, fig, (c - 1) * cw, (r - 1) * ch, cw, ch, math.min(130, math.floor(cw * 0.3)))
    end
  end
  o[#o + 1] = '</svg>'
  return table.concat(o, '\n') .. '\n'
end

local gnuplot_checked, gnuplot_terminal = false, nil
-- The gnuplot terminal ('pngcairo' or 'png'), or nil without gnuplot.
local function gnuplot()
  if not gnuplot_checked then
    gnuplot_checked = true
    local p = io.popen("command -v gnuplot >/dev/null 2>&1 && echo 'set terminal' | gnuplot 2>&1")
    local text = p and p:read('*a') or ''
    if p then p:close() end
    if text:find('pngcairo') then gnuplot_terminal = 'pngcairo'
    elseif text:find('%f[%w]png%f[%W]') then gnuplot_terminal = 'png' end
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
local function write(path, grid, svg_text, opts)
  local stem = path:gsub('%.[Pp][Nn][Gg]$', '')
  assert(fs.atomic_write(stem .. '.svg', svg_text))
  local min_interval = opts and opts.min_interval or 0
  local now = util.now()
  if min_interval > 0 and last_png[path] and now - last_png[path] < min_interval then
    pending[path] = grid
    return false
  end
  pending[path] = nil
  last_png[path] = now
  return render_png(path, stem, grid)
end

function M.write(path, fig, opts)
  return write(path, { rows = { { fig } }, width = 640, height = 400 }, M.svg(fig), opts)
end

function M.write_grid(path, grid, opts)
  return write(path, grid, M.svg_grid(grid), opts)
end

function M.flush(path)
  local grid = pending[path]
  if grid == nil then return false end
  pending[path] = nil
  last_png[path] = util.now()
  return render_png(path, path:gsub('%.[Pp][Nn][Gg]$', ''), grid)
end

-- Writes one figure's data blocks to `f` (numbered from `block`) and
-- returns its gnuplot commands and the next block number.
local function gnuplot_panel(fig, f, dat, block, key)
  local plots = {}
  for i, b in ipairs(fig.bands or {}) do
    for j, p in ipairs(b.lower) do
      f:write(string.format('%.17g %.17g %.17g\n', p[1], p[2], b.upper[j][2]))
    end
    f:write('\n\n')
    plots[#plots + 1] = string.format('%s index %d using 1:2:3 with filledcurves lc rgb %s fs transparent solid %.2f %s',
      q(dat), block, q(b.color or COLORS[(i - 1) % #COLORS + 1]), b.opacity or 0.25,
      b.label and ('title ' .. q(b.label)) or 'notitle')
    block = block + 1
  end
  for i, s in ipairs(fig.series or {}) do
    local n = 0
    for j, p in ipairs(s.points) do
      if finite(p[1]) and finite(p[2]) then
        if s.errors then
          f:write(string.format('%.17g %.17g %.17g\n', p[1], p[2], s.errors[j] or 0))
        else
          f:write(string.format('%.17g %.17g\n', p[1], p[2]))
        end
        n = n + 1
      end
    end
    if n == 0 then f:write(s.errors and '0 NaN 0\n' or '0 NaN\n') end
    f:write('\n\n')
    local style = marker_style(fig, #s.points)
    local with
    if s.errors then
      with = 'using 1:2:3 with yerrorlines' .. (style and string.format(' pt %d', style.pt) or ' pt 0')
    else
      with = 'using 1:2 with ' .. (style and string.format('linespoints pt %d ps %.1f', style.pt, style.ps or 0.8)
        or 'lines')
    end
    plots[#plots + 1] = string.format('%s index %d %s lw 1.5 lc rgb %s title %s', q(dat), block, with,
      q(s.color or COLORS[(i - 1) % #COLORS + 1]), q(s.label or ''))
    block = block + 1
  end
  local lines = {
    'set key ' .. key,
    fig.grid ~= false and 'set grid' or 'unset grid',
    'set xlabel ' .. q(fig.x_label or ''),
    'set title ' .. q(fig.title or ''),
    'plot ' .. table.concat(plots, ', '),
  }
  return lines, block
end

render_png = function(path, stem, grid)
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
  local tmp_png = fs.temp_path(path)
  local script = {
    string.format('set terminal %s size %d,%d%s', term, grid.width, grid.height,
      term == 'pngcairo' and ' font "sans,10"' or ''),
    'set output ' .. q(tmp_png),
  }
  local nrows, ncols = #grid.rows, #grid.rows[1]
  if nrows * ncols > 1 then script[#script + 1] = string.format('set multiplot layout %d,%d', nrows, ncols) end
  local block = 0
  for _, row in ipairs(grid.rows) do
    for _, fig in ipairs(row) do
      local lines
      -- a panel of a grid is small: its legend goes inside
      lines, block = gnuplot_panel(fig, f, dat, block, nrows * ncols > 1 and 'inside top left' or 'outside right top')
      for _, l in ipairs(lines) do script[#script + 1] = l end
    end
  end
  if nrows * ncols > 1 then script[#script + 1] = 'unset multiplot' end
  f:close()
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
