-- Shared helpers for the example specs: the chainlua binary, running a
-- command or an example with its exit status, the log an example wrote,
-- scratch folders, dataset checks, a generated CIFAR-10 set.
-- Busted gives spec files its assert; a required module needs luassert's.
local assert = require 'luassert'
local json = require 'chainer.utils.json'
local H = {}
local common = require 'helpers'
H.tmpdir, H.exists, H.rmdir = common.tmpdir, common.exists, common.rmdir

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

-- Runs `chainlua <command>` (an example script and its options) from the
-- repository root; returns its output and exit status.  With a dataset
-- root, the example reads only that root and downloads nothing (the
-- download address is a closed port).
function H.example(command, dataset_root)
  local env = ''
  if dataset_root then
    env = string.format('CHAINER_DATASET_ROOT=%s CHAINER_DATASET_URL_BASE=http://127.0.0.1:9 ', dataset_root)
  end
  return H.run(env .. H.chainlua() .. ' ' .. command)
end

-- Runs an example that must succeed (exit status 0); returns its output.
function H.example_ok(command, dataset_root)
  local text, code = H.example(command, dataset_root)
  assert.are.equal(0, code, text)
  return text
end

-- Runs an example that must fail, with an output matching `pattern` (a Lua
-- pattern); returns the output.
function H.example_fails(command, pattern)
  local text, code = H.example(command)
  assert.are_not.equal(0, code, text)
  assert.matches(pattern, text)
  return text
end

-- The entries of the LogReport an example wrote to <out>/log.
function H.log(out) return json.read_file(out .. '/log') end

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

-- A generated CIFAR-10 binary set in a new scratch dataset root (returned):
-- <root>/cifar10/cifar-10-batches-bin/data_batch_1..5.bin of n_train
-- records each and test_batch.bin of n_test.  A record is a label byte and
-- 3072 pixel bytes (3 channels of 32 x 32); record(file, r) gives the label
-- of record r (0-based) of file 1..6 (6: the test batch) and a function from
-- the pixel index p (0..3071) to its byte.
function H.fake_cifar10(n_train, n_test, record)
  local root = H.tmpdir()
  local dir = root .. '/cifar10/cifar-10-batches-bin'
  os.execute("mkdir -p '" .. dir .. "'")
  local names = { 'data_batch_1', 'data_batch_2', 'data_batch_3', 'data_batch_4', 'data_batch_5', 'test_batch' }
  for file, name in ipairs(names) do
    local parts = {}
    for r = 0, (file == 6 and n_test or n_train) - 1 do
      local label, pixel = record(file, r)
      local px = {}
      for p = 0, 3071 do px[p + 1] = string.char(pixel(p)) end
      parts[#parts + 1] = string.char(label) .. table.concat(px)
    end
    common.write_file(dir .. '/' .. name .. '.bin', table.concat(parts))
  end
  return root
end

return H
