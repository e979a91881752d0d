-- graph_optimizations/static_graph.lua: chainer.graph_optimizations.static_graph
-- and chainer.static_code (docs/static_graph.md).
--
--   MLP.forward = static_graph(MLP.forward)
--
-- Per input signature (the arguments' dtypes, shapes and requires_grad,
-- their non-tensor values, chainer.config.train and enable_backprop) the
-- decorated forward runs define-by-run twice: the first call records its
-- steps (trace.lua), the second records them again and compares; when both
-- computed the same graph from the same constants, later calls replay the
-- recorded steps on tensors (schedule.lua).  A forward that changes between
-- the two calls is an error; one that uses something a replay cannot
-- reproduce (trace.refuse) keeps running define-by-run, with a warning.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local config = require('chainer.config').config
local hookmod = require 'chainer.function_hook'
local trace = require 'chainer.graph_optimizations.trace'
local schedule = require 'chainer.graph_optimizations.schedule'

local is_tensor = T.is_tensor
local global_hooks = hookmod.list

local M = {}

local OPTIONS = args.accept { 'force_test_define_by_run', 'minimize_cache_size', 'verbosity_level',
  'enable_double_backprop' }

---------------------------------------------------------------------------
-- the input signature
---------------------------------------------------------------------------
local function tensor_key(d)
  local p = d.ptr
  local parts = { p.dt, p.dev }
  for i = 0, p.nd - 1 do parts[#parts + 1] = tonumber(p.dim[i]) end
  return table.concat(parts, ',')
end

-- The signature of a call, or nil and a message for an argument a static
-- graph cannot take.
local function signature(argv, n)
  local parts = { config.train and 'T' or 't', config.enable_backprop and 'B' or 'b' }
  for k = 1, n do
    local a = argv[k]
    local ta = type(a)
    if is_tensor(a) then
      parts[#parts + 1] = 'x' .. tensor_key(a)
    elseif ta == 'table' and a._is_variable then
      if a._data == nil then return nil, 'argument ' .. k .. ' is a Variable without data' end
      parts[#parts + 1] = (a._requires_grad and 'V' or 'v') .. tensor_key(a._data)
    elseif ta == 'number' or ta == 'string' or ta == 'boolean' or ta == 'nil' then
      parts[#parts + 1] = ta:sub(1, 1) .. tostring(a)
    else
      return nil, string.format('argument %d is a %s; a static graph takes Variables, tensors, numbers, ' ..
        'strings, booleans and nil', k, ta)
    end
  end
  return table.concat(parts, '|')
end

-- The arguments' signature in a form checked without building a string:
-- the fast path of a replay (matches).
local function arg_descriptors(argv, n)
  local sig = { n = n, train = config.train, bp = config.enable_backprop }
  for k = 1, n do
    local a = argv[k]
    local d, var = nil, false
    if is_tensor(a) then d = a
    elseif type(a) == 'table' and a._is_variable then d, var = a._data, true end
    if d then
      local p = d.ptr
      local dims = {}
      for i = 0, p.nd - 1 do dims[i + 1] = tonumber(p.dim[i]) end
      sig[k] = { tensor = true, var = var, rg = var and a._requires_grad == true, dt = p.dt, dev = p.dev,
        nd = p.nd, dims = dims }
    else
      sig[k] = { tensor = false, value = a }
    end
  end
  return sig
end

local function matches(sig, argv, n)
  if sig.n ~= n or sig.train ~= config.train or sig.bp ~= config.enable_backprop then return false end
  for k = 1, n do
    local a, want = argv[k], sig[k]
    if want.tensor then
      local d
      if want.var then
        if type(a) ~= 'table' or not a._is_variable or (a._requires_grad == true) ~= want.rg then return false end
        d = a._data
        if d == nil then return false end
      else
        if not is_tensor(a) then return false end
        d = a
      end
      local p = d.ptr
      if p.dt ~= want.dt or p.dev ~= want.dev or p.nd ~= want.nd then return false end
      local dims = want.dims
      for i = 0, p.nd - 1 do
        if p.dim[i] ~= dims[i + 1] then return false end
      end
    elseif a ~= want.value then
      return false
    end
  end
  return true
end

---------------------------------------------------------------------------
-- comparing two recordings
---------------------------------------------------------------------------
local function same_tensor(a, b)
  if a == b then return true end
  local pa, pb = a.ptr, b.ptr
  if pa.dt ~= pb.dt or pa.dev ~= pb.dev or tensor_key(a) ~= tensor_key(b) then return false end
  local all = T.all(T.eq(a, b)):item()
  return all == true or all == 1
end

-- Whether two recorded values (node fields, static_code arguments) agree:
-- equal, tensors of equal values, or plain tables that agree key by key.
local function same_value(a, b)
  if a == b then return true end
  if is_tensor(a) and is_tensor(b) then return same_tensor(a, b) end
  if type(a) == 'table' and type(b) == 'table' and getmetatable(a) == nil and getmetatable(b) == nil then
    for k, v in pairs(a) do
      if not same_value(v, b[k]) then return false end
    end
    for k in pairs(b) do
      if a[k] == nil then return false end
    end
    return true
  end
  return false
end

local function step_name(st)
  if st.kind == 'code' then return 'a static_code call' end
  local cls = st.cls
  return (cls and cls.__name) or 'a node'
end

-- nil when recordings t1 and t2 agree, else what differs.
local function differences(t1, t2)
  local s1, s2 = t1.steps, t2.steps
  local n = math.min(#s1, #s2)
  for s = 1, n do
    local a, b = s1[s], s2[s]
    local where = string.format('step %d (%s)', s, step_name(a))
    if a.kind ~= b.kind or a.cls ~= b.cls then
      return string.format('step %d was %s, then %s', s, step_name(a), step_name(b))
    end
    if a.kind == 'node' then
      if #a.inputs ~= #b.inputs or #a.outputs ~= #b.outputs then return where .. ' has other inputs' end
      for i = 1, #a.inputs do
        if a.inputs[i] ~= b.inputs[i] then return where .. ': input ' .. i .. ' comes from elsewhere' end
      end
      local ba, bb = a.bindings or {}, b.bindings or {}
      for k, v in pairs(a.template) do
        if ba[k] ~= bb[k] then return where .. ": field '" .. tostring(k) .. "' comes from elsewhere" end
        if not ba[k] and not same_value(v, b.template[k]) then
          return where .. ": field '" .. tostring(k) .. "' changed"
        end
      end
      for k in pairs(b.template) do
        if a.template[k] == nil then return where .. ": field '" .. tostring(k) .. "' is new" end
      end
    else
      if a.fn ~= b.fn or a.nargs ~= b.nargs then return where .. ' calls another function' end
      for k = 1, a.nargs do
        local x, y = a.args[k], b.args[k]
        if x.slot ~= y.slot or (not x.slot and not same_value(x.value, y.value)) then
          return where .. ': argument ' .. k .. ' changed'
        end
      end
      for k, v in pairs(a.outputs) do
        if b.outputs[k] ~= v then return where .. ': result ' .. k .. ' changed' end
      end
    end
  end
  if #s1 ~= #s2 then return string.format('the first call applied %d functions, the second %d', #s1, #s2) end
  local l1, l2 = t1.slots, t2.slots
  if #l1 ~= #l2 then return 'the inputs differ' end
  for s = 1, #l1 do
    local a, b = l1[s], l2[s]
    if a.kind ~= b.kind then return 'input slot ' .. s .. ' changed kind' end
    if a.kind == 'arg' and a.index ~= b.index then return 'the arguments are used in another order' end
    if a.kind == 'ext' and a.var ~= b.var then
      return 'a Variable from outside the forward is another one on the second call (a state carried ' ..
        'between calls, or a Variable made inside the forward)'
    end
    if a.kind == 'const' and not same_tensor(a.tensor, b.tensor) then
      return 'a tensor made outside chainer functions changed between the calls (computed from the data, ' ..
        'or drawn at random outside chainer.static_code)'
    end
  end
  return nil
end

---------------------------------------------------------------------------
-- recording a call
---------------------------------------------------------------------------
-- The description of result r for the replay, or nil and why it cannot be
-- replayed.
local function describe_result(tr, r, k)
  if type(r) == 'table' and r._is_variable then
    local s = r._data and tr.slot_of_tensor[r._data]
    if not s or tr.slots[s].kind ~= 'out' then
      return nil, 'result ' .. k .. ' is not computed by the forward (an input, a parameter or a constant)'
    end
    return { kind = 'slot', slot = s }
  end
  if type(r) == 'table' and getmetatable(r) == nil then
    local items = {}
    for i = 1, #r do
      local it, why = describe_result(tr, r[i], k)
      if not it then return nil, why end
      items[i] = it
    end
    if next(r, #r > 0 and #r or nil) ~= nil then return nil, 'result ' .. k .. ' is a table that is not a list' end
    return { kind = 'list', items = items }
  end
  return nil, 'result ' .. k .. ' is a ' .. type(r) .. ' (a static graph returns Variables and lists of them)'
end

local function record(fn, argv, n, fargs, fn_n)
  local tr = trace.new(argv, n)
  local prev = trace.active
  trace.active = tr
  local function finish(ok, ...)
    trace.active = prev
    if not ok then error((...), 0) end
    return { n = select('#', ...), ... }
  end
  local res = finish(pcall(fn, unpack(fargs, 1, fn_n)))
  local nres = res.n
  local returns = {}
  for k = 1, nres do
    local r, why = describe_result(tr, res[k], k)
    if not r then tr:refuse(why) break end
    returns[k] = r
  end
  tr.returns = returns
  return tr, res, nres
end

---------------------------------------------------------------------------
-- the decorator
---------------------------------------------------------------------------
-- static_graph(fn, {force_test_define_by_run =, minimize_cache_size =,
-- verbosity_level =, enable_double_backprop =}) -> the decorated fn.
function M.static_graph(fn, opts)
  if type(fn) ~= 'function' then
    args.fail('static_graph: fn must be a function, e.g. static_graph(MLP.forward) (got ' .. type(fn) .. ')', 2)
  end
  opts = args.options('static_graph', opts, OPTIONS)
  if opts.enable_double_backprop then
    args.fail('static_graph: enable_double_backprop = true is not supported: a replayed graph runs its ' ..
      'backward on tensors, without a graph to differentiate again; leave the forward undecorated', 2)
  end
  local force_test = opts.force_test_define_by_run and true or false
  local minimize = opts.minimize_cache_size and true or false
  local verbosity = opts.verbosity_level or 0
  if type(verbosity) ~= 'number' then
    args.fail('static_graph: verbosity_level must be a number (got ' .. type(verbosity) .. ')', 2)
  end
  -- schedules per owner (the chain the forward is called on), per signature
  local caches = setmetatable({}, { __mode = 'k' })
  local shared = {}

  local function say(level, msg)
    if verbosity >= level then print('static_graph: ' .. msg) end
  end

  return function(...)
    local fn_n = select('#', ...)
    if trace.active or global_hooks[1] ~= nil or config.debug or (force_test and not config.train) then
      return fn(...)
    end
    local fargs = { ... }
    -- the chain's own self is not an input; its parameters are found as used
    local first = fargs[1]
    local owner, argv, n = shared, fargs, fn_n
    if type(first) == 'table' and first._is_link then
      owner = first
      argv = { select(2, ...) }
      n = fn_n - 1
    end
    local cache = caches[owner]
    if not cache then cache = { entries = {}, last = false } caches[owner] = cache end
    -- the common case: the same signature as the last replay
    local last = cache.last
    if last and matches(last.sig, argv, n) then
      local res, nres = schedule.replay(last.schedule, argv, n)
      if res then return unpack(res, 1, nres) end
    end
    cache.last = false
    local entries = cache.entries
    local key, bad = signature(argv, n)
    if not key then args.fail('static_graph: ' .. bad, 2) end
    local entry = entries[key]

    if entry and entry.state == 'ready' then
      say(2, 'replaying the schedule for ' .. key)
      local res, nres = schedule.replay(entry.schedule, argv, n)
      if res then
        if verbosity < 2 then cache.last = entry end
        return unpack(res, 1, nres)
      end
      say(1, 'a parameter changed its shape, dtype or requires_grad; recording again')
      entry = nil
      entries[key] = nil
    end
    if entry and entry.state == 'dynamic' then return fn(...) end

    local tr, res, nres = record(fn, argv, n, fargs, fn_n)
    if tr.refused then
      if not (entry and entry.warned) then
        io.stderr:write('static_graph: running define-by-run for this input signature: ' .. tr.refused .. '\n')
      end
      entries[key] = { state = 'dynamic', warned = true }
    elseif not entry then
      if minimize then
        for k in pairs(entries) do entries[k] = nil end
      end
      entries[key] = { state = 'recorded', trace = tr }
      say(1, string.format('recorded %d steps for %s', #tr.steps, key))
    else
      local why = differences(entry.trace, tr)
      if why then
        entries[key] = nil
        args.fail('static_graph: the forward computed another graph on its second call with the same input ' ..
          'signature: ' .. why .. '.  A static graph must apply the same functions to the same inputs on ' ..
          'every call (no data-dependent control flow; code that must run every call goes through ' ..
          'chainer.static_code); leave this forward undecorated', 2)
      end
      local keeps = config.enable_backprop
      if keeps then
        keeps = false
        for s = 1, #tr.slots do
          local d = tr.slots[s]
          local v = d.kind == 'arg' and argv[d.index] or d.var
          if (d.kind == 'arg' or d.kind == 'ext') and type(v) == 'table' and v._requires_grad then keeps = true end
        end
      end
      entries[key] = { state = 'ready', schedule = schedule.compile(tr, tr.returns, argv, keeps),
        sig = arg_descriptors(argv, n) }
      say(1, string.format('verified; replaying %d steps for %s from now on', #tr.steps, key))
    end
    return unpack(res, 1, nres)
  end
end

M.static_code = require 'chainer.graph_optimizations.static_code'

return M
