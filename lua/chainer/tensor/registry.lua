-- tensor/registry.lua: releases the C reference of each dead Lua tensor.
--
-- Lua tensor handles (tensor/core.lua) have no finalizer.  A cdata type with
-- a __gc costs LuaJIT per object: an entry in the FFI finalizer table at
-- creation (a hash insertion; the table is rehashed every cycle), then at
-- death a lookup, a protected call, and the cdata lives one more cycle.
-- That was ~180-200 ns per tensor, a fifth of an autograd node.
--
-- Instead every handle gets a slot id: the handle goes into a weak-valued
-- table and its C pointer into a C array at the same id.  The collector
-- clears a dead handle's entry in its atomic phase (after marking what
-- pending finalizers can reach, so a handle that a finalized object still
-- sees stays), and a sweep then releases the pointer of every cleared slot
-- and puts the id back on a free stack.
--
-- When to sweep: a sentinel userdata that nothing references is finalized
-- once per cycle (and makes the next sentinel).  Usually it only raises
-- `sweep_due`, and the next tensor creation sweeps (track): a finalizer runs
-- in the interpreter, where LuaJIT records no new trace and every FFI access
-- is slow, while the sweep is a loop over all slots that is meant to run
-- compiled.  A collection someone asked for is swept at once, so that after
-- `collectgarbage()` dead tensors are released, as they were with
-- finalizers: the sentinel sweeps when its cycle was driven by
-- collectgarbage or by C with no Lua code running (a host's lua_gc), and
-- collect() sweeps right after its full collection.
--
-- At lua_close a userdata kept in the Lua registry releases every tensor
-- still held.  LuaJIT runs the cdata finalizers first, then the userdata
-- ones newest first, so every finalizer of an object made after this module
-- loaded still sees valid tensors (with per-tensor finalizers, the order
-- among cdata was arbitrary).
--
-- Reentrancy: a finalizer (of another object) may run at any allocation of
-- interpreted code and may create tensors (track).  The sweep and the growth
-- of the arrays set `busy`, and a sweep asked for while busy waits for the
-- next call; track and the sweep read the arrays through the upvalues again
-- after every point that can allocate (growth replaces them).
local ffi = require 'ffi'
local C = require('chainer._lib').C
local tnew = require 'table.new'

local R = {}

local release = C.ch_tensor_release
local WEAK = { __mode = 'v' }
local ptr_array = ffi.typeof('ch_tensor *[?]')
local id_array = ffi.typeof('int32_t[?]')

local cap = 1024                               -- slots in the arrays
local handles = setmetatable(tnew(cap, 0), WEAK) -- id -> handle, weak (ids from 0)
local ptrs = ptr_array(cap)                    -- id -> the C reference (NULL: slot free)
local free_ids = id_array(cap)                 -- stack of released ids
local nfree, top = 0, 0                        -- ids >= top were never used
local sweep_due, busy, closed = false, false, false
local released = 0                             -- count of releases by sweeps (tests)
-- Handles registered since the last sweep, and how many may be before a
-- collection is due (R.overdue): twice the slots a sweep left held, at
-- least BACKLOG_MIN.  Without finalizers a program that makes tensors but
-- little Lua garbage (batch-1 inference: ~16 KB of tensors and a few
-- hundred bytes of Lua objects a call) would see a Lua collection cycle
-- rarely and free its dead tensors only when pace_gc's byte allowance
-- runs out (48 MB): tens of MB of malloc'd blocks released at once, which
-- glibc then trims and takes back with page faults (2 a call).  The tensor
-- finalizers' table used to pace the collector by the tensors made.
local BACKLOG_MIN = 4096
local since_sweep, backlog_allowance = 0, BACKLOG_MIN

-- Releases the pointer of every slot whose handle the collector cleared.
-- (No closures, no pairs: a plain loop the JIT compiles.)
local function sweep()
  if busy then return end
  busy = true
  sweep_due = false
  since_sweep = 0
  for id = 0, top - 1 do
    if handles[id] == nil then
      local q = ptrs[id]   -- (interpreted, this boxes q: a finalizer may run)
      if q ~= nil then
        ptrs[id] = nil
        local n = nfree
        free_ids[n] = id
        nfree = n + 1
        released = released + 1
        release(q)
      end
    end
  end
  local held = top - nfree
  backlog_allowance = held > BACKLOG_MIN / 2 and 2 * held or BACKLOG_MIN
  busy = false
end
R.sweep = sweep

-- Whether more handles have been registered since the last sweep than its
-- allowance: then a collection is due, whatever the bytes (pace_gc).
function R.overdue() return since_sweep > backlog_allowance end

-- Doubles the arrays until id `need - 1` fits.  Everything that allocates
-- comes first; a nested call from a finalizer may have grown them meanwhile.
local function grow(need)
  local was = busy
  busy = true
  local n = cap
  while n < need do n = 2 * n end
  local nh = setmetatable(tnew(n, 0), WEAK)
  local np, nf = ptr_array(n), id_array(n)
  if cap < need then
    -- (no allocation from here on)
    ffi.copy(np, ptrs, cap * ffi.sizeof('ch_tensor *'))
    ffi.copy(nf, free_ids, nfree * 4)
    local oh = handles
    for i = 0, cap - 1 do nh[i] = oh[i] end
    handles, ptrs, free_ids, cap = nh, np, nf, n
  end
  busy = was
end

-- Registers handle h as the owner of the C reference p (a NULL one owns
-- nothing).
local function track(h, p)
  if sweep_due then sweep() end
  if p == nil then return end
  local id
  local n = nfree
  if n > 0 then
    n = n - 1
    id = free_ids[n]
    nfree = n
  else
    id = top
    top = id + 1
    if id >= cap then grow(id + 1) end
  end
  handles[id] = h
  ptrs[id] = p
  since_sweep = since_sweep + 1
end
R.track = track

-- The per-cycle sentinel.  It must stay unreferenced (an upvalue or a table
-- entry would keep it alive forever): its metatable holds only on_cycle.
local collectgarbage_fn = collectgarbage
local getinfo = debug and debug.getinfo
local deferring = false   -- collect() runs its own sweep after its collection
local on_cycle
local function arm()
  local s = newproxy(true)
  getmetatable(s).__gc = on_cycle
end
function on_cycle()
  if closed then return end
  arm()
  sweep_due = true
  if not deferring and getinfo then
    local caller = getinfo(2, 'f')
    if caller == nil or caller.func == collectgarbage_fn then sweep() end
  end
end
arm()

-- A full collection, then the release of every tensor it found dead (the
-- sweep runs here, outside any finalizer, where the JIT may compile it).
function R.collect()
  deferring = true
  local ok, err = pcall(collectgarbage_fn, 'collect')
  deferring = false
  sweep()
  if not ok then error(err, 0) end
end

-- lua_close: releases every tensor still registered.
local function release_all()
  closed = true
  for id = 0, top - 1 do
    local q = ptrs[id]
    if q ~= nil then
      ptrs[id] = nil
      release(q)
    end
  end
  nfree, top = 0, 0
end
local closer = newproxy(true)
getmetatable(closer).__gc = release_all
R.closer = closer
if debug then debug.getregistry()["chainer.tensor.registry"] = closer end

-- Counts for tests and benchmarks: slots holding a C reference (live
-- handles and dead ones not swept yet), slots ever used, capacity, and the
-- releases done by sweeps so far.
function R.stats()
  local held = 0
  for id = 0, top - 1 do
    if ptrs[id] ~= nil then held = held + 1 end
  end
  return { held = held, used = top, capacity = cap, free = nfree, released = released, sweep_due = sweep_due }
end

return R
