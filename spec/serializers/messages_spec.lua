-- What a user sees when a file cannot be read or written: the function they
-- called, once, and the file; never a position inside chainlua's own
-- modules ('.../lua/chainer/x.lua:156: ') or a doubled 'load_npz: load_npz:'.
local chainer = require 'chainer'
local L, S, T = chainer.links, chainer.serializers, chainer.tensor
local H = require 'helpers'

-- The message of f's error with the spec's own position (where the user's
-- call was) checked and removed.
local function user_message(f)
  local msg = H.err_of(f)
  local rest = msg:match('^spec/serializers/messages_spec%.lua:%d+: (.*)$')
  assert(rest, 'no position of the caller, or another one: ' .. msg)
  return rest
end

describe('error messages of file readers and writers', function()
  local dir
  before_each(function() dir = H.tmpdir() end)
  after_each(function() H.rmdir(dir) end)

  it('a damaged member under load_npz: one load_npz, the file and the member', function()
    local path = dir .. '/m.npz'
    S.save_npz(path, L.Linear(3, 2), { compression = false })
    local data = H.read_file(path)
    local at = data:find('\147NUMPY', 1, true) + 200          -- inside the first member's data
    H.write_file(path, data:sub(1, at - 1) .. string.char((data:byte(at) + 1) % 256) .. data:sub(at + 1))
    local msg = user_message(function() S.load_npz(path, L.Linear(3, 2)) end)
    assert.matches("^load_npz: '" .. path:gsub('%p', '%%%0') .. "' member '[Wb]%.npy': CRC%-32 mismatch %(stored %x+, computed %x+%)$", msg)
    -- a deserializer used directly names itself
    local d = S.NpzDeserializer(path)
    assert.matches("^NpzDeserializer: '" .. path:gsub('%p', '%%%0') .. "' member '[Wb]%.npy': CRC%-32 mismatch",
      H.err_of(d.load, d, L.Linear(3, 2)))
  end)

  it('opening through a deserializer or load_hdf5 names that function only', function()
    local path = dir .. '/junk'
    H.write_file(path, 'garbage')
    assert.equal(string.format("NpzDeserializer: '%s' is not a valid npz/zip file: too short (7 bytes)", path),
      user_message(function() S.NpzDeserializer(path) end))
    assert.equal(string.format("load_hdf5: '%s' is not an HDF5 file (or is damaged)", path),
      user_message(function() S.load_hdf5(path, L.Linear(3, 2)) end))
    assert.equal(string.format("HDF5Deserializer: cannot open '%s/none.h5'", dir),
      user_message(function() S.HDF5Deserializer(dir .. '/none.h5') end))
    assert.equal(string.format("save_npz: cannot create '%s/no/m.npz' (No such file or directory)", dir),
      user_message(function() S.save_npz(dir .. '/no/m.npz', L.Linear(3, 2)) end))
  end)

  it('a damaged snapshot found by autoload', function()
    H.write_file(dir .. '/snapshot_iter_3', 'junk')
    local snap = chainer.training.extensions.snapshot({ autoload = true })
    local err = H.err_of(snap.initialize, snap, { out = dir, updater = { iteration = 0 }, serialize = function() end })
    assert.equal(string.format("snapshot: autoload failed: load_npz: '%s/snapshot_iter_3' is not a valid npz/zip " ..
      'file: too short (4 bytes)', dir), err)
  end)

  it("a damaged dataset cache: the loader's name and the file", function()
    local cache = dir .. '/pfnet/chainer/mnist'
    os.execute("mkdir -p '" .. cache .. "'")
    H.write_file(cache .. '/train.npz', 'junk')
    chainer.dataset.set_dataset_root(dir)
    local ok, msg = pcall(function() return user_message(function() chainer.datasets.get_mnist() end) end)
    chainer.dataset.set_dataset_root(nil)
    assert(ok, msg)
    assert.equal(string.format("get_mnist: '%s/train.npz' is not a valid npz/zip file: too short (4 bytes)", cache),
      msg)
  end)
end)
