-- dataset/convert.lua: turning a batch (a Lua array of examples) into
-- arrays: concat_examples, to_device, ConcatWithAsyncTransfer, and the
-- Converter class with its converter() decorator.
--
-- Iterators that gathered a batch in one go (see dataset/protocol.lua)
-- attach the stacked arrays to the batch; concat_examples hands those out
-- (once: a second call stacks afresh) instead of stacking example by example.
local T = require 'chainer.tensor'
local class = require 'chainer.class'
local is_tensor = T.is_tensor

local M = {}

-- batch -> { arrays = ..., n = #batch, first = batch[1] }; weak keys so a
-- dropped batch takes its arrays with it.
local attached = setmetatable({}, { __mode = 'k' })

function M.attach(batch, arrays)
  attached[batch] = { arrays = arrays, n = #batch, first = batch[1] }
  return batch
end

local function device_of(x)
  return x.ptr.dev
end

-- to_device(device, x): x moved to `device` (nil leaves it; -1 / 'cpu' the
-- host; N / 'cuda:N' a GPU).  Tables are moved element by element.
local function to_device(device, x)
  if device == nil or x == nil then return x end
  if is_tensor(x) then return x:to_device(device) end
  if type(x) == 'table' then
    local out = {}
    for k, v in pairs(x) do out[k] = to_device(device, v) end
    return out
  end
  return x
end
M.to_device = to_device

local function shape_str(s)
  return T.shape_str and T.shape_str(s) or ('(' .. table.concat(s, ', ') .. ')')
end

-- Lua numbers and booleans become a tensor: booleans -> bool, integral
-- numbers -> int32 (Chainer's label dtype), others -> the default float.
local function scalars_to_tensor(values, what)
  local v1 = values[1]
  if type(v1) == 'boolean' then
    for i = 2, #values do
      if type(values[i]) ~= 'boolean' then
        error(string.format('concat_examples: %s mixes booleans and %s (example %d)', what, type(values[i]), i), 4)
      end
    end
    return T.array(values, 'bool')
  end
  local integral = true
  for i = 1, #values do
    local v = values[i]
    if type(v) ~= 'number' then
      error(string.format('concat_examples: %s mixes numbers and %s (example %d)', what, type(v), i), 4)
    end
    if integral and (v ~= math.floor(v) or v ~= v or v >= 2^31 or v < -2^31) then integral = false end
  end
  return T.array(values, integral and 'int32' or T.default_float)
end

-- Stacks one field (a Lua array of tensors or numbers) along a new axis 0.
local function concat_field(values, pad, what)
  local v1 = values[1]
  if not is_tensor(v1) then
    if type(v1) == 'number' or type(v1) == 'boolean' then return scalars_to_tensor(values, what) end
    error(string.format('concat_examples: %s of example 1 is a %s (expected a tensor, a number or a boolean)',
      what, type(v1)), 3)
  end
  local n = #values
  local nd, dev = v1.ptr.nd, device_of(v1)
  local same = true
  for i = 2, n do
    local v = values[i]
    if not is_tensor(v) then
      error(string.format('concat_examples: %s of example %d is a %s but example 1 has a tensor', what, i, type(v)), 3)
    end
    local p = v.ptr
    if p.nd ~= nd then
      error(string.format('concat_examples: %s of example %d has %d dimensions but example 1 has %d', what, i,
        p.nd, nd), 3)
    end
    if p.dev ~= dev then
      error(string.format('concat_examples: %s of example %d is on %s but example 1 is on %s', what, i, v.device,
        v1.device), 3)
    end
    if same then
      for d = 0, nd - 1 do
        if p.dim[d] ~= v1.ptr.dim[d] then same = false break end
      end
    end
  end
  if pad == nil then
    if not same then
      for i = 2, n do
        local s1, si = v1.shape, values[i].shape
        for d = 1, nd do
          if s1[d] ~= si[d] then
            error(string.format('concat_examples: %s of example %d has shape %s but example 1 has %s ' ..
              '(pass padding to pad them to a common shape)', what, i, shape_str(si), shape_str(s1)), 3)
          end
        end
      end
    end
    return T.stack(values, 0)
  end
  -- padding: the smallest shape enclosing every example, filled with pad
  local shape = { n }
  for d = 0, nd - 1 do
    local m = 0
    for i = 1, n do
      local e = tonumber(values[i].ptr.dim[d])
      if e > m then m = e end
    end
    shape[d + 2] = m
  end
  local out = T.full(shape, pad, v1.dtype, dev)
  local terms = {}
  for i = 1, n do
    local v = values[i]
    terms[1] = i - 1
    for d = 0, nd - 1 do terms[d + 2] = { 0, tonumber(v.ptr.dim[d]) } end
    T.slice_terms(out, terms):copy_(v)
  end
  return out
end

local function field_pad(padding, key)
  if type(padding) == 'table' then return padding[key] end
  return padding
end

-- concat_examples_func(batch, [device], [padding]): Chainer's default
-- converter as a plain function (concat_examples, below, is the Converter).
-- Examples that are Lua arrays (tuples) give a Lua array of stacked arrays,
-- tables with string keys (dict examples) a table of them, single tensors or
-- numbers one stacked tensor.  `padding` (a number, or per field a Lua array
-- / table of numbers) pads fields of different shapes to the smallest
-- enclosing shape instead of raising.
function M.concat_examples_func(batch, device, padding)
  if type(batch) ~= 'table' then
    error(string.format('concat_examples: batch must be a Lua array of examples (got %s)', type(batch)), 2)
  end
  local n = #batch
  if n == 0 then error('concat_examples: batch is empty', 2) end
  local a = attached[batch]
  if a ~= nil and padding == nil and a.n == n and a.first == batch[1] then
    attached[batch] = nil   -- hand the arrays out once
    return to_device(device, a.arrays)
  end
  local first = batch[1]
  if is_tensor(first) or type(first) ~= 'table' then
    return to_device(device, concat_field(batch, padding, 'the data'))
  end
  if first[1] ~= nil then
    -- tuples
    local m = #first
    local out = {}
    local col = {}
    for j = 1, m do
      for i = 1, n do
        local ex = batch[i]
        if type(ex) ~= 'table' or #ex ~= m then
          error(string.format('concat_examples: example %d is not a tuple of %d fields like example 1', i, m), 2)
        end
        col[i] = ex[j]
      end
      out[j] = concat_field(col, field_pad(padding, j), 'field ' .. j)
    end
    return to_device(device, out)
  end
  -- dicts
  local out = {}
  local col = {}
  for key in pairs(first) do
    for i = 1, n do
      local ex = batch[i]
      local v = nil
      if type(ex) == 'table' then v = ex[key] end
      if v == nil then
        error(string.format("concat_examples: example %d has no field '%s' (example 1 has it)", i, tostring(key)), 2)
      end
      col[i] = v
    end
    out[key] = concat_field(col, field_pad(padding, key), "field '" .. tostring(key) .. "'")
  end
  return to_device(device, out)
end

---------------------------------------------------------------------------
-- Converter and converter()
---------------------------------------------------------------------------
-- Converter: Chainer's base class of converters.  A subclass defines
-- __call(self, batch, device); updaters and evaluators call any converter as
-- converter(batch, device), so Converters and plain functions both work.
local Converter = class.Object:extend('Converter')
M.Converter = Converter
Converter.is_converter = true

Converter.__call = function(self)
  error(string.format('%s: a Converter must define __call(self, batch, device)',
    tostring(getmetatable(self).__name)), 2)
end

-- The device argument as a Device object (nil stays nil), as Chainer's
-- decorated converters receive it.
local function as_device(device)
  if device == nil then return nil end
  return require('chainer.backend').get_device(device)
end

-- A function made a Converter by converter(): called as fn(batch, device,
-- ...) with device turned into a Device (chainer.get_device's objects carry
-- the id, so t:to_device(device) and concat_examples take them).
local CallableConverter = Converter:extend('CallableConverter')

function CallableConverter:init(fn)
  local mt = type(fn) == 'table' and getmetatable(fn)
  if type(fn) ~= 'function' and not (mt and mt.__call) then
    error(string.format('converter: expected a function (got %s)', type(fn)), 4)
  end
  self.base_callable = fn
  self.fn = fn
end

CallableConverter.__call = function(self, batch, device, ...)
  return self.base_callable(batch, as_device(device), ...)
end

-- converter(): Chainer's decorator, `chainer.dataset.converter()(fn)`; the
-- short form converter(fn) does the same in one call.
function M.converter(fn)
  if fn == nil then
    return function(f) return CallableConverter(f) end
  end
  return CallableConverter(fn)
end

-- concat_examples(batch, [device], [padding]): Chainer's default converter,
-- a Converter wrapping concat_examples_func.
M.concat_examples = CallableConverter(M.concat_examples_func)

-- ConcatWithAsyncTransfer(stream, compute_stream): Chainer's converter that
-- overlaps the host-to-GPU copy of a batch with the GPU's compute.  The
-- batch is stacked on the host and its fields are copied on `stream` (a
-- non-blocking stream of the device, made on the first call when nil); such
-- a copy returns once the host data is staged in pinned buffers.  Without
-- `compute_stream` the copies are waited for before returning (Chainer's
-- global synchronisation); with it two events order the streams instead:
-- the next batch is not stacked before the compute stream has passed the
-- point where the previous call returned (event1), and the compute stream
-- waits for the copies (event2).  To the host (device nil, -1 or 'cpu') it
-- is concat_examples.  The device is fixed by the first call.
local ConcatWithAsyncTransfer = class.Object:extend('ConcatWithAsyncTransfer')

local function cuda() return require 'chainer.cuda' end

function ConcatWithAsyncTransfer:init(stream, compute_stream)
  for name, s in pairs { stream = stream, compute_stream = compute_stream } do
    if s ~= nil and not require('chainer.cuda.stream').is_stream(s) then
      error(string.format('ConcatWithAsyncTransfer: %s must be a cuda.Stream or nil (got %s)', name, type(s)), 3)
    end
  end
  self.stream, self.compute_stream = stream, compute_stream
  if compute_stream ~= nil then
    self._event1, self._event2 = cuda().Event(), cuda().Event()
  end
end

-- The device id a call's `device` names: -1 for the host (and for nil).
local function device_id(device)
  if device == nil then return -1 end
  return require('chainer.backend')._resolve(device, 'ConcatWithAsyncTransfer').id
end

ConcatWithAsyncTransfer.__call = function(self, batch, device, padding)
  if type(batch) == 'table' and #batch == 0 then error('ConcatWithAsyncTransfer: batch is empty', 2) end
  local id = device_id(device)
  if self._device == nil then
    self._device = id
    if id >= 0 and self.stream == nil then
      self.stream = require('chainer.backend').using_device(id, function() return cuda().Stream(false, true) end)
    end
  elseif id ~= self._device then
    error(string.format('ConcatWithAsyncTransfer: device is different (the first call sent to %s, this one to %s)',
      self._device < 0 and 'the host' or 'cuda:' .. self._device, id < 0 and 'the host' or 'cuda:' .. id), 2)
  end
  if id < 0 then return M.concat_examples_func(batch, device, padding) end
  if self.compute_stream ~= nil then
    self._event1:synchronize()
    self._event1:record(self.compute_stream)
  end
  local out = cuda().to_gpu(M.concat_examples_func(batch, nil, padding), id, self.stream)
  if self.compute_stream ~= nil then
    self._event2:record(self.stream)
    self.compute_stream:wait_event(self._event2)
  else
    self.stream:synchronize()
  end
  return out
end
M.ConcatWithAsyncTransfer = ConcatWithAsyncTransfer

return M
