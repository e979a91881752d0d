-- functions/array/pad_sequence.lua: F.pad_sequence(xs, length = nil,
-- padding = 0): the arrays xs[i] (len_i, ...) stacked into
-- (#xs, length, ...), each padded at the end with `padding`.  Composed of
-- pad and stack, so the gradient slices gy back (and differentiates again).
local args = require 'chainer._args'
local U = require 'chainer.functions.array._util'

local M = {}

local SIGNATURE = args.signature { 'length', 'padding' }

function M.pad_sequence(xs, length, padding)
  local v = args.parse('pad_sequence', SIGNATURE, 2, length, padding)
  U.list('pad_sequence', xs)
  length, padding = v.length, v.padding
  if length == false then length = nil end
  if padding == nil or padding == false then padding = 0 end
  if type(padding) ~= 'number' then error('pad_sequence: padding must be a number', 2) end
  local first = args.array('pad_sequence', 'xs[1]', xs[1])
  local rest = first.shape
  if #rest == 0 then error('pad_sequence: the arrays must be at least 1-d', 2) end
  local maxlen = 0
  for i = 1, #xs do
    local s = args.array('pad_sequence', 'x', xs[i]).shape
    if #s ~= #rest then error(string.format('pad_sequence: xs[%d] is %d-d but xs[1] is %d-d', i, #s, #rest), 2) end
    for k = 2, #s do
      if s[k] ~= rest[k] then
        error(string.format('pad_sequence: xs[%d] has shape %s but the trailing axes of xs[1] are %s', i,
          require('chainer.tensor').shape_str(s), require('chainer.tensor').shape_str(rest)), 2)
      end
    end
    if s[1] > maxlen then maxlen = s[1] end
  end
  if length == nil then length = maxlen end
  if type(length) ~= 'number' or length ~= math.floor(length) or length < maxlen then
    error(string.format('pad_sequence: length %s is shorter than the longest sequence (%d)', tostring(length), maxlen), 2)
  end
  local pad = require('chainer.functions.array.pad').pad
  local stack = require('chainer.functions.array.concat').stack
  local ys = {}
  for i = 1, #xs do
    local n = args.array('pad_sequence', 'x', xs[i]).shape[1]
    local widths = { { 0, length - n } }
    for k = 2, #rest do widths[k] = { 0, 0 } end
    ys[i] = pad(xs[i], widths, 'constant', { constant_values = padding })
  end
  return stack(ys, 0)
end

return M
