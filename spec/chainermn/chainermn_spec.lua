-- chainermn (issue 16): the communicator's collectives, the multi-node
-- optimizer and scatter_dataset, run in ranks_program.lua as one process
-- (a communicator of size 1) and as two ranks under `mpirun -np 2`.  The
-- MPI runs are separate processes: MPI_Init in the busted process would stay
-- for the rest of the suite.  Tagged `mpi`; without mpirun (or Open MPI)
-- those parts are pending.
local H = require 'examples.helpers'
local helpers = require 'helpers'
local chainermn = require 'chainermn'
local scatter = require 'chainermn.scatter_dataset'
local serialize = require 'chainermn._serialize'
local T = require('chainer').tensor
local testing = require('chainer').testing

-- The programs and the checks each prints (tools_program.lua: the
-- double-buffering optimizer, the iterators, the extensions and links that
-- build on the communicator).
local PROGRAM = 'spec/chainermn/ranks_program.lua'
local TOOLS_PROGRAM = 'spec/chainermn/tools_program.lua'
local TOOLS_CHECKS = { 'double buffering float64', 'double buffering float32', 'double buffering refusals',
  'multi node iterator', 'synchronized iterator', 'generic evaluator', 'observation aggregator', 'early stopping',
  'mnbn model', 'n step rnn' }
-- device_program.lua: device_sync.lua's packing and staging (GPU models), on host arrays
local DEVICE_PROGRAM = 'spec/chainermn/device_program.lua'
local DEVICE_CHECKS = { 'device mean grad float64', 'device mean grad float32', 'device bcast data', 'device layouts',
  'cuda aware query' }
local CHECKS = { 'ranks', 'allreduce', 'bcast', 'objects', 'gather and scatter', 'gather and scatter refusals',
  'data size errors', 'send and recv', 'split', 'functions', 'batch normalization', 'allreduce persistent', 'checkpointer without a trainer', 'model parallel', 'scatter_dataset', 'evaluator', 'training float64', 'training float32',
  'mean grad layouts', 'mean grad shared memory', 'refusals' }

local function have(cmd) local _, code = H.run('command -v ' .. cmd) return code == 0 end
local function have_libmpi()
  local _, code = H.run('ldconfig -p | grep -q "libmpi\\.so"')
  return code == 0
end

-- Under ASan (make asan), memory errors stay fatal in the ranks but leaks
-- are not checked there: Open MPI's plugins leak at MPI_Finalize and are
-- unloaded before LeakSanitizer runs, so no suppression can name them.
local function rank_asan_options()
  if not helpers.under_asan() then return '' end
  return "ASAN_OPTIONS='" .. (os.getenv('ASAN_OPTIONS') or '') .. ":detect_leaks=0' "
end

-- Runs the program (under mpirun when np is given) with a communicator
-- `name`; returns its output and exit status.  One OpenMP thread per rank:
-- the ranks share the machine's cores.
local function run_program(name, np, program)
  local env = string.format("LUA_PATH='%s' OMP_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 " ..
    'OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 ', package.path)
  local launcher = np and string.format('mpirun -np %d --oversubscribe ', np) or ''
  return H.run(env .. rank_asan_options() .. 'timeout 120 ' .. launcher .. helpers.lua_interpreter() .. ' ' .. (program or PROGRAM) .. ' ' .. name)
end

-- Asserts that every rank reported `check` ok.
local function assert_check(out, check, ranks)
  for r = 0, ranks - 1 do
    local line = out:match('check ' .. check:gsub('%p', '%%%0') .. ' rank ' .. r .. ' ([^\n]*)')
    assert(line == 'ok', string.format('check %s on rank %d: %s\n%s', check, r, tostring(line), out))
  end
end

-- One test per entry of checks, all reading the output of one run of the
-- program (run(), made by the first test that needs it) on `ranks` ranks.
local function it_checks(checks, ranks, run)
  local out, code
  for _, check in ipairs(checks) do
    it(check, function()
      if not out then out, code = run() end
      assert.are.equal(0, code, out)
      assert_check(out, check, ranks)
    end)
  end
end

describe('chainermn #mpi', function()
  describe('without MPI calls', function()
    it('require does not load the MPI library', function()
      local out, code = H.run(string.format("LUA_PATH='%s' " .. helpers.lua_interpreter() .. " -e \"require 'chainermn'; " ..
        "for l in io.lines('/proc/self/maps') do if l:find('libmpi') then print('loaded') end end\"", package.path))
      assert.are.equal(0, code, out)
      assert.are.equal('', out)
    end)

    it('names unknown and unbuilt communicators and bad options', function()
      local function err(...) local ok, e = pcall(chainermn.create_communicator, ...) assert.is_false(ok) return e end
      assert.matches("create_communicator: unknown communicator 'nccl' (expected 'flat', 'naive' or 'hierarchical')",
        err('nccl'), 1, true)
      assert.matches("create_communicator: 'pure_nccl' needs NCCL and CUDA", err('pure_nccl'), 1, true)
      assert.matches("create_communicator: the 'two_dimensional' communicator is not built yet", err('two_dimensional'),
        1, true)
      assert.matches("create_communicator: unknown option 'bad'", err('flat', { bad = 1 }), 1, true)
      assert.matches('create_communicator: the name must be a string (got number)', err(3), 1, true)
    end)

    it('DataSizeError: a catchable error object naming the collective and the sizes', function()
      local E = chainermn.DataSizeError
      assert.are.equal(E, chainermn.datasets.DataSizeError)
      local msg = require 'chainermn._message'
      -- the encoder refuses a value over the limit with one (limit lowered: 2 GiB would take minutes)
      testing.patch(msg, 'INT_MAX', 100)(function()
        local s, why = msg.encode(string.rep('a', 200), 'bcast_obj')
        assert.is_nil(s)
        assert.is_true(E.is(why))
        assert.are.same({ 'bcast_obj', 100 }, { why.collective, why.limit })
        assert.are.equal(#require('chainermn._serialize').encode(string.rep('a', 200)), why.size)
        assert.matches('^bcast_obj: the value is too large to send %(%d+ bytes; one MPI call takes at most 100%)$',
          tostring(why))
        assert.is_truthy(msg.encode(string.rep('a', 50), 'bcast_obj'))
      end)()
      local ok, e = pcall(E.raise, 'gather_obj', "rank 1's value", nil, 2147483647)
      assert.is_false(ok)
      assert.is_true(E.is(e))
      assert.is_false(E.is('gather_obj: a string'))
      assert.are.equal("gather_obj: rank 1's value is too large to send (over 2147483647 bytes, the most one MPI " ..
        'call takes)', tostring(e))
    end)

    it('exports the communicators\' class as CommunicatorBase, also under chainermn.communicators', function()
      local Base = chainermn.CommunicatorBase
      assert.are.equal(require('chainermn.communicator'), Base)
      for _, m in ipairs { 'bcast_obj', 'allreduce', 'bcast_data', 'multi_node_mean_grad', 'send', 'gather' } do
        assert.are.equal('function', type(Base[m]), m)
      end
      assert.are.equal(Base, chainermn.communicators.CommunicatorBase)
      assert.are.equal(chainermn.create_communicator, chainermn.communicators.create_communicator)
    end)

    it('splits like Chainer: equal lengths may overlap, otherwise disjoint and covering', function()
      assert.are.same({ { 0, 4 }, { 3, 7 }, { 6, 10 } }, scatter.ranges(10, 3, true))
      assert.are.same({ { 0, 4 }, { 4, 7 }, { 7, 10 } }, scatter.ranges(10, 3, false))
      assert.are.same({ { 0, 5 }, { 5, 10 } }, scatter.ranges(10, 2, true))
      assert.are.same({ { 0, 1 }, { 1, 1 }, { 1, 1 } }, scatter.ranges(1, 3, false))
      assert.are.same({ { 0, 1 }, { 0, 1 }, { 0, 1 } }, scatter.ranges(1, 3, true))
    end)

    it('makes empty datasets for the input-less ranks of a model-parallel job', function()
      local empty = chainermn.datasets.create_empty_dataset({ 5, 6, 7 })
      assert.are.same({ {}, {}, {} }, empty)
      assert.are.equal(chainermn.links.MultiNodeChainList, chainermn.MultiNodeChainList)
    end)

    it('serialises the values the *_obj collectives send', function()
      local v = { 1.5, 'a\0b', true, n = 2 ^ 60 + 2, t = T.array({ { 1, 2 }, { 3, 4 } }, 'int64'), [false] = -0.1 }
      local d = serialize.decode(serialize.encode(v))
      assert.are.same({ 1.5, 'a\0b', true }, { d[1], d[2], d[3] })
      assert.are.equal(2 ^ 60 + 2, d.n)
      assert.are.equal(-0.1, d[false])
      assert.are.same({ 2, 2 }, d.t.shape)
      assert.are.same({ 1, 2, 3, 4 }, d.t:tolist())
      assert.are.equal('int64', d.t.dtype)
      local ok, e = pcall(serialize.encode, { f = print })
      assert.is_false(ok)
      assert.matches('cannot send the value[f]: a function', e, 1, true)
      local cyc = {}
      cyc.self = cyc
      ok, e = pcall(serialize.encode, cyc)
      assert.matches('the table contains itself', e, 1, true)
    end)
  end)

  describe('one process (size 1, no mpirun)', function()
    if not have_libmpi() then
      it('needs Open MPI', function() pending('libmpi.so is not installed (scripts/install-deps installs Open MPI)') end)
      return
    end
    it_checks(CHECKS, 1, function() return run_program('flat') end)
    it_checks(TOOLS_CHECKS, 1, function() return run_program('flat', nil, TOOLS_PROGRAM) end)
    it_checks(DEVICE_CHECKS, 1, function() return run_program('flat', nil, DEVICE_PROGRAM) end)
  end)

  describe('a rank that fails', function()
    it('ends the job through MPI_Abort instead of leaving the others waiting', function()
      if not have('mpirun') then return pending('mpirun is not installed') end
      local exe = H.chainlua()
      if not H.exists(exe) then return pending('no chainlua executable at ' .. exe) end
      local out, code = H.run('OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 ' ..
        'timeout 120 mpirun -np 2 --oversubscribe ' .. exe .. ' spec/chainermn/failing_rank.lua')
      assert.are_not.equal(124, code, 'the job hung:\n' .. out)   -- timeout's status
      assert.are_not.equal(0, code, out)
      assert.matches('rank 1 fails on purpose', out, 1, true)
      assert.matches('chainermn: rank 1 ended with an error; aborting the MPI job', out, 1, true)
      assert.is_nil(out:find('rank 0 was not stopped', 1, true), out)
    end)
  end)

  describe('a killed job', function()
    for _, mode in ipairs({ 'snapshot', 'checkpointer' }) do
      it('resumes on every rank from the ' .. (mode == 'snapshot' and 'multi_node_snapshot' or 'checkpointer'), function()
        if not have('mpirun') then return pending('mpirun is not installed') end
        local exe = H.chainlua()
        if not H.exists(exe) then return pending('no chainlua executable at ' .. exe) end
        local dir = H.run('mktemp -d'):gsub('%s+$', '')
        local launch = string.format(rank_asan_options() .. "LUA_PATH='%s' OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 " ..
          'OMP_NUM_THREADS=1 timeout 120 mpirun -np 2 --oversubscribe %s spec/chainermn/resume_program.lua %s %s ',
          package.path, exe, mode, dir)
        local out, code = H.run(launch .. 'first')
        assert.are_not.equal(124, code, 'the job hung:\n' .. out)
        assert.matches('rank 1 stops at iteration 4 on purpose', out, 1, true)
        assert.is_nil(out:find('the job was not stopped', 1, true), out)
        out, code = H.run(launch .. 'resume')
        H.run("rm -rf '" .. dir .. "'")
        assert.are.equal(0, code, out)
        assert_check(out, 'resumes', 2)
        assert_check(out, 'continues', 2)
      end)
    end
  end)

  for _, name in ipairs({ 'flat', 'naive', 'hierarchical' }) do
    describe('two ranks under mpirun, ' .. name, function()
      if not have('mpirun') then
        it('needs mpirun', function() pending('mpirun is not installed (scripts/install-deps installs Open MPI)') end)
        return
      end
      it_checks(CHECKS, 2, function() return run_program(name, 2) end)
      it_checks(TOOLS_CHECKS, 2, function() return run_program(name, 2, TOOLS_PROGRAM) end)
      it_checks(DEVICE_CHECKS, 2, function() return run_program(name, 2, DEVICE_PROGRAM) end)
    end)
  end
end)
