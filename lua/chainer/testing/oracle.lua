-- testing/oracle.lua: runs the real-Chainer reference vectors (shared/oracle)
-- against chainlua.
--
-- Every argument comes from index.json: a case's `call` is a Python
-- expression that testing/pyexpr.lua evaluates with the case's inputs bound
-- to their names, `F` bound to chainer.functions and keyword arguments
-- turned into a trailing options table (Python None becomes false: options
-- where None means something other than the default take false in Lua).
-- Link cases (`L.*`) run their `call` statement by statement with the
-- link's parameters set from the inputs named in args.params (the first
-- five cases, whose `call` is prose, are rebuilt from the constructor in
-- it; see run_link).  Optimizer trajectories replay `steps` updates on the
-- quadratic problem 0.5 * sum(h * (p - c)^2) or on fixed gradients.
--
-- A case is "not implemented" when the function, link or optimizer it needs
-- does not exist yet; everything else must pass.
local json = require 'chainer.utils.json'
local pyexpr = require 'chainer.testing.pyexpr'

local oracle = {}

local chainer, T, F, L, optimizers -- loaded lazily (the runner loads before them in specs)

local function load_modules()
  chainer = require 'chainer'
  T = chainer.tensor
  local ok
  ok, F = pcall(require, 'chainer.functions')
  if not ok then F = {} end
  ok, L = pcall(require, 'chainer.links')
  if not ok then L = {} end
  ok, optimizers = pcall(require, 'chainer.optimizers')
  if not ok then optimizers = {} end
end

local NotImplemented = setmetatable({}, { __tostring = function() return 'not implemented' end })

local function not_implemented(what)
  error({ not_implemented = NotImplemented, what = what }, 0)
end

---------------------------------------------------------------------------
-- comparison
---------------------------------------------------------------------------
local function as_array(v)
  if v == nil then return nil end
  if T.is_tensor(v) then return v end
  if type(v) == 'table' and v.array ~= nil then return v.array end
  if type(v) == 'number' or type(v) == 'boolean' then return T.array(v, 'float64') end
  return nil
end

-- Checks |got - want| <= atol + rtol*|want| elementwise; returns nil or a message.
local observer -- set by oracle.run while a case runs (opts.observe)
local function compare(got, want, tol, what)
  got = as_array(got)
  if got == nil then return what .. ': no value (nil)' end
  if got.device ~= 'cpu' then got = got:to_cpu() end
  if observer then observer(what, got, want) end
  local gs, ws = got.shape, want.shape
  if #gs ~= #ws then
    return string.format('%s: shape %s, expected %s', what, T.shape_str(gs), T.shape_str(ws))
  end
  for i = 1, #gs do
    if gs[i] ~= ws[i] then
      return string.format('%s: shape %s, expected %s', what, T.shape_str(gs), T.shape_str(ws))
    end
  end
  local g = got:astype('float64'):reshape(-1):totable()
  local w = want:astype('float64'):reshape(-1):totable()
  local worst, worst_i = 0, nil
  for i = 1, #w do
    local a, b = g[i], w[i]
    local bad
    if b ~= b then bad = a == a
    elseif a ~= a then bad = true
    else
      local err = math.abs(a - b)
      local allowed = tol.atol + tol.rtol * math.abs(b)
      bad = err > allowed
      if bad and err - allowed > worst then worst, worst_i = err - allowed, i end
    end
    if bad and not worst_i then worst_i = i end
  end
  if worst_i then
    return string.format('%s: element %d is %.10g, expected %.10g (atol %g, rtol %g)', what, worst_i - 1,
      g[worst_i], w[worst_i], tol.atol, tol.rtol)
  end
  return nil
end

local function is_zero_or_nil(v)
  local a = as_array(v)
  if a == nil then return true end
  local flat = a:astype('float64'):reshape(-1):totable()
  for i = 1, #flat do if flat[i] ~= 0 then return false end end
  return true
end

-- Where a case's inputs go (opts.device of oracle.run): every input,
-- gradient and parameter value is a fresh copy placed there.
local device
local function place(v)
  local c = v:copy()
  if device then c = c:to_device(device) end
  return c
end

---------------------------------------------------------------------------
-- evaluation environment
---------------------------------------------------------------------------
local function flatten(value, out)
  out = out or {}
  if type(value) == 'table' and not T.is_tensor(value) and value.array == nil and value.creator == nil
    and getmetatable(value) == nil then
    for _, v in ipairs(value) do flatten(v, out) end
  elseif value ~= nil then
    out[#out + 1] = value
  end
  return out
end

local function to_options(kwargs)
  if #kwargs == 0 then return nil end
  local opts = {}
  for _, kw in ipairs(kwargs) do
    local v = kw.value
    if v == pyexpr.None then v = false end
    opts[kw.name] = v
  end
  return opts
end

local function pack(...) return { n = select('#', ...), ... } end

local function make_env(names)
  local env = { names = names, None = pyexpr.None }
  function env.attr(obj, name)
    local v = obj[name]
    if v == nil then
      if obj == F then not_implemented('F.' .. name) end
      if obj == L then not_implemented('L.' .. name) end
      error("no attribute '" .. name .. "'", 0)
    end
    return v
  end
  function env.call(fn, args, kwargs)
    local opts = to_options(kwargs)
    local n = #args
    if opts then args[n + 1] = opts; n = n + 1 end
    for i = 1, n do if args[i] == pyexpr.None then args[i] = nil end end
    local r = pack(fn(unpack(args, 1, n)))
    if r.n == 1 then return r[1] end
    r.n = nil
    r._tuple = true
    return r
  end
  function env.binop(op, a, b)
    if op == '+' then return a + b end
    if op == '-' then return a - b end
    if op == '*' then return a * b end
    if op == '/' then return a / b end
    if op == '**' then return a ^ b end
    if op == '@' then
      if not F.matmul then not_implemented('F.matmul') end
      return F.matmul(a, b)
    end
    error('unsupported operator ' .. op, 0)
  end
  function env.unop(op, a)
    if op == '-' then return -a end
    error('unsupported unary operator ' .. op, 0)
  end
  function env.index(obj, terms)
    if type(obj) == 'table' and obj._tuple then
      return obj[terms[1] + 1]
    end
    local lua_terms = {}
    for i, t in ipairs(terms) do
      if type(t) == 'table' and t.slice then
        lua_terms[i] = { t.start, t.stop, t.step }
      elseif t == pyexpr.None then
        lua_terms[i] = T.newaxis
      elseif t == pyexpr.Ellipsis then
        lua_terms[i] = '...'
      elseif type(t) == 'table' then
        lua_terms[i] = T.array(t, 'int64')
      else
        lua_terms[i] = t
      end
    end
    if not F.get_item then not_implemented('F.get_item') end
    return F.get_item(obj, lua_terms)
  end
  return env
end

-- Strips the oracle's prose annotations from a call: "-> (outputs)" and a
-- trailing "  (comment)".
local function clean_call(call)
  call = call:gsub('%s+%->%s.*$', '')
  call = call:gsub('%s%s+%b()%s*$', '')
  return call
end

---------------------------------------------------------------------------
-- links
---------------------------------------------------------------------------
-- The first five link cases have a prose `call`: the link is rebuilt from
-- the constructor found in it, its parameters are set from the inputs of
-- the same name (upward_W -> upward/W), and it is called once per data
-- input (an input ending in _test in test mode).
local function legacy_param_path(name)
  local link, param = name:match('^(%a+)_(%w+)$')
  if link and (link == 'upward' or link == 'lateral') then return link, param end
  return nil, name
end

local function run_legacy_link(case, values, names)
  local ctor = case.call:match('(L%.[%w_]+%b())')
  if not ctor then error('no link constructor in call: ' .. case.call, 0) end
  local env = make_env(names)
  names.L = L
  -- Chainer built the link under the case's default dtype (float64 cases: float64 parameters)
  local link = chainer.using_config('dtype', case.dtype, function() return pyexpr.eval(pyexpr.parse(ctor), env) end)
  -- set parameters and collect the data inputs in order
  local data = {}
  for _, inp in ipairs(case.inputs) do
    local child, pname = legacy_param_path(inp.name)
    local owner = child and link[child] or link
    local p = owner and owner[pname]
    if p ~= nil and type(p) == 'table' and p.array ~= nil then
      p.array = place(values[inp.name]:astype(p.array and p.array.dtype or case.dtype))
      names[inp.name] = p
    else
      data[#data + 1] = inp
    end
  end
  local outs = {}
  for _, inp in ipairs(data) do
    local test_mode = inp.name:match('_test$') ~= nil
    local x = names[inp.name]
    local y
    if test_mode then
      y = chainer.using_config('train', false, function() return link(x) end)
    else
      y = link(x)
    end
    outs[#outs + 1] = y
  end
  -- a link without data inputs (L.Parameter) is called with none
  if #data == 0 then outs[1] = link() end
  -- a recurrent link's final cell state is reported after its outputs
  if #outs < #case.outputs and link.c ~= nil then outs[#outs + 1] = link.c end
  local extras = {}
  for _, e in ipairs(case.extras or {}) do extras[e.name] = link[e.name] end
  return outs, extras
end

-- Sets every parameter named in args.params (input name -> path as
-- namedparams() spells it, without the leading '/') from its input; the
-- Parameter then stands for the input, so its gradient is the input's.
local function set_link_params(case, link, values, names)
  local by_path = {}
  for path, p in link:namedparams() do by_path[path:sub(2)] = p end
  for name, path in pairs(case.args.params) do
    local p = by_path[path]
    if p == nil then
      local known = {}
      for k in pairs(by_path) do known[#known + 1] = k end
      table.sort(known)
      error(string.format("%s has no parameter at '%s' (it has: %s)", case['function'], path,
        table.concat(known, ', ')), 0)
    end
    local v = values[name]
    if p.array == nil then p:initialize(v.shape) end
    p.array = place(v:astype(p.array.dtype))
    names[name] = p
  end
end

-- A Python instance attribute holding a function is called unbound
-- (`l.sampler.sample(shape)`); chainlua calls methods with ':', so a
-- lambda that replaces a method drops the object argument.
local function setattr(obj, name, value)
  if type(value) == 'function' and type(obj[name]) == 'function' then
    local fn = value
    value = function(_, ...) return fn(...) end
  end
  obj[name] = value
end

-- Every later link case's `call` is Python, run statement by statement:
-- `l = L.Name(...)` (built under the case's dtype), then the parameters are
-- set, then the other statements; a target ending in _test runs in test
-- mode; the last statement's value gives the outputs.
local function run_link_program(case, values, names)
  local env = make_env(names)
  env.setattr = setattr
  names.L = L
  local statements = {}
  for stmt in (case.call .. ';'):gmatch('([^;]*);') do
    if stmt:match('%S') then statements[#statements + 1] = stmt end
  end
  local target, ast = pyexpr.parse_statement(statements[1])
  if type(target) ~= 'string' then error('the first statement must build the link: ' .. statements[1], 0) end
  local link = chainer.using_config('dtype', case.dtype, function() return pyexpr.eval(ast, env) end)
  names[target] = link
  set_link_params(case, link, values, names)
  local last
  for i = 2, #statements do
    local tgt, expr = pyexpr.parse_statement(statements[i])
    local function run() return pyexpr.eval(expr, env) end
    if type(tgt) == 'string' and tgt:match('_test$') then
      last = chainer.using_config('train', false, run)
    else
      last = run()
    end
    if tgt then pyexpr.assign(tgt, last, env) end
  end
  local extras = {}
  for _, e in ipairs(case.extras or {}) do extras[e.name] = link[e.name] end
  return flatten(last), extras
end

local function run_link(case, values, names)
  local a = case.args
  if type(a) == 'table' and type(a.params) == 'table' then return run_link_program(case, values, names) end
  return run_legacy_link(case, values, names)
end

---------------------------------------------------------------------------
-- one function case
---------------------------------------------------------------------------
local function tensors_of(case, npz)
  local values = {}
  for _, inp in ipairs(case.inputs) do values[inp.name] = npz[inp.key] end
  return values
end

local function run_case(case, npz)
  local values = tensors_of(case, npz)
  local names = { F = F, chainer = chainer }
  local requires = {}
  for _, inp in ipairs(case.inputs) do
    local v = values[inp.name]
    if v == nil then error('missing key ' .. inp.key .. ' in ' .. case.file, 0) end
    if inp.requires_grad then
      names[inp.name] = chainer.Variable(place(v))
      requires[#requires + 1] = inp.name
    else
      names[inp.name] = place(v)
    end
  end
  -- names that come from the case's output dtypes rather than its inputs
  if case['function'] == 'cast' then names.other = case.outputs[1].dtype end

  local outs, extras
  local train = case.config == nil or case.config.train ~= false
  local function forward()
    if case['function']:match('^L%.') then
      -- (L loads its links on first use: an empty-looking L is no sign of a failed load)
      local cls = L[case['function']:sub(3)]
      if cls == nil then not_implemented(case['function']) end
      outs, extras = run_link(case, values, names)
      return
    end
    local env = make_env(names)
    local last
    for stmt in (clean_call(case.call) .. ';'):gmatch('([^;]*);') do
      if stmt:match('%S') then
        local ok, target, ast = pcall(pyexpr.parse_statement, stmt)
        if ok then
          last = pyexpr.eval(ast, env)
          if target then names[target] = last end
        elseif last == nil then
          error(target, 0)
        end -- later statements that are prose, not code, are skipped
      end
    end
    outs = flatten(last)
    extras = {}
    for _, e in ipairs(case.extras or {}) do extras[e.name] = names[e.name] end
  end
  chainer.using_config('train', train, forward)

  local failures = {}
  local function check(msg) if msg then failures[#failures + 1] = msg end end
  if #outs ~= #case.outputs then
    return { string.format('%d outputs, expected %d', #outs, #case.outputs) }
  end
  for i, o in ipairs(case.outputs) do
    check(compare(outs[i], npz[o.key], case.tolerance.forward, 'output ' .. (i - 1)))
  end
  for _, e in ipairs(case.extras or {}) do
    check(compare(extras[e.name], npz[e.key], case.tolerance.forward, 'extra ' .. e.name))
  end
  if case.forward_only or not case.grad_outputs or #case.grad_outputs == 0 or #failures > 0 then
    return failures
  end

  -- first-order gradients
  local gouts, out_vars = {}, {}
  for i, g in ipairs(case.grad_outputs) do
    out_vars[i] = outs[i]
    gouts[i] = chainer.Variable(place(npz[g.key]))
  end
  local in_vars = {}
  for i, name in ipairs(requires) do in_vars[i] = names[name] end
  local want = {}
  for _, gi in ipairs(case.grad_inputs or {}) do want[gi.name] = gi end
  local dbl = case.double_backprop
  local gxs = chainer.grad(out_vars, in_vars, { grad_outputs = gouts, enable_double_backprop = dbl ~= nil })
  for i, name in ipairs(requires) do
    local w = want[name]
    if w and w.key ~= nil and w.key ~= json.null then
      check(compare(gxs[i], npz[w.key], case.tolerance.backward, 'grad of ' .. name))
    elseif w and not is_zero_or_nil(gxs[i]) then
      check('grad of ' .. name .. ': Chainer gives no gradient, got a non-zero one')
    end
  end
  if not dbl or #failures > 0 then return failures end

  -- second-order: differentiate the first-order gradients again
  local ggx, targets, target_names = {}, {}, {}
  local ggx_by_name = {}
  for _, e in ipairs(dbl.ggx) do ggx_by_name[e.name] = e end
  local ys = {}
  for i, name in ipairs(requires) do
    local e = ggx_by_name[name]
    if e and gxs[i] ~= nil then
      ys[#ys + 1] = gxs[i]
      ggx[#ggx + 1] = chainer.Variable(place(npz[e.key]))
    end
  end
  for i, name in ipairs(requires) do targets[#targets + 1] = in_vars[i]; target_names[#target_names + 1] = name end
  for i = 1, #gouts do targets[#targets + 1] = gouts[i]; target_names[#target_names + 1] = 'gout' .. (i - 1) end
  local ggs = chainer.grad(ys, targets, { grad_outputs = ggx })
  local index_of = {}
  for i, n in ipairs(target_names) do index_of[n] = i end
  for _, e in ipairs(dbl.grads) do
    local got = ggs[index_of[e.name]]
    if e.key ~= nil and e.key ~= json.null then
      check(compare(got, npz[e.key], case.tolerance.backward, 'double-backprop grad of ' .. e.name))
    elseif not is_zero_or_nil(got) then
      check('double-backprop grad of ' .. e.name .. ': Chainer gives none, got a non-zero one')
    end
  end
  return failures
end

---------------------------------------------------------------------------
-- optimizer trajectories
---------------------------------------------------------------------------
local function run_optimizer(spec, npz)
  local cls = optimizers[spec.optimizer]
  if cls == nil then not_implemented('optimizers.' .. spec.optimizer) end
  local hp = spec.hyperparams_given
  if hp == json.null then hp = nil end
  local opt = cls(hp or {})
  local failures = {}
  -- every hyperparameter Chainer reports (defaults included) must match
  local all = spec.hyperparams_all
  if all ~= nil and all ~= json.null then
    local keys = {}
    for k in pairs(all) do keys[#keys + 1] = k end
    table.sort(keys)
    for _, k in ipairs(keys) do
      local want, got = all[k], opt.hyperparam[k]
      if want ~= json.null and got ~= want then
        failures[#failures + 1] = string.format('hyperparameter %s = %s, expected %s', k, tostring(got), tostring(want))
      end
    end
  end
  local Link = chainer.Link or require('chainer.link').Link
  local model = Link()
  local params = {}
  for _, p in ipairs(spec.params) do
    local init = npz[p.problem.init]:astype(spec.dtype)
    local param = chainer.Parameter(place(init))
    model:add_param(p.name, param)
    params[#params + 1] = { spec = p, param = param, h = place(npz[p.problem.h]:astype(spec.dtype)),
      c = place(npz[p.problem.c]:astype(spec.dtype)), fixed = npz[p.problem.fixed_grads] }
  end
  opt:setup(model)
  for _, hook in ipairs(spec.hooks or {}) do
    local hcls = optimizers.hooks and optimizers.hooks[hook.name] or (chainer.optimizer_hooks or {})[hook.name]
    if hcls == nil then not_implemented('optimizer_hooks.' .. hook.name) end
    opt:add_hook(hcls(hook.arg))
  end
  local tol = spec.tolerance
  for step = 0, spec.steps - 1 do
    for _, p in ipairs(params) do
      local values = npz[p.spec.values.key]
      local msg = compare(p.param.array, values:select(step), tol, string.format('%s before step %d', p.spec.name, step + 1))
      if msg then failures[#failures + 1] = msg; return failures end
      local g
      if spec.mode == 'fixed_grads' then
        g = place(p.fixed:select(step):astype(spec.dtype))
      else
        g = p.h * (p.param.array - p.c)
      end
      -- the gradient Chainer fed in (before hooks) must be ours too
      local gkey = p.spec.grads and p.spec.grads.key
      if gkey and npz[gkey] then
        local gm = compare(g, npz[gkey]:select(step), tol, string.format('%s grad at step %d', p.spec.name, step + 1))
        if gm then failures[#failures + 1] = gm; return failures end
      end
      p.param.grad = g
    end
    opt:update()
    -- states are recorded after every step: (steps, ...) arrays
    for _, p in ipairs(params) do
      for _, st in ipairs(p.spec.states or {}) do
        local rule = p.param.update_rule
        local got = rule and rule.state and rule.state[st.name]
        local want = npz[st.key]
        if want.ndim == p.param.array.ndim + 1 then want = want:select(step) end
        local m2 = compare(got, want, tol, string.format('%s state %s after step %d', p.spec.name, st.name, step + 1))
        if m2 then failures[#failures + 1] = m2; return failures end
      end
    end
  end
  for _, p in ipairs(params) do
    local values = npz[p.spec.values.key]
    local msg = compare(p.param.array, values:select(spec.steps), tol, p.spec.name .. ' after the last step')
    if msg then failures[#failures + 1] = msg end
  end
  return failures
end

---------------------------------------------------------------------------
-- driver
---------------------------------------------------------------------------
-- Runs every case in `dir`; returns a summary table.  opts: filter (a
-- substring of the case ids to run), verbose (whole tracebacks), device
-- (the inputs, gradients and parameters are placed there, e.g. 'cuda:0';
-- results are compared on the host), on_result(kind, id, status, message)
-- after each case ('cases' or 'optimizers'; 'pass', 'fail' or
-- 'not_implemented'), observe(id, what, got, want) for every value checked
-- (got on the host), on_start(kind, id) before each case.
function oracle.run(dir, opts)
  opts = opts or {}
  load_modules()
  device = opts.device
  local index = json.read_file(dir .. '/index.json')
  local files = {}
  local function npz_of(name)
    if not files[name] then files[name] = T.load_npz(dir .. '/' .. name) end
    return files[name]
  end
  local summary = { failures = {}, missing = {},
    cases = { total = 0, passed = 0, failed = 0, not_implemented = 0 },
    optimizers = { total = 0, passed = 0, failed = 0, not_implemented = 0 } }
  local kind_of = { [summary.cases] = 'cases', [summary.optimizers] = 'optimizers' }
  local function record(group, id, ok, err, missing)
    group.total = group.total + 1
    local status, msg = 'pass', nil
    if ok and #err == 0 then
      group.passed = group.passed + 1
    elseif missing then
      group.not_implemented = group.not_implemented + 1
      summary.missing[missing] = (summary.missing[missing] or 0) + 1
      status, msg = 'not_implemented', missing
    else
      group.failed = group.failed + 1
      msg = type(err) == 'table' and table.concat(err, '; ') or tostring(err)
      summary.failures[#summary.failures + 1] = id .. ': ' .. msg
      status = 'fail'
    end
    if opts.on_result then opts.on_result(kind_of[group], id, status, msg) end
  end
  local function attempt(group, id, fn)
    if opts.filter and not id:find(opts.filter, 1, true) then return end
    if opts.on_start then opts.on_start(kind_of[group], id) end
    observer = opts.observe and function(what, got, want) opts.observe(id, what, got, want) end
    local ok, res = xpcall(fn, function(e)
      if type(e) == 'table' and e.not_implemented then return e end
      return debug.traceback(tostring(e), 2)
    end)
    if ok then
      record(group, id, true, res)
    elseif type(res) == 'table' and res.not_implemented then
      record(group, id, false, nil, res.what)
    else
      local text = tostring(res)
      record(group, id, false, opts.verbose and text or (text:gsub('\n.*', '')))
    end
    observer = nil
  end
  for _, case in ipairs(index.cases) do
    attempt(summary.cases, case.id, function() return run_case(case, npz_of(case.file)) end)
  end
  for _, spec in ipairs(index.optimizers or {}) do
    attempt(summary.optimizers, spec.id, function() return run_optimizer(spec, npz_of(spec.file)) end)
  end
  device = nil
  return summary
end

oracle.compare = compare
return oracle
