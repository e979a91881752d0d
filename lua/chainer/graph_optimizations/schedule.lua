-- graph_optimizations/schedule.lua: a verified trace compiled for replay
-- (internal; see static_graph.lua and docs/static_graph.md).
--
-- A replay is one FunctionNode, StaticSchedule, whose inputs are the
-- forward's tensor arguments and the Variables from outside it (the
-- parameters) and whose outputs are what the forward returned.  Its forward
-- runs every recorded step on tensors: a fresh instance of each node's
-- class, with the recorded constructor fields, gets its inputs from the
-- slots and puts its outputs there; static_code functions are called again.
-- No Variable, VariableNode or graph link is made per step.  Its
-- backward_tensors runs the steps' gradients in reverse order
-- (backward_tensors where the node has it, its Variable backward without a
-- graph otherwise), summing the gradients of each slot, and hands the
-- traversal the sums for its inputs; the traversal adds them into the
-- parameters' gradients as it does for any node.
local T = require 'chainer.tensor'
local config = require('chainer.config').config
local FunctionNode = require 'chainer.function_node'
local Variable = require 'chainer.variable'
local backprop = require 'chainer.backprop'
local hookmod = require 'chainer.function_hook'

local new_var, VariableNode = Variable.new_var, Variable.VariableNode
local meta_of = VariableNode.meta_of
local is_tensor = T.is_tensor
local T_add = T._var_add or T.add
-- (the traversal's own readings of a backward's results)
local per_target, passed_on, shared_result = backprop._per_target, backprop._passed_on, backprop._shared_result
local global_hooks = hookmod.list

local M = {}

---------------------------------------------------------------------------
-- compiling
---------------------------------------------------------------------------
-- trace: the verified trace (graph_optimizations/trace.lua); returns: the
-- forward's results as {kind = 'slot', slot} or {kind = 'list', items};
-- args: the arguments of the verifying call.  keeps_graph: the replay
-- records its node for backward (backprop on and a gradient wanted).
function M.compile(trace, returns, args, keeps_graph)
  local slots = trace.slots
  local sched = { steps = trace.steps, nslots = #slots, returns = returns, consts = {}, exts = {},
    arg_inputs = {}, outer_slots = {}, out_slots = {}, out_index = {}, keeps_graph = keeps_graph }
  -- which slots need a gradient, as define-by-run decides it
  local rg = {}
  for s = 1, #slots do
    local d = slots[s]
    if d.kind == 'arg' then
      local a = args[d.index]
      rg[s] = type(a) == 'table' and a._requires_grad == true
    elseif d.kind == 'ext' then
      rg[s] = d.var._requires_grad == true
    end
  end
  -- outer inputs: the tensor arguments, then the Variables from outside
  for k, s in pairs(trace.arg_slots) do sched.arg_inputs[#sched.arg_inputs + 1] = k end
  table.sort(sched.arg_inputs)
  for i, k in ipairs(sched.arg_inputs) do sched.outer_slots[i] = trace.arg_slots[k] end
  for s = 1, #slots do
    local d = slots[s]
    if d.kind == 'ext' then
      sched.exts[#sched.exts + 1] = { var = d.var, slot = s, meta = meta_of(d.var._data.ptr), rg = rg[s] }
      sched.outer_slots[#sched.outer_slots + 1] = s
    elseif d.kind == 'const' then
      sched.consts[#sched.consts + 1] = { slot = s, tensor = d.tensor }
    end
  end
  for _, st in ipairs(trace.steps) do
    if st.kind == 'node' then
      local idx, any = {}, false
      for i, s in ipairs(st.inputs) do
        if rg[s] then idx[#idx + 1] = i any = true end
      end
      st.idx, st.nt = idx, #idx
      for _, s in ipairs(st.outputs) do rg[s] = any and keeps_graph end
      -- the template and the bindings as arrays (a numeric loop compiles;
      -- pairs does not)
      local tkeys, tvals = {}, {}
      for k, v in pairs(st.template) do
        tkeys[#tkeys + 1] = k
        tvals[#tkeys] = v
      end
      st.tkeys, st.tvals, st.tn = tkeys, tvals, #tkeys
      local bkeys, bslots = {}, {}
      for k, slot in pairs(st.bindings or {}) do
        bkeys[#bkeys + 1] = k
        bslots[#bkeys] = slot
      end
      st.bkeys, st.bslots, st.bn = bkeys, bslots, #bkeys
      st.new = M.constructor(st)
      -- the one-output nodes' fast forward forms (their forward calls them)
      local cls = st.cls
      st.form = (#st.outputs == 1 and #st.inputs == 1 and cls.forward1 and 1)
        or (#st.outputs == 1 and #st.inputs == 2 and cls.forward2 and 2) or 0
      st.on_tensors = cls.backward_tensors and true or false  -- (false where a class defines backward_accumulate)
    else
      st.nt = 0
    end
  end
  sched.rg = rg
  -- the distinct slots returned are the replay node's outputs
  local function collect(r)
    if r.kind == 'slot' then
      if not sched.out_index[r.slot] then
        sched.out_slots[#sched.out_slots + 1] = r.slot
        sched.out_index[r.slot] = #sched.out_slots
      end
    elseif r.kind == 'list' then
      for _, it in ipairs(r.items) do collect(it) end
    end
  end
  for _, r in ipairs(returns) do collect(r) end
  return sched
end

---------------------------------------------------------------------------
-- the replay node
---------------------------------------------------------------------------
local StaticSchedule = FunctionNode:extend('StaticSchedule')
M.StaticSchedule = StaticSchedule

-- A VariableNode standing for slot s in a replayed node's inputs/outputs:
-- what retained-data accessors and backward implementations read.  Nodes
-- with backward_tensors read only the data (light); a Variable backward
-- may ask for more.
local function slot_node(pn, slots, s, rg, light)
  local key = light and -s or s
  local n = pn[key]
  if n then return n end
  local d = slots[s]
  if light then
    n = setmetatable({ data = d, requires_grad = rg, _vref = false }, VariableNode)
  else
    n = setmetatable({ creator = false, rank = 0, requires_grad = rg, data = d, _vref = false,
      _meta = meta_of(d.ptr), _grad = false, _gown = false, _bp = 0 }, VariableNode)
  end
  pn[key] = n
  return n
end

local function run_code_step(st, slots)
  local spec = st.args
  local argv = {}
  for k = 1, st.nargs do
    local a = spec[k]
    if a.slot then argv[k] = slots[a.slot] else argv[k] = a.value end
  end
  local res = { st.fn(unpack(argv, 1, st.nargs)) }
  for k, s in pairs(st.outputs) do
    local r = res[k]
    if not is_tensor(r) then
      error(string.format('static_graph: a static_code function returned %s as result %d, where its recorded ' ..
        'call returned a tensor', type(r), k), 0)
    end
    slots[s] = r
  end
end

local new_tab = require 'table.new'

-- The source text of key k in a table constructor, or nil.
local function key_source(k)
  if type(k) == 'string' then return string.format('[%q]', k) end
  if type(k) == 'number' and k == k and k ~= math.huge and k ~= -math.huge then
    return string.format('[%.17g]', k)
  end
  if type(k) == 'boolean' then return '[' .. tostring(k) .. ']' end
  return nil
end

-- Generated constructors, one per list of keys: steps with the same keys
-- share one prototype, so a trace through the step loop guards on it once.
local constructors = setmetatable({}, { __mode = 'v' })

-- A function slots -> a fresh node of the step's class with the recorded
-- constructor fields, its tensor fields re-bound to this replay's slots: a
-- table constructor (no loop, so the replay's step loop can compile).
function M.constructor(st)
  local bound = {}
  for i = 1, st.bn do bound[st.bkeys[i]] = st.bslots[i] end
  local parts, vals, slots_of = {}, {}, {}
  for i = 1, st.tn do
    local k = st.tkeys[i]
    local ks = key_source(k)
    if not ks then return nil end
    if bound[k] then
      slots_of[#slots_of + 1] = bound[k]
      parts[#parts + 1] = ks .. ' = slots[S[' .. #slots_of .. ']]'
    else
      vals[#vals + 1] = st.tvals[i]
      parts[#parts + 1] = ks .. ' = V[' .. #vals .. ']'
    end
  end
  local src = 'local V, S, cls, setmetatable = ...\n' ..
    'return function(slots) return setmetatable({ ' .. table.concat(parts, ', ') .. ' }, cls) end'
  local make = constructors[src]
  if not make then
    make = assert(loadstring(src, '=static_graph step'))
    constructors[src] = make
  end
  return make(vals, slots_of, st.cls, setmetatable)
end

-- The same, with a loop (keys a constructor cannot spell).
local function instance(st, slots)
  local tn, bn = st.tn, st.bn
  local f = new_tab(0, tn + 4)
  local tkeys, tvals = st.tkeys, st.tvals
  for i = 1, tn do f[tkeys[i]] = tvals[i] end
  if bn > 0 then
    local bkeys, bslots = st.bkeys, st.bslots
    for i = 1, bn do f[bkeys[i]] = slots[bslots[i]] end
  end
  return setmetatable(f, st.cls)
end

-- Makes f look applied for its backward: input and output nodes, retained
-- outputs.
local function attach(f, st, slots, pn, rg, ys, y1)
  local ins, outs = st.inputs, st.outputs
  local light = st.on_tensors
  local form = st.form
  if light and form > 0 and not f._output_indexes_to_retain then
    -- (no loop: the common one- and two-input nodes; backward_tensors
    -- reads only the data of the inputs it retained, so a node retaining
    -- none needs no input nodes)
    if not f._input_indexes_to_retain then return end
    local i1 = ins[1]
    if form == 1 then
      f.inputs = { slot_node(pn, slots, i1, rg[i1], true) }
    else
      local i2 = ins[2]
      f.inputs = { slot_node(pn, slots, i1, rg[i1], true), slot_node(pn, slots, i2, rg[i2], true) }
    end
    return
  end
  local inodes, onodes = {}, {}
  for i = 1, #ins do inodes[i] = slot_node(pn, slots, ins[i], rg[ins[i]], light) end
  for j = 1, #outs do onodes[j] = slot_node(pn, slots, outs[j], true, light) end
  f.inputs, f.outputs = inodes, onodes
  local ro = f._output_indexes_to_retain
  if ro then
    local rd = {}
    for k = 1, #ro do rd[k] = ys and ys[ro[k]] or y1 end
    f._retained_output_data = rd
  end
end

function StaticSchedule:forward(in_data)
  local sched = self.schedule
  local slots = new_tab(sched.nslots, 0)
  local outer = sched.outer_slots
  for i = 1, #outer do slots[outer[i]] = in_data[i] end
  local consts = sched.consts
  for i = 1, #consts do slots[consts[i].slot] = consts[i].tensor end
  local steps = sched.steps
  local keep = sched.keeps_graph
  local nodes, pn, rg = keep and new_tab(#steps, 0) or nil, keep and new_tab(0, 8) or nil, sched.rg
  for s = 1, #steps do
    local st = steps[s]
    if st.kind == 'node' then
      local new = st.new
      local f
      if new then f = new(slots) else f = instance(st, slots) end
      local ins, outs = st.inputs, st.outputs
      local form = st.form
      local ys, y1
      if form == 1 then
        y1 = f:forward1(slots[ins[1]])
        slots[outs[1]] = y1
      elseif form == 2 then
        y1 = f:forward2(slots[ins[1]], slots[ins[2]])
        slots[outs[1]] = y1
      else
        local xs = {}
        for i = 1, #ins do xs[i] = slots[ins[i]] end
        ys = f:forward(xs)
        for j = 1, #outs do slots[outs[j]] = ys[j] end
      end
      if keep and st.nt > 0 then
        attach(f, st, slots, pn, rg, ys, y1)
        nodes[s] = f
      end
    else
      run_code_step(st, slots)
    end
  end
  if keep then self.nodes = nodes end
  local out_slots = sched.out_slots
  local ys = {}
  for j = 1, #out_slots do ys[j] = slots[out_slots[j]] end
  return ys
end

---------------------------------------------------------------------------
-- the replayed backward
---------------------------------------------------------------------------
-- Adds gradient g for slot s (owned: nothing else holds g) into the sums,
-- as backprop.lua's accumulate does.
local function accumulate(grads, gown, s, g, owned)
  local cur = grads[s]
  if not cur then
    grads[s], gown[s] = g, owned
  elseif gown[s] then
    T_add(cur, g, cur)
  elseif owned then
    T_add(g, cur, g)
    grads[s], gown[s] = g, true
  else
    grads[s], gown[s] = T_add(cur, g), true
  end
end

-- Hands target input i of a step the sum its slot owns, to add into in
-- place.
local function hand_over(grads, gown, gxs, ins, i)
  local s = ins[i]
  if gown[s] then
    local g = grads[s]
    if g then gxs[i] = g end
  end
end

-- Takes the result for target input i back from gxs and adds it to its
-- slot's sum (unless it is that sum, added into in place).
local function take_result(grads, gown, gys, gxs, ins, i, nout, own, shared)
  local g = gxs[i]
  if g == nil then return end
  gxs[i] = nil
  local s = ins[i]
  if g == grads[s] and gown[s] then return end
  local owned = own or (g ~= gys[1] and (nout == 1 or not passed_on(g, gys, nout)))
  if shared then owned = false end
  accumulate(grads, gown, s, g, owned)
end

-- One step's backward_tensors (the one- and two-target cases without a
-- loop, so that the step loop compiles).
local function step_on_tensors(f, st, grads, gown, gys, gxs, nout, own)
  local ins, idx, nt = st.inputs, st.idx, st.nt
  if nt == 1 then
    local i = idx[1]
    hand_over(grads, gown, gxs, ins, i)
    f:backward_tensors(idx, gys, gxs, own)
    take_result(grads, gown, gys, gxs, ins, i, nout, own, false)
    return
  end
  if nt == 2 then
    local i1, i2 = idx[1], idx[2]
    hand_over(grads, gown, gxs, ins, i1)
    hand_over(grads, gown, gxs, ins, i2)
    f:backward_tensors(idx, gys, gxs, own)
    local shared = gxs[i1] ~= nil and gxs[i1] == gxs[i2]
    take_result(grads, gown, gys, gxs, ins, i1, nout, own, shared)
    take_result(grads, gown, gys, gxs, ins, i2, nout, own, shared)
    return
  end
  for k = 1, nt do hand_over(grads, gown, gxs, ins, idx[k]) end
  f:backward_tensors(idx, gys, gxs, own)
  local shared = shared_result(gxs, idx, nt)
  for k = 1, nt do take_result(grads, gown, gys, gxs, ins, idx[k], nout, own, shared) end
end

local function step_on_variables(f, st, grads, gown, gys, nout)
  local ins, idx, nt = st.inputs, st.idx, st.nt
  local vgys = {}
  for j = 1, nout do
    if gys[j] then vgys[j] = new_var(gys[j], true) end
  end
  local res = f:backward(idx, vgys)
  if type(res) ~= 'table' then
    error(string.format('%s: backward must return a table of gradients (got %s)', f:label(), type(res)), 0)
  end
  local aligned = per_target(res, idx, nt, #ins)
  for k = 1, nt do
    local i = idx[k]
    local gx
    if aligned then gx = res[k] else gx = res[i] end
    if gx ~= nil then
      local g
      if is_tensor(gx) then g = gx
      elseif type(gx) == 'table' and gx._is_variable then g = gx._data
      else
        error(string.format('%s: backward returned a %s for input %d (expected a Variable or nil)', f:label(),
          type(gx), i), 0)
      end
      accumulate(grads, gown, ins[i], g, false)
    end
  end
end

-- The gradients of the outer inputs idx from those of the outputs (gys),
-- into gxs; own: the gys are the traversal's alone.
local function run_backward(self, idx, gys, gxs, own)
  local sched = self.schedule
  local nodes = self.nodes
  if not nodes then
    error('static_graph: this replayed forward kept no graph (it ran without backprop or without inputs ' ..
      'that need a gradient)', 0)
  end
  local grads, gown = new_tab(sched.nslots, 0), new_tab(sched.nslots, 0)
  local out_slots = sched.out_slots
  for j = 1, #out_slots do
    local g = gys[j]
    if g then grads[out_slots[j]], gown[out_slots[j]] = g, own end
  end
  local steps = sched.steps
  local sgys, sgxs = {}, {}
  for s = #steps, 1, -1 do
    local f = nodes[s]
    if f then
      local st = steps[s]
      local outs = st.outputs
      local nout = #outs
      local any, own_all = false, true
      if nout == 1 then
        local o = outs[1]
        local g = grads[o]
        if g then
          any, own_all = true, gown[o]
          grads[o] = nil
          sgys[1] = g
        end
      else
        for j = 1, nout do
          local o = outs[j]
          local g = grads[o]
          if g then
            any = true
            if not gown[o] then own_all = false end
            grads[o] = nil
            sgys[j] = g
          else
            sgys[j] = nil
          end
        end
      end
      if any then
        if st.on_tensors then
          step_on_tensors(f, st, grads, gown, sgys, sgxs, nout, own_all)
        else
          step_on_variables(f, st, grads, gown, sgys, nout)
        end
      end
      sgys[1] = nil
      if nout > 1 then for j = 2, nout do sgys[j] = nil end end
    end
  end
  local outer = sched.outer_slots
  for k = 1, #idx do
    local i = idx[k]
    local s = outer[i]
    local g = grads[s]
    -- a sum the schedule does not own may be a tensor a node holds: the
    -- traversal must get a tensor it may add into
    if g and not gown[s] and not passed_on(g, gys, #out_slots) then g = g:copy() end
    gxs[i] = g or nil
  end
end

function StaticSchedule:backward_tensors(idx, gys, gxs, own)
  run_backward(self, idx, gys, gxs, own)
end

-- The traversal calls backward (on Variables) when a graph is recorded for
-- double backprop, a function hook is registered, debug mode is on or a
-- Variable retains its gradient.  Only the last can be honoured here.
function StaticSchedule:backward(idx, gys)
  local why
  if config.enable_backprop then why = 'double backprop (enable_double_backprop)'
  elseif global_hooks[1] ~= nil or rawget(self, 'local_function_hooks') then why = 'a function hook'
  elseif config.debug then why = 'debug mode' end
  if why then
    error('static_graph: the backward of a replayed static graph cannot run with ' .. why .. ', which ' ..
      'needs every node of the graph; it runs the recorded schedule on tensors.  Use the forward undecorated ' ..
      '(or set the same configuration before the forward, which then runs define-by-run)', 0)
  end
  local tgys = {}
  local n = #self.schedule.out_slots
  for j = 1, n do tgys[j] = gys[j] and gys[j]._data or nil end
  local gxs = {}
  run_backward(self, idx, tgys, gxs, false)
  local res = { n = #self.schedule.outer_slots }
  for k = 1, #idx do
    local i = idx[k]
    if gxs[i] then res[i] = new_var(gxs[i], false) end
  end
  return res
end

---------------------------------------------------------------------------
-- replaying
---------------------------------------------------------------------------
-- A result of the forward rebuilt from the replay node's outputs ys.
local function rebuild(sched, r, ys)
  if r.kind == 'slot' then return ys[sched.out_index[r.slot]] end
  local out = {}
  for k, it in ipairs(r.items) do out[k] = rebuild(sched, it, ys) end
  return out
end

-- Replays sched for the arguments args[1..n]; returns the results as a
-- table (and their count), or nil when a Variable from outside no longer
-- matches the recording (its dtype, shape or requires_grad changed, or it
-- lost its data): the caller records afresh.
function M.replay(sched, args, n)
  local inputs = {}
  local ai = sched.arg_inputs
  for i = 1, #ai do inputs[i] = args[ai[i]] end
  local exts = sched.exts
  local base = #ai
  for i = 1, #exts do
    local e = exts[i]
    local v = e.var
    local d = v._data
    if d == nil or meta_of(d.ptr) ~= e.meta or (v._requires_grad == true) ~= e.rg then return nil end
    inputs[base + i] = v
  end
  local f = setmetatable({ schedule = sched, nodes = false }, StaticSchedule)
  local ys = f:apply(inputs)
  local returns = sched.returns
  local res = {}
  for k = 1, #returns do res[k] = rebuild(sched, returns[k], ys) end
  return res, #returns
end

return M
