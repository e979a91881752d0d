-- gpu-check-summary.lua: turns the logs of scripts/gpu-check into
-- OUTDIR/summary.txt and OUTDIR/summary.json.
--   chainlua scripts/gpu-check-summary.lua WORK OUTDIR DEVICE ELAPSED SELF_TEST
-- WORK holds steps.tsv (name, status, rc, seconds, limit per step) and
-- logs/ (each step's .out and .err, oracle.jsonl, the examples' logs).
-- Every failure is written with what a fix needs without another GPU run:
-- the op, the case's inputs (shapes, dtypes), the error message or the
-- largest error, and the tail of the step's stderr.
-- Exit status 0 when every step passed (with --self-test: when every
-- planted outcome came out as planted), else 1.
local json = require 'chainer.utils.json'

local work, outdir, device, elapsed, self_test = arg[1], arg[2], arg[3], tonumber(arg[4]), arg[5] == '1'
assert(work and outdir, 'usage: gpu-check-summary.lua WORK OUTDIR DEVICE ELAPSED SELF_TEST')
local logs = work .. '/logs'

local read = require('chainer._fs').read_file   -- nil for a file that is not there

local function lines_of(s)
  local t = {}
  for l in ((s or '') .. '\n'):gmatch('(.-)\n') do t[#t + 1] = l end
  while #t > 0 and t[#t] == '' do t[#t] = nil end
  return t
end

-- the last n lines of a text, each at most 400 characters
local function tail(s, n)
  local t = lines_of(s)
  local out = {}
  for i = math.max(1, #t - n + 1), #t do out[#out + 1] = t[i]:sub(1, 400) end
  return out
end

local function median(t)
  local c = {}
  for i, v in ipairs(t) do c[i] = v end
  table.sort(c)
  if #c == 0 then return nil end
  return c[math.floor((#c + 1) / 2)]
end

---------------------------------------------------------------------------
-- the steps
---------------------------------------------------------------------------
local steps = {}
for line in (read(work .. '/steps.tsv') or ''):gmatch('[^\n]+') do
  local name, status, rc, secs, limit = line:match('^([^\t]*)\t([^\t]*)\t([^\t]*)\t([^\t]*)\t([^\t]*)$')
  if name then
    steps[#steps + 1] = { name = name, status = status, rc = tonumber(rc), seconds = tonumber(secs),
      limit_s = tonumber(limit) }
  end
end

local env_text = read(logs .. '/environment.txt') or ''
local gpu = env_text:match('cuda%.info: ([^\n]*)')

-- busted's TAP: ok / not ok / ok ... # SKIP, failure lines start with '#'
local function parse_tap(step)
  local t = lines_of(read(logs .. '/' .. step.name .. '.out'))
  local r = { passed = 0, failed = 0, pending = 0, failures = {}, last_test = nil }
  local current
  for _, l in ipairs(t) do
    local skip = l:match('^ok %d+ %- # SKIP (.*)$')
    local okname = l:match('^ok %d+ %- (.*)$')
    local bad = l:match('^not ok %d+ %- (.*)$')
    if skip then r.pending = r.pending + 1; r.last_test = skip; current = nil
    elseif okname then r.passed = r.passed + 1; r.last_test = okname; current = nil
    elseif bad then
      r.failed = r.failed + 1; r.last_test = bad
      current = { test = bad, message = {} }
      r.failures[#r.failures + 1] = current
    elseif current and l:match('^#') and #current.message < 40 then
      current.message[#current.message + 1] = l:gsub('^# ?', ''):sub(1, 600)
    end
  end
  for _, f in ipairs(r.failures) do f.message = table.concat(f.message, '\n') end
  step.specs = r
  if step.status ~= 'pass' and step.status ~= 'fail' then
    step.note = 'stopped (' .. step.status .. ') after the test "' .. tostring(r.last_test) .. '"'
  elseif step.status == 'fail' and r.failed == 0 then
    step.note = 'busted failed without a failing test (a load error?)'
  end
end

-- the oracle's JSON lines
local function parse_oracle(step)
  local r = { counts = { pass = 0, fail = 0, no_gpu_kernel = 0, mixed_device = 0, not_implemented = 0,
    agree = 0, disagree = 0 }, failures = {}, no_gpu_kernel = {}, mixed_device = {}, disagreements = {},
    finished = false }
  local started, ended = {}, {}
  local ops = {}
  for l in (read(logs .. '/oracle.jsonl') or ''):gmatch('[^\n]+') do
    local ok, e = pcall(json.decode, l)
    if ok and type(e) == 'table' then
      if e.event == 'start' then started[#started + 1] = e.id
      elseif e.event == 'done' then r.finished = true
      elseif e.event == 'case' then
        ended[e.id] = true
        r.counts[e.status] = (r.counts[e.status] or 0) + 1
        if e.agree == true then r.counts.agree = r.counts.agree + 1
        elseif e.agree == false then
          r.counts.disagree = r.counts.disagree + 1
          r.disagreements[#r.disagreements + 1] = { id = e.id, ['function'] = e['function'], inputs = e.inputs,
            worst_value = e.worst_value, cpu_gpu_max_abs = e.cpu_gpu_max_abs, cpu_gpu_max_rel = e.cpu_gpu_max_rel }
        end
        if e.status == 'fail' then
          r.failures[#r.failures + 1] = { id = e.id, ['function'] = e['function'], inputs = e.inputs,
            message = e.message, max_abs_err = e.max_abs_err, cpu_status = e.cpu_status }
        elseif e.status == 'no_gpu_kernel' then
          local op = e.op or e['function'] or '?'
          if not ops[op] then
            ops[op] = { op = op, cases = 0, ids = {}, functions = {}, message = e.message }
            r.no_gpu_kernel[#r.no_gpu_kernel + 1] = ops[op]
          end
          local o = ops[op]
          o.cases = o.cases + 1
          if #o.ids < 4 then o.ids[#o.ids + 1] = e.id end
          o.functions[e['function'] or '?'] = true
        elseif e.status == 'mixed_device' then
          r.mixed_device[#r.mixed_device + 1] = { id = e.id, ['function'] = e['function'], message = e.message }
        end
      end
    end
  end
  for _, o in ipairs(r.no_gpu_kernel) do
    local f = {}
    for k in pairs(o.functions) do f[#f + 1] = k end
    table.sort(f)
    o.functions = f
  end
  table.sort(r.no_gpu_kernel, function(a, b) return a.cases > b.cases or (a.cases == b.cases and a.op < b.op) end)
  local last = started[#started]
  if not r.finished and last and not ended[last] then
    r.running_when_stopped = last
    step.note = 'stopped (' .. step.status .. ') while running the case ' .. last
  end
  r.total = 0
  for _, k in ipairs { 'pass', 'fail', 'no_gpu_kernel', 'mixed_device', 'not_implemented' } do r.total = r.total + r.counts[k] end
  step.oracle = r
  if step.status == 'fail' and r.counts.fail + r.counts.mixed_device + r.counts.disagree == 0 and r.finished then
    -- only missing kernels: the run itself worked
    step.note = 'every case either passed or has no GPU kernel yet'
  end
end

-- an example: the LogReport's last entry
local function parse_example(step)
  local text = read(logs .. '/' .. step.name .. '.log.json')
  local ok, entries = pcall(json.decode, text or '')
  if not ok or type(entries) ~= 'table' or #entries == 0 then
    step.example = { log = 'no LogReport entries' }
    return
  end
  local last = entries[#entries]
  step.example = { iteration = last.iteration, epoch = last.epoch, loss = last['main/loss'],
    accuracy = last['main/accuracy'], validation_loss = last['validation/main/loss'],
    validation_accuracy = last['validation/main/accuracy'], elapsed_time = last.elapsed_time }
  -- on the GPU the run must also have learned something
  if not self_test and step.status == 'pass' then
    local acc = step.example.validation_accuracy or step.example.accuracy
    if type(acc) ~= 'number' or acc < 0.9 then
      step.status = 'fail'
      step.note = string.format('trained, but the accuracy is %s (0.9 expected after %s iterations)',
        tostring(acc), tostring(last.iteration))
    end
  end
end

-- a benchmark: RESULT {json} lines (bench/workloads.lua, bench/gpu_probe)
local function parse_bench(step)
  local results = {}
  for l in (read(logs .. '/' .. step.name .. '.out') or ''):gmatch('[^\n]+') do
    local j = l:match('^RESULT (.*)$')
    if j then
      local ok, r = pcall(json.decode, j)
      if ok and type(r) == 'table' then
        if r.times and r.per_iter then
          local m = median(r.times)
          if m and m > 0 then r.samples_per_s = r.per_iter / m end
        end
        results[#results + 1] = r
      end
    end
  end
  step.bench = results
end

for _, s in ipairs(steps) do
  if s.name:match('^spec%-') then parse_tap(s)
  elseif s.name == 'oracle' then parse_oracle(s)
  elseif s.name == 'mnist' or s.name == 'convnet' then parse_example(s)
  elseif s.name:match('^bench%-') then parse_bench(s) end
  -- stderr helps where the step's own report does not explain the failure
  local explained = s.specs and s.specs.failed > 0 and s.status == 'fail'
  if s.status ~= 'pass' and not explained then s.stderr_tail = tail(read(logs .. '/' .. s.name .. '.err'), 25) end
end

---------------------------------------------------------------------------
-- the verdict
---------------------------------------------------------------------------
local by_name = {}
for _, s in ipairs(steps) do by_name[s.name] = s end
local verdict, problems = true, {}
if self_test then
  -- every planted outcome must be seen as planted
  local function expect(cond, what) if not cond then verdict = false; problems[#problems + 1] = what end end
  local sp = by_name['spec-sample_gpu']
  expect(sp and sp.specs and sp.specs.passed == 1 and sp.specs.failed == 1 and sp.specs.pending == 1,
    'spec step: 1 pass, 1 failure, 1 pending expected')
  expect(sp and sp.specs and sp.specs.failures[1] and sp.specs.failures[1].message:find('the planted failure', 1, true),
    'spec step: the planted failure\'s message expected')
  local sp2 = by_name['spec-second_gpu']
  expect(sp2 and sp2.status == 'pass' and sp2.specs and sp2.specs.passed == 1,
    'spec step run alongside: 1 pass expected')
  local o = by_name.oracle and by_name.oracle.oracle
  expect(o and o.finished, 'oracle: a finished run expected')
  expect(o and o.counts.pass > 0, 'oracle: passing cases expected')
  expect(o and o.no_gpu_kernel[1] and o.no_gpu_kernel[1].op == 'relu', 'oracle: relu without a kernel expected')
  expect(o and o.counts.fail > 0 and o.counts.disagree > 0, 'oracle: the shifted sigmoid as failing and disagreeing expected')
  for _, n in ipairs { 'mnist', 'convnet', 'bench-mlp' } do
    expect(by_name[n] and by_name[n].status == 'pass', n .. ': pass expected')
  end
  expect(by_name['bench-mlp'] and by_name['bench-mlp'].bench[1] and by_name['bench-mlp'].bench[1].samples_per_s,
    'bench-mlp: a samples/s figure expected')
  expect(by_name.hang and by_name.hang.status == 'timeout', 'hang: a timeout expected')
else
  for _, s in ipairs(steps) do
    if s.status ~= 'pass' and s.status ~= 'skipped' then verdict = false end
  end
end

---------------------------------------------------------------------------
-- summary.json
---------------------------------------------------------------------------
local summary = { device = device, gpu = gpu, elapsed_s = elapsed, self_test = self_test, ok = verdict,
  self_test_problems = self_test and problems or nil, steps = steps,
  generated = os.date('!%Y-%m-%dT%H:%M:%SZ') }
local f = assert(io.open(outdir .. '/summary.json', 'w'))
f:write(json.encode(summary, { indent = 1 }), '\n')
f:close()

---------------------------------------------------------------------------
-- summary.txt: the table first (the device tool shows the end of stdout),
-- then every failure
---------------------------------------------------------------------------
local L = {}
local function p(fmt, ...) L[#L + 1] = select('#', ...) > 0 and string.format(fmt, ...) or fmt end
p('gpu-check %s on %s, %s s%s', verdict and 'PASSED' or 'FAILED', device, tostring(elapsed),
  self_test and ' (self-test: the CPU stands in for the GPU)' or '')
p('GPU: %s', gpu or '?')
for _, s in ipairs(steps) do
  local extra = ''
  if s.specs then extra = string.format('%d pass, %d fail, %d pending', s.specs.passed, s.specs.failed, s.specs.pending)
  elseif s.oracle then
    local c = s.oracle.counts
    extra = string.format('%d/%d pass, %d fail, %d no GPU kernel yet, %d mixed device, %d not impl.; agree %d, disagree %d%s',
      c.pass, s.oracle.total, c.fail, c.no_gpu_kernel, c.mixed_device, c.not_implemented, c.agree, c.disagree,
      s.oracle.finished and '' or ' (unfinished)')
  elseif s.example and s.example.iteration then
    extra = string.format('iter %s, loss %.4g, acc %.4g, val acc %s, %.1f s', tostring(s.example.iteration),
      s.example.loss or 0 / 0, s.example.accuracy or 0 / 0, tostring(s.example.validation_accuracy), s.example.elapsed_time or 0)
  elseif s.bench and s.bench[1] then
    local parts = {}
    for _, r in ipairs(s.bench) do
      if r.samples_per_s then parts[#parts + 1] = string.format('%s %.1f samples/s', r.workload or '?', r.samples_per_s) end
      if r.error then parts[#parts + 1] = string.format('%s: %s', r.probe or '?', r.error) end
      if r.probe == 'device' and r.name then parts[#parts + 1] = string.format('%s sm_%s', r.name, tostring(r.sm)) end
      for _, k in ipairs { 'sgemm_gflops', 'sgemm_tf32_gflops', 'd2d_copy_gbs', 'copy_kernel_gbs' } do
        if r[k] then parts[#parts + 1] = string.format('%s %.0f', k, r[k]) end
      end
    end
    extra = table.concat(parts, ', ')
  end
  p('  %-24s %-8s %6s s  %s', s.name, s.status, tostring(s.seconds), extra)
end
if #problems > 0 then
  p('self-test problems:')
  for _, x in ipairs(problems) do p('  - %s', x) end
end
for _, s in ipairs(steps) do
  if s.note then p('%s: %s', s.name, s.note) end
  if s.specs then
    for _, fl in ipairs(s.specs.failures) do
      p('FAIL %s :: %s', s.name, fl.test)
      for _, l in ipairs(lines_of(fl.message)) do p('    %s', l) end
    end
  end
  if s.oracle then
    local o = s.oracle
    if o.running_when_stopped then p('oracle: stopped while running %s', o.running_when_stopped) end
    if #o.no_gpu_kernel > 0 then
      p('oracle: ops without a GPU kernel yet (%d ops, %d cases):', #o.no_gpu_kernel, o.counts.no_gpu_kernel)
      for _, k in ipairs(o.no_gpu_kernel) do
        p('  %-28s %3d cases (%s)', k.op, k.cases, table.concat(k.functions, ' '))
      end
    end
    for i, fl in ipairs(o.failures) do
      if i > 150 then p('  ... %d more failures in summary.json', #o.failures - 150); break end
      p('FAIL oracle %s [%s] inputs %s: %s (max |err| vs Chainer %s; host: %s)', fl.id, tostring(fl['function']),
        table.concat(fl.inputs or {}, '; '), tostring(fl.message):sub(1, 500), tostring(fl.max_abs_err), tostring(fl.cpu_status))
    end
    for i, m in ipairs(o.mixed_device) do
      if i > 40 then p('  ... %d more in summary.json', #o.mixed_device - 40); break end
      p('MIXED oracle %s [%s]: %s', m.id, tostring(m['function']), tostring(m.message):sub(1, 300))
    end
    for i, d in ipairs(o.disagreements) do
      if i > 60 then p('  ... %d more in summary.json', #o.disagreements - 60); break end
      p('DISAGREE oracle %s [%s] inputs %s: %s (max |gpu-cpu| %s, rel %s)', d.id, tostring(d['function']),
        table.concat(d.inputs or {}, '; '), tostring(d.worst_value), tostring(d.cpu_gpu_max_abs), tostring(d.cpu_gpu_max_rel))
    end
  end
  if s.stderr_tail and #s.stderr_tail > 0 and s.name ~= 'hang' then
    p('%s stderr (last lines):', s.name)
    for _, l in ipairs(s.stderr_tail) do p('    %s', l) end
  end
end
f = assert(io.open(outdir .. '/summary.txt', 'w'))
f:write(table.concat(L, '\n'), '\n')
f:close()
os.exit(verdict and 0 or 1)
