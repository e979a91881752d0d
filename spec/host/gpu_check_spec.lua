-- scripts/gpu-check without a GPU: --self-test runs the whole harness with
-- the CPU standing in for the GPU (a tiny part of each step, a planted spec
-- failure, a planted missing kernel, a planted wrong value and a planted
-- hang), so the script, its parsing, its time limits and its summary are
-- proved before the one short run on a real GPU; and a machine without a
-- GPU gets one line saying so.
local U = require 'host.util'
local json = require 'chainer.utils.json'
local q = U.quote

local oracle_dir = os.getenv('ORACLE_DIR') or (U.root .. '/../shared/oracle/vectors-v2')
local datasets = os.getenv('CHAINER_DATASET_ROOT') or (U.root .. '/../shared/data')

local function tmpdir()
  local d = os.tmpname()
  os.remove(d)
  assert(os.execute('mkdir -p ' .. q(d)) == 0)
  return d
end

describe('scripts/gpu-check', function()
  if not U.exists(oracle_dir .. '/index.json') or not U.exists(datasets .. '/mnist/train-images-idx3-ubyte.gz') then
    pending('needs the oracle vectors and MNIST (../shared)')
    return
  end

  describe('--self-test', function()
    local out, work, stdout, stderr, status, summary
    setup(function()
      out, work = tmpdir(), tmpdir()
      stdout, stderr, status = U.run(string.format('%s/scripts/gpu-check %s --self-test --build %s --work %s',
        q(U.root), q(out), q(U.build), q(work)), { env = 'ORACLE_DIR=' .. q(oracle_dir) })
      local text = U.read(out .. '/summary.json')
      summary = text and json.decode(text)
    end)
    teardown(function()
      os.execute('rm -rf ' .. q(out) .. ' ' .. q(work))
    end)

    it('sees every planted outcome and exits 0', function()
      assert(summary, 'no summary.json; stdout:\n' .. stdout .. '\nstderr:\n' .. stderr)
      assert.are.equal(0, status, stdout .. stderr)
      assert.is_true(summary.ok)
      assert.are.same({}, summary.self_test_problems)
      assert.matches('gpu%-check PASSED on cpu', stdout)
    end)

    it('writes three files, the logs as one archive', function()
      local p = io.popen('ls ' .. q(out))
      local files = p:read('*a')
      p:close()
      assert.are.equal('logs.tar.gz\nsummary.json\nsummary.txt\n', files)
      local _, _, rc = U.run(string.format('(tar -tzf %s/logs.tar.gz | grep -q logs/oracle.jsonl)', q(out)))
      assert.are.equal(0, rc)
    end)

    it('reports each step with its status, counts and details', function()
      local by = {}
      for _, s in ipairs(summary.steps) do by[s.name] = s end
      local sp = by['spec-sample_gpu']
      assert.are.equal('fail', sp.status)
      assert.are.same({ 1, 1, 1 }, { sp.specs.passed, sp.specs.failed, sp.specs.pending })
      assert.matches('the planted failure', sp.specs.failures[1].message)
      -- the second file ran alongside the first, with its own log and line
      local sp2 = by['spec-second_gpu']
      assert.are.equal('pass', sp2.status)
      assert.are.same({ 1, 0, 0 }, { sp2.specs.passed, sp2.specs.failed, sp2.specs.pending })
      local o = by.oracle.oracle
      assert.are.equal('relu', o.no_gpu_kernel[1].op)
      assert.are.equal(2, o.no_gpu_kernel[1].cases)
      -- the shifted sigmoid: a failure against Chainer, with its inputs, and a disagreement with the host
      assert.matches('^sigmoid/', o.failures[1].id)
      assert.are.equal('x float64 (3,4)', o.failures[1].inputs[1])
      assert.is_true(o.failures[1].max_abs_err > 9e-4)
      assert.is_true(o.counts.disagree >= 1)
      assert.is_true(o.counts.pass >= 10)
      assert.are.equal('pass', by.mnist.status)
      assert.is_number(by.mnist.example.loss)
      assert.are.equal('pass', by.convnet.status)
      assert.is_true(by['bench-mlp'].bench[1].samples_per_s > 0)
      assert.are.equal('timeout', by.hang.status)
    end)
  end)

  it('without a GPU says so in one line and exits 2', function()
    local _, _, has_gpu = U.chainlua("-e \"os.exit(require('chainer').cuda.available and 0 or 1)\"")
    if has_gpu == 0 then
      pending('this machine has a GPU')
      return
    end
    local out = tmpdir()
    local stdout, stderr, status = U.run(string.format('%s/scripts/gpu-check %s --build %s', q(U.root), q(out), q(U.build)))
    os.execute('rm -rf ' .. q(out))
    assert.are.equal(2, status, stdout .. stderr)
    local last = stdout:match('([^\n]*)\n$')
    assert.matches('^gpu%-check: no GPU found %(', last)
  end)
end)
