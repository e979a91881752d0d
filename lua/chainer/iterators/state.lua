-- iterators/state.lua: the epoch state machine shared by SerialIterator,
-- MultithreadIterator and MultiprocessIterator (Chainer's semantics), and
-- the bookkeeping of the two prefetching iterators.
--
-- state = { pos = current_position, epoch, is_new_epoch, order = int64 tensor|nil }
-- advance(state, batch_size, loop, sampler, n) moves the state past one
-- batch and returns the batch's 0-based dataset positions (int64 tensor),
-- or nil when a non-repeating iterator is exhausted.  When repeating, a
-- batch that reaches the end of an epoch is filled up from the next
-- epoch's (re-sampled) order, so every batch is full; without repeat the
-- last batch is short.
local T = require 'chainer.tensor'

local M = {}

local function segment(order, a, b)
  if order ~= nil then return order:slice({ a, b }) end
  return T.arange(a, b, 1, 'int64')
end

-- Copies an iterator's state (it._state, it._epoch_size, it._prev: the
-- previous epoch_detail or -1) into Chainer's public fields: current_position,
-- epoch, is_new_epoch, epoch_detail, previous_epoch_detail (nil before the
-- first batch).
function M.sync(it)
  local st, n = it._state, it._epoch_size
  it.current_position = st.pos
  it.epoch = st.epoch
  it.is_new_epoch = st.is_new_epoch
  it.epoch_detail = st.epoch + (n > 0 and st.pos / n or 0)
  local prev = it._prev
  if prev < 0 then it.previous_epoch_detail = nil else it.previous_epoch_detail = prev end
end

function M.new_order(sampler, n)
  if sampler == nil then return nil end
  local o = sampler(T.arange(0, n, 1, 'int64'), 0)
  return M.check_order(o, n)
end

function M.check_order(o, n)
  if not T.is_tensor(o) then
    error(string.format('order_sampler: expected an int64 tensor of %d positions (got %s)', n, type(o)), 3)
  end
  if o.dtype ~= 'int64' then o = o:astype('int64') end
  if o.ptr.nd ~= 1 or tonumber(o.ptr.dim[0]) ~= n then
    error(string.format('order_sampler: the new order has %d entries but the previous one has %d',
      o.size, n), 3)
  end
  return o
end

function M.advance(st, batch_size, loop, sampler, n)
  if not loop and st.epoch > 0 then return nil end
  if n == 0 and loop then
    error('iterator: the dataset is empty (an iterator that repeats needs at least one example)', 3)
  end
  local i, order = st.pos, st.order
  local remaining = batch_size
  local segs, ns = nil, 0
  local first = nil
  local new_epoch = false
  while remaining > 0 do
    local i_end = i + remaining
    local seg
    if i_end < n then
      seg = segment(order, i, i_end)
      remaining = 0
      i = i_end
    else
      if n > i then seg = segment(order, i, n) end
      remaining = remaining - (n - i)
      st.epoch = st.epoch + 1
      new_epoch = true
      if loop then
        if order ~= nil then order = M.check_order(sampler(order, i), n) end
        i = 0
      else
        i = 0
        remaining = 0
      end
    end
    if seg ~= nil then
      if first == nil then
        first = seg
      else
        if segs == nil then segs, ns = { first }, 1 end
        ns = ns + 1
        segs[ns] = seg
      end
    end
  end
  st.pos, st.order, st.is_new_epoch = i, order, new_epoch
  local idx = first
  if segs ~= nil then idx = T.concatenate(segs, 0) end
  if idx == nil or idx.size == 0 then return nil end
  return idx
end

-- Prefetching iterators run the state machine ahead of the batches they
-- hand out: they keep a copy of the state (and of the order sampler's
-- state) per queued batch, and describe the batches handed out.
function M.copy(st)
  return { pos = st.pos, epoch = st.epoch, is_new_epoch = st.is_new_epoch, order = st.order }
end

function M.sampler_state(s)
  if type(s) == 'table' and s.get_state then return { s:get_state() } end
  return nil
end

function M.set_sampler_state(s, state)
  if state ~= nil and type(s) == 'table' and s.set_state then s:set_state(state[1], state[2]) end
end

-- The queue of a prefetching iterator: it._queue[it._qhead .. it._qtail],
-- entries { state, sampler, n = batch length } (n nil: the end of a
-- non-repeating iterator).  fill_queue runs the look-ahead until
-- it.n_prefetch batches are queued, calling load(it, entry, idx) to start
-- loading each batch (idx: int64 tensor of 0-based positions).
function M.fill_queue(it, load)
  local q, ahead = it._queue, it._ahead
  while it._qtail - it._qhead + 1 < it.n_prefetch do
    local idx = M.advance(ahead, it.batch_size, it._repeat, it.order_sampler, it._epoch_size)
    local e = { state = M.copy(ahead), sampler = M.sampler_state(it.order_sampler) }
    if idx ~= nil then
      e.n = tonumber(idx.ptr.dim[0])
      load(it, e, idx)
    end
    it._qtail = it._qtail + 1
    q[it._qtail] = e
    if idx == nil then break end
  end
end

-- The entry of the next batch, or nil (state updated) when a non-repeating
-- iterator has ended; fill(it) queues more when the queue is empty.
function M.queue_head(it, fill)
  if it._qtail < it._qhead then fill(it) end
  local e = it._queue[it._qhead]
  if e.n == nil then
    it._state = e.state   -- stays at the end (no refill)
    M.sync(it)
    return nil
  end
  return e
end

-- Takes the head entry off the queue: its state becomes the iterator's.
function M.hand_out(it, e)
  it._queue[it._qhead] = nil
  it._qhead = it._qhead + 1
  it._prev = it.epoch_detail
  it._state = e.state
  it._sampler_visible = e.sampler
  it.iteration = it.iteration + 1
  M.sync(it)
end

-- serialize for a prefetching iterator `it` (fields _state, _ahead,
-- _sampler_visible): saves the state of the batches handed out; a load
-- calls drop(it) to discard the prefetched batches, then restarts the
-- look-ahead from the loaded state.
function M.serialize_prefetching(it, serializer, serialize_state, drop)
  local s = it.order_sampler
  local ahead_sampler = M.sampler_state(s)
  M.set_sampler_state(s, it._sampler_visible)
  local st = M.copy(it._state)
  if st.order ~= nil then st.order = st.order:copy() end   -- a load writes into it
  serialize_state(it, st, serializer)
  if serializer.is_deserializer then
    drop(it)
    it._state = st
    it._ahead = M.copy(st)
    it._sampler_visible = M.sampler_state(s)
  else
    M.set_sampler_state(s, ahead_sampler)
  end
  M.sync(it)
end

return M
