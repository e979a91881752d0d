-- _errors.lua: the text of an error that a public function passes on to the
-- user (internal; not exported).
--
-- Lua puts 'file.lua:N: ' before a message raised with a level.  When the
-- file is one of chainlua's own modules the position tells the user nothing
-- (they want their own line), and when a public function passes on what an
-- inner function raised, the inner name ('open_hdf5: ', 'savez_compressed: ')
-- reads as a second function the user never called.  These helpers remove
-- both, so a message names the function the user called, once.
local M = {}

-- '.../lua/chainer/' (or however package.path reached this file)
local OWN_DIR = debug.getinfo(1, 'S').source:match('^@(.*/)[^/]*$')

-- Names of the runtime's readers and writers and of the serializer classes:
-- the inner functions whose errors the public ones pass on.
local INNER = {}
for _, n in ipairs({ 'open_npz', 'load_npz', 'save_npz', 'savez', 'savez_compressed', 'load', 'save', 'open_hdf5',
  'load_hdf5', 'save_hdf5', 'hdf5_read', 'hdf5_write', 'keys', 'load_idx', 'NpzDeserializer', 'HDF5Deserializer',
  'DictionarySerializer', 'HDF5Serializer' }) do
  INNER[n] = true
end

-- Another public function whose errors one more public function passes on
-- (get_ptb_words calls get_ptb_words_vocabulary).
function M.add_inner(name) INNER[name] = true end

-- msg without the positions ('path.lua:N: ') inside chainlua's own modules.
function M.clean(msg)
  msg = tostring(msg)
  if not OWN_DIR then return msg end
  return (msg:gsub('(%S*)%.lua:%d+: ', function(path)
    if (path .. '.lua'):find(OWN_DIR, 1, true) then return '' end
  end))
end

-- True when msg starts with a position that clean() kept (the user's line).
function M.has_position(msg)
  return msg:match('^%S+:%d+: ') ~= nil
end

-- The message of an inner failure as `fn`'s: cleaned, an inner function's
-- name at its start replaced by fn, and `file` named when given and absent.
-- 'load_hdf5' + "open_hdf5: 'm.h5' is not an HDF5 file" gives
-- "load_hdf5: 'm.h5' is not an HDF5 file".
function M.as(fn, msg, file)
  msg = M.clean(msg)
  local position, rest = msg:match('^(%S+:%d+: )(.*)$')
  if position == nil then position, rest = '', msg end
  local name, body = rest:match('^([%w_]+): (.*)$')
  if name and (name == fn or INNER[name]) then
    rest = body
    -- 'load_npz: load_npz: ...' and the like, from nested passes
    local again, body2 = rest:match('^([%w_]+): (.*)$')
    while again and (again == fn or INNER[again]) do
      rest = body2
      again, body2 = rest:match('^([%w_]+): (.*)$')
    end
  end
  if file and not rest:find(file, 1, true) then rest = string.format("'%s': %s", file, rest) end
  return position .. fn .. ': ' .. rest
end

-- Raises an inner failure as fn's error: at the caller of the caller's
-- public function (`level`, as error() counts from the function calling
-- this one), unless the message already carries the user's position.
function M.raise(fn, msg, level, file)
  local text = M.as(fn, msg, file)
  if M.has_position(text) then error(text, 0) end
  error(text, (level or 1) + 1)
end

return M
