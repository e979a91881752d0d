-- function_hooks/print.lua: PrintHook, which prints each function's inputs
-- before forward and its inputs and output gradients before backward.
--
--   chainer.function_hooks.PrintHook{sep = '', ['end'] = '\n', file = io.stderr}
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local FunctionHook = require('chainer.function_hook').FunctionHook

local PrintHook = FunctionHook:extend('PrintHook')
PrintHook.name = 'PrintHook'

-- Chainer's PrintHook(sep, end, file, flush); `end` is a Lua keyword, so
-- {['end'] = ...} or end_.
local SIGNATURE = args.signature({ 'sep', 'end', 'file', 'flush' }, { 'end_' })

function PrintHook:init(...)
  local opts = args.parse_at(3, 'PrintHook', SIGNATURE, select('#', ...), ...)
  self.sep = opts.sep or ''
  self['end'] = opts['end'] or opts.end_ or '\n'
  self.file = opts.file or io.stdout
  self.flush = opts.flush ~= false
end

local function describe(t)
  if t == nil then return 'None' end
  local lines = {
    '- device: ' .. t.device,
    '- shape: ' .. T.shape_str(t.shape),
    '- dtype: ' .. t.dtype,
  }
  if T.is_float_code[t.ptr.dt] and t.size > 0 then
    local ok, mean, std = pcall(function()
      local x = t:astype('float64')
      return T.mean(x):item(), T.std(x):item()
    end)
    if ok then lines[#lines + 1] = string.format('- statistics: mean=%.8f, std=%.8f', mean, std) end
  end
  return table.concat(lines, '\n')
end

function PrintHook:_print(msg)
  self.file:write(msg, self['end'])
  if self.flush and self.file.flush then self.file:flush() end
end

function PrintHook:forward_preprocess(func, in_data)
  local parts = { 'function\t' .. func:label(), 'input data' }
  for i = 1, #in_data do parts[#parts + 1] = describe(in_data[i]) end
  self:_print(table.concat(parts, self.sep == '' and '\n' or self.sep))
end

function PrintHook:backward_preprocess(func, in_data, out_grad)
  local parts = { 'function\t' .. func:label(), 'input data' }
  for i = 1, #func.inputs do parts[#parts + 1] = describe(in_data[i]) end
  parts[#parts + 1] = 'output gradient'
  for j = 1, #func.outputs do parts[#parts + 1] = describe(out_grad[j]) end
  self:_print(table.concat(parts, self.sep == '' and '\n' or self.sep))
end

return PrintHook
