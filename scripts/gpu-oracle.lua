-- gpu-oracle.lua: the public oracle (real Chainer's numbers) with every input
-- on a device, for scripts/gpu-check.
--   chainlua scripts/gpu-oracle.lua DIR --device cuda:0 --out results.jsonl
--            [--filter A,B,...] [--inject-faults]
-- Runs the cases twice: on the host (the reference), then with the inputs,
-- gradients and parameters on --device.  Writes one JSON object a line to
-- --out, flushed as it goes, so a crash or a timeout still leaves every
-- finished case and the one that was running:
--   {"event":"start","kind":"cases","id":...}          before each device case
--   {"event":"case", "id", "kind", "function", "inputs", "status", "message",
--    "op", "max_abs_err", "cpu_status", "cpu_gpu_max_abs", "cpu_gpu_max_rel",
--    "agree", "worst_value"}                          after it
--   {"event":"done", "counts":{...}}                  at the end
-- status: pass, fail, no_gpu_kernel (the op has no kernel for the device
-- yet: "op" names it), mixed_device (a value stayed on the host: the harness
-- or the op left something behind), not_implemented (no such function).
-- agree: every value the device computed is within the case's tolerance of
-- the host's (false with the worst value named in worst_value).
-- --inject-faults (self-test): on the device pass F.relu raises the
-- no-kernel error and F.sigmoid's output is shifted by 1e-3, so the
-- classification and the agreement check are exercised without a GPU.
local json = require 'chainer.utils.json'
local oracle = require 'chainer.testing.oracle'

local dir, device, out_path, filters, inject = nil, 'cuda:0', nil, nil, false
local i = 1
while arg[i] do
  local a = arg[i]
  if a == '--device' then i = i + 1; device = arg[i]
  elseif a == '--out' then i = i + 1; out_path = arg[i]
  elseif a == '--filter' then
    i = i + 1
    filters = {}
    for f in arg[i]:gmatch('[^,]+') do filters[#filters + 1] = f end
  elseif a == '--inject-faults' then inject = true
  elseif a:sub(1, 2) == '--' then error('gpu-oracle: unknown option ' .. a, 0)
  else dir = a end
  i = i + 1
end
dir = dir or '../shared/oracle/vectors-v2'
if not out_path then error('gpu-oracle: --out FILE is required', 0) end

local out = assert(io.open(out_path, 'w'))
local function emit(t)
  out:write(json.encode(t), '\n')
  out:flush()
end

-- case metadata by id: the function, the inputs' shapes and dtypes, tolerances
local index = json.read_file(dir .. '/index.json')
local meta = {}
for _, c in ipairs(index.cases) do meta[c.id] = c end
for _, o in ipairs(index.optimizers or {}) do meta[o.id] = o end

local function inputs_of(m)
  local list = {}
  for _, inp in ipairs(m.inputs or {}) do
    list[#list + 1] = string.format('%s %s %s', inp.name, inp.dtype or '?',
      inp.shape and ('(' .. table.concat(inp.shape, ',') .. ')') or '')
  end
  if m.optimizer then list[#list + 1] = 'params ' .. (m.dtype or '?') end
  return list
end

local function tolerance_for(m, what)
  local tol = m.tolerance or {}
  if tol.atol then return tol end   -- optimizers: one tolerance
  if what:match('grad') then return tol.backward or tol.forward end
  return tol.forward or tol.backward
end

-- The worst absolute and relative difference between two host tensors
-- of one shape (nil when the shapes differ), and, given a tolerance
-- {atol, rtol}, the first element outside it (nil when none): its index,
-- the two values.
local function diff(a, b, tol)
  if #a.shape ~= #b.shape then return nil end
  for k = 1, #a.shape do if a.shape[k] ~= b.shape[k] then return nil end end
  local x = a:astype('float64'):reshape(-1):totable()
  local y = b:astype('float64'):reshape(-1):totable()
  local worst, worst_rel, outside = 0, 0, nil
  for k = 1, #y do
    local p, q = x[k], y[k]
    if p ~= q and not (p ~= p and q ~= q) then
      local d = math.abs(p - q)
      if d ~= d then d = math.huge end
      if d > worst then worst = d end
      local r = d / math.max(math.abs(q), 1e-300)
      if r > worst_rel then worst_rel = r end
      if tol and not outside and not (d <= tol.atol + tol.rtol * math.abs(q)) then
        outside = string.format('element %d is %.10g on the device, %.10g on the host', k - 1, p, q)
      end
    end
  end
  return worst, worst_rel, outside
end

local function classify(msg)
  if not msg then return 'fail' end
  local op = msg:match('([%w_%.]+) has no kernel for cuda:%d+ yet')
  if op then return 'no_gpu_kernel', op end
  op = msg:match('([%w_%.]+): argument \'[^\']*\' is on cuda:%d+, but this operation runs only on the CPU')
  if op then return 'no_gpu_kernel', op end
  if msg:match('both must be on one device') or msg:match('is on the CPU but argument') then
    return 'mixed_device', msg:match('([%w_%.]+): argument')
  end
  return 'fail'
end

---------------------------------------------------------------------------
-- self-test faults (the device pass only)
---------------------------------------------------------------------------
local F = require 'chainer.functions'
local saved = {}
local function set_faults(on)
  if not inject then return end
  if on then
    saved.relu, saved.sigmoid = F.relu, F.sigmoid
    F.relu = function() error('relu has no kernel for cuda:0 yet; move the tensor with :to_cpu()', 0) end
    F.sigmoid = function(...) return saved.sigmoid(...) + 1e-3 end
  else
    F.relu, F.sigmoid = saved.relu, saved.sigmoid
  end
end

---------------------------------------------------------------------------
-- the two passes
---------------------------------------------------------------------------
local function run_filtered(opts)
  if not filters then return oracle.run(dir, opts) end
  for _, f in ipairs(filters) do
    opts.filter = f
    oracle.run(dir, opts)
  end
end

-- 1. the host: the reference values and the host's own status
local host_values, host_status = {}, {}
run_filtered {
  observe = function(id, what, got)
    host_values[id] = host_values[id] or {}
    host_values[id][what] = got:copy()
  end,
  on_result = function(_, id, status) host_status[id] = status end,
}

-- 2. the device
local counts = { pass = 0, fail = 0, no_gpu_kernel = 0, mixed_device = 0, not_implemented = 0,
  agree = 0, disagree = 0 }
local per_case = {}
set_faults(true)
run_filtered {
  device = device,
  on_start = function(kind, id) emit { event = 'start', kind = kind, id = id } end,
  observe = function(id, what, got, want)
    local r = per_case[id] or { max_abs_err = 0, cpu_gpu_max_abs = 0, cpu_gpu_max_rel = 0, agree = true }
    per_case[id] = r
    local d = diff(got, want)
    if d and d > r.max_abs_err then r.max_abs_err = d end
    local ref = host_values[id] and host_values[id][what]
    if ref then
      local tol = tolerance_for(meta[id] or {}, what) or { atol = 0, rtol = 0 }
      local da, dr, outside = diff(got, ref, tol)
      if not da then
        r.agree, r.worst_value = false, what .. ': shape differs from the host\'s'
      else
        if da > r.cpu_gpu_max_abs then r.cpu_gpu_max_abs = da end
        if dr > r.cpu_gpu_max_rel then r.cpu_gpu_max_rel = dr end
        if outside and r.agree then r.agree, r.worst_value = false, what .. ': ' .. outside end
      end
    end
  end,
  on_result = function(kind, id, status, message)
    local m = meta[id] or {}
    local r = per_case[id] or {}
    local rec = { event = 'case', kind = kind, id = id, ['function'] = m['function'] or m.optimizer,
      inputs = inputs_of(m), status = status, message = message, cpu_status = host_status[id],
      max_abs_err = r.max_abs_err, cpu_gpu_max_abs = r.cpu_gpu_max_abs, cpu_gpu_max_rel = r.cpu_gpu_max_rel }
    if status == 'fail' then
      local cls, op = classify(message)
      rec.status, rec.op = cls, op
    end
    if rec.status == 'pass' or (rec.status == 'fail' and r.agree ~= nil) then
      rec.agree = r.agree ~= false
      rec.worst_value = r.worst_value
      if rec.agree then counts.agree = counts.agree + 1 else counts.disagree = counts.disagree + 1 end
    end
    counts[rec.status] = counts[rec.status] + 1
    emit(rec)
  end,
}
set_faults(false)
emit { event = 'done', device = device, counts = counts }
out:close()
print(string.format('gpu-oracle on %s: %d pass, %d fail, %d no GPU kernel yet, %d mixed device, %d not implemented; '
  .. 'host/device agreement: %d agree, %d disagree', device, counts.pass, counts.fail, counts.no_gpu_kernel,
  counts.mixed_device, counts.not_implemented, counts.agree, counts.disagree))
os.exit(counts.fail + counts.mixed_device + counts.disagree == 0 and 0 or 1)
