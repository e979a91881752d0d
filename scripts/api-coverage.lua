-- api-coverage.lua: the chainlua half of scripts/api-coverage.
--   chainlua scripts/api-coverage.lua NAMES.tsv OUT.md [--check]
-- Looks every public name of Chainer 7.8.1 (NAMES.tsv, written from real
-- Chainer by scripts/api-coverage) up in chainlua, classifies it with
-- scripts/api-coverage-notes.lua and writes the page OUT.md.  With --check it
-- writes nothing and fails when OUT.md differs from what it would write.
local names_path, out_path, flag = arg[1], arg[2], arg[3]
if not names_path or not out_path then
  io.stderr:write('usage: chainlua scripts/api-coverage.lua NAMES.tsv OUT.md [--check]\n')
  os.exit(2)
end
local script_dir = (arg[0]:match('^(.*)/[^/]*$') or '.')
local notes = dofile(script_dir .. '/api-coverage-notes.lua')
local chainer = require 'chainer'

-- Lua keywords Chainer uses as names: chainlua spells them with a trailing _
-- (and accepts the bare spelling as a string key too).
local LUA_KEYWORDS = {}
for w in ([[and break do else elseif end false for function goto if in local nil not or
  repeat return then true until while]]):gmatch('%S+') do LUA_KEYWORDS[w] = true end

-- Instances whose members the class sections look up (a property that is
-- nil until set would read as absent, so each instance has been used).
local INSTANCES = {}
do
  local T, F = chainer.tensor, chainer.functions
  local function variable()
    local x = chainer.Variable(T.ones { 2, 2 }, { name = 'x' })
    local v = F.relu(x)
    v.name = 'v'
    v.grad = T.ones { 2, 2 }
    return v
  end
  local function model()
    local m = chainer.links.Classifier(chainer.links.Linear(2, 2))
    return m
  end
  local function optimizer()
    local opt = chainer.optimizers.MomentumSGD()
    local m = model()
    opt:setup(m)
    m.predictor.W.grad = T.ones { 2, 2 }
    m.predictor.b.grad = T.ones { 2 }
    opt:update()
    return opt, m
  end
  local function iterator()
    local ds = chainer.datasets.TupleDataset(T.zeros { 4, 2 }, T.zeros({ 4 }, 'int32'))
    local it = chainer.iterators.SerialIterator(ds, 2)
    it:next()
    return it
  end
  local function trainer()
    local opt = optimizer()
    local up = chainer.training.updaters.StandardUpdater(iterator(), opt)
    -- never run, so its out folder is never made
    return chainer.training.Trainer(up, { 1, 'epoch' }, { out = 'result-api-coverage-unused' })
  end
  INSTANCES['chainer.Variable'] = variable
  INSTANCES['chainer.Parameter'] = function()
    local p = chainer.Parameter(T.zeros { 2 }, { name = 'p' })
    p.grad = T.ones { 2 }
    return p
  end
  INSTANCES['chainer.Link'] = model
  INSTANCES['chainer.Chain'] = model
  INSTANCES['chainer.ChainList'] = function() return chainer.ChainList(chainer.links.Linear(2, 2)) end
  INSTANCES['chainer.Sequential'] = function() return chainer.Sequential(chainer.links.Linear(2, 2), F.relu) end
  -- made in debug mode, where a node records its `stack` (nil otherwise, as Chainer's None)
  INSTANCES['chainer.FunctionNode'] = function()
    return chainer.using_config('debug', true, function()
      local v = variable()
      return v.creator_node or v.creator
    end)
  end
  INSTANCES['chainer.Optimizer'] = function() return (optimizer()) end
  INSTANCES['chainer.UpdateRule'] = function()
    local _, m = optimizer()
    return m.predictor.W.update_rule
  end
  INSTANCES['chainer.training.Trainer'] = trainer
  INSTANCES['chainer.training.updaters.StandardUpdater'] = function() return trainer().updater end
  INSTANCES['chainer.training.Extension'] = function() return chainer.training.extensions.LogReport() end
  INSTANCES['chainer.Reporter'] = function() return chainer.Reporter() end
  INSTANCES['chainer.distributions.Normal'] = function() return chainer.distributions.Normal(T.zeros { 2 }, T.ones { 2 }) end
  INSTANCES['chainer.dataset.Iterator'] = iterator
  INSTANCES['chainer.iterators.SerialIterator'] = iterator
end

-- The chainlua value behind a Chainer module path, or nil and why.
local function resolve_module(path)
  if INSTANCES[path] then
    local ok, v = pcall(INSTANCES[path])
    if not ok then return nil, 'cannot build an instance: ' .. tostring(v):match('^[^\n]*') end
    return v
  end
  local first, rest = path:match('^([^.]+)%.?(.*)$')
  local ok, value = pcall(require, first)
  if not ok then return nil, tostring(value):match('^[^\n]*') end
  for part in rest:gmatch('[^.]+') do
    local ok2, v = pcall(function() return value[part] end)
    if not ok2 then return nil, tostring(v):match('^[^\n]*') end
    if v == nil then
      -- some modules are reached by require only
      local ok3, m = pcall(require, path:sub(1, #path))
      if ok3 and type(m) == 'table' then return m end
      return nil, 'no field ' .. part
    end
    value = v
  end
  if type(value) ~= 'table' then
    -- a module named like the function it exports (graph_optimizations.static_graph)
    local ok4, m = pcall(require, path)
    if ok4 and type(m) == 'table' then return m end
  end
  return value
end

-- A name is there when reading it gives a value, or an error that names it
-- (a property that refuses on this instance, as Chainer's raises: a
-- distribution's covariance, a trainer's elapsed_time before run).
local function has(mod, name)
  local function lookup(k)
    local ok, v = pcall(function() return mod[k] end)
    if ok then return v ~= nil end
    return tostring(v):find(k, 1, true) ~= nil
  end
  if lookup(name) then return true end
  if LUA_KEYWORDS[name] and lookup(name .. '_') then return true end
  return false
end

-- read the names, keeping Chainer's module order
local modules, by_module = {}, {}
for line in io.lines(names_path) do
  if not line:match('^#') and line ~= '' then
    local m, n, kind = line:match('^([^\t]+)\t([^\t]+)\t([^\t]+)$')
    assert(m, 'api-coverage: bad line in ' .. names_path .. ': ' .. line)
    if not by_module[m] then by_module[m] = {}; modules[#modules + 1] = m end
    table.insert(by_module[m], { name = n, kind = kind })
  end
end

-- classify: present | different | elsewhere | absent
local STATUS_ORDER = { 'present', 'different', 'elsewhere', 'absent' }
local results, totals = {}, { present = 0, different = 0, elsewhere = 0, absent = 0 }
local stale_notes = {}
for _, m in ipairs(modules) do
  local mod, why = resolve_module(notes.module_alias[m] or m)
  local r = { module = m, missing_module = mod == nil and why or nil,
              present = {}, different = {}, elsewhere = {}, absent = {} }
  local mnotes = notes.names[m] or {}
  for _, e in ipairs(by_module[m]) do
    local note = mnotes[e.name] or notes.module_default[m]
    local found = mod ~= nil and has(type(mod) == 'table' and mod or {}, e.name)
    if found and mnotes[e.name] and note[1] ~= 'different' then
      -- a note that says absent/elsewhere for a name that now exists is stale
      stale_notes[#stale_notes + 1] = m .. '.' .. e.name
    end
    local status
    if found then status = 'present'
    elseif note then status = note[1]
    else status = 'absent' end
    if found and note and note[1] == 'different' then status = 'different' end
    table.insert(r[status], { name = e.name, kind = e.kind, reason = note and note[2] })
    totals[status] = totals[status] + 1
  end
  results[#results + 1] = r
end

-- the page
local out = {}
local function w(s) out[#out + 1] = s or '' end
w('# Chainer 7.8.1 API coverage')
w()
w('Every public name of Chainer 7.8.1\'s user-facing modules, looked up in chainlua under its')
w('naming rules (modules as `require \'chainer\'.<module>`, the same names, Lua keywords with a')
w('trailing `_`). Generated by `scripts/api-coverage` (the names come from importing real')
w('Chainer; the reasons from `scripts/api-coverage-notes.lua`): do not edit by hand.')
w()
w('- **present**: the name exists in chainlua (its behaviour has its own specs).')
w('- **different**: chainlua covers it another way, on purpose; the reason is given.')
w('- **in progress elsewhere**: being added on another branch of this session.')
w('- **absent**: not in chainlua; the reason is given.')
w()
w(('Totals: %d names; %d present, %d different, %d in progress elsewhere, %d absent.')
  :format(totals.present + totals.different + totals.elsewhere + totals.absent,
          totals.present, totals.different, totals.elsewhere, totals.absent))
w()
w('| Chainer module | names | present | different | in progress elsewhere | absent |')
w('|---|---:|---:|---:|---:|---:|')
for _, r in ipairs(results) do
  local n = #r.present + #r.different + #r.elsewhere + #r.absent
  w(('| `%s` | %d | %d | %d | %d | %d |'):format(r.module, n, #r.present, #r.different,
    #r.elsewhere, #r.absent))
end
w()
local LABEL = { different = 'Different', elsewhere = 'In progress elsewhere', absent = 'Absent' }
for _, r in ipairs(results) do
  w('## `' .. r.module .. '`')
  w()
  local alias = notes.module_alias[r.module]
  if alias then w('In chainlua: `' .. alias .. '`.'); w() end
  if r.missing_module then
    w('The module itself is not in chainlua (' .. r.missing_module .. ').')
    w()
  end
  if #r.present > 0 then
    local ns = {}
    for _, e in ipairs(r.present) do ns[#ns + 1] = '`' .. e.name .. '`' end
    w('Present (' .. #r.present .. '): ' .. table.concat(ns, ', ') .. '.')
    w()
  end
  for _, st in ipairs(STATUS_ORDER) do
    if st ~= 'present' and #r[st] > 0 then
      w(LABEL[st] .. ' (' .. #r[st] .. '):')
      w()
      for _, e in ipairs(r[st]) do
        w('- `' .. e.name .. '`' .. (e.reason and (': ' .. e.reason) or ''))
      end
      w()
    end
  end
end
if notes.closing then
  w('## What remains absent, and why')
  w()
  for _, line in ipairs(notes.closing) do w(line) end
  w()
end
local text = table.concat(out, '\n')

for _, s in ipairs(stale_notes) do
  io.stderr:write('api-coverage: note for ' .. s .. ' is stale: the name now exists in chainlua\n')
end
if flag == '--check' then
  local f = io.open(out_path, 'r')
  local old = f and f:read('*a')
  if f then f:close() end
  if old ~= text then
    io.stderr:write('api-coverage: ' .. out_path .. ' is stale; run scripts/api-coverage\n')
    os.exit(1)
  end
  print('api-coverage: ' .. out_path .. ' is up to date')
else
  local f = assert(io.open(out_path, 'w'))
  f:write(text)
  f:close()
  print(('api-coverage: wrote %s (%d present, %d different, %d in progress elsewhere, %d absent)')
    :format(out_path, totals.present, totals.different, totals.elsewhere, totals.absent))
end
