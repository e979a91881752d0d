-- _stats.lua: statistics of a tensor for ParameterStatistics and
-- VariableStatisticsPlot (mean, std, min, max, zeros, percentiles).
local M = {}

-- NumPy's linear-interpolation percentiles of a tensor (q in 0..100).
function M.percentiles(t, qs)
  local flat = t:reshape(-1)
  local n = tonumber(flat.ptr.numel)
  local out = {}
  if n == 0 then
    for i = 1, #qs do out[i] = 0 / 0 end
    return out
  end
  local sorted = flat:sort()
  local get = sorted.get and function(i) return sorted:get(i) end
  if not get then
    local lst = sorted:tolist()
    get = function(i) return lst[i + 1] end
  end
  for i, q in ipairs(qs) do
    local pos = q / 100 * (n - 1)
    local lo = math.floor(pos)
    local hi = math.min(lo + 1, n - 1)
    local frac = pos - lo
    local a, b = get(lo), get(hi)
    out[i] = a + (b - a) * frac
  end
  return out
end

M.default_statistics = {
  mean = function(x) return x:mean():item() end,
  std = function(x) return x:std():item() end,
  min = function(x) return x:min():item() end,
  max = function(x) return x:max():item() end,
  zeros = function(x) return tonumber(x.ptr.numel) - x:count_nonzero():item() end,
  percentile = function(x) return M.percentiles(x, { 0.13, 2.28, 15.87, 50, 84.13, 97.72, 99.87 }) end,
}
M.default_order = { 'mean', 'std', 'min', 'max', 'zeros', 'percentile' }

return M
