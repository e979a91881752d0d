-- Shared helpers for the example specs: the chainlua binary, running a
-- command with its exit status, scratch folders, dataset checks.
local H = {}
local common = require 'helpers'
H.tmpdir, H.exists = common.tmpdir, common.exists

-- The chainlua binary of the build under test (CHAINLUA_BUILD, or the
-- folder of CHAINLUA_LIB, else build/).
function H.chainlua()
  local b = os.getenv('CHAINLUA_BUILD')
  if b then return b .. '/chainlua' end
  local lib = os.getenv('CHAINLUA_LIB')
  if lib then return (lib:gsub('/[^/]*$', '')) .. '/chainlua' end
  return 'build/chainlua'
end

-- Runs a shell command; returns its output (stdout and stderr) and exit
-- status.  LuaJIT's popen():close() gives no status (Lua 5.1), so the
-- shell prints it last.
function H.run(cmd)
  local p = io.popen('(' .. cmd .. ') 2>&1; echo "__exit_status=$?"')
  local out = p:read('*a')
  p:close()
  local code = tonumber(out:match('__exit_status=(%d+)%s*$'))
  out = out:gsub('__exit_status=%d+%s*$', '')
  return out, code or 1
end


-- Whether any of the files (relative to the dataset root,
-- CHAINER_DATASET_ROOT or ~/.chainer/dataset) exists.
function H.have_dataset(...)
  local root = os.getenv('CHAINER_DATASET_ROOT') or ((os.getenv('HOME') or '') .. '/.chainer/dataset')
  for i = 1, select('#', ...) do
    if H.exists(root .. '/' .. select(i, ...)) then return true end
  end
  return false
end

function H.have_mnist()
  return H.have_dataset('mnist/train-images-idx3-ubyte.gz', 'pfnet/chainer/mnist/train.npz')
end

function H.have_ptb() return H.have_dataset('ptb/ptb.train.txt', 'pfnet/chainer/ptb/train.npz') end

return H
