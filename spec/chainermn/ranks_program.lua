-- The program chainermn_spec.lua starts under `mpirun -np 2` (and alone,
-- as a communicator of size 1); the checks hold for any number of ranks
-- (`mpirun -np 3 chainlua spec/chainermn/ranks_program.lua flat`).  Each check prints one line per rank:
--   check <name> rank <r> ok
--   check <name> rank <r> FAIL <message>
-- A check that fails on one rank may leave the others waiting in a
-- collective; the spec bounds the whole run with `timeout`.
local S = require 'spec.chainermn.program_setup'
local chainer, chainermn, T, L, F = S.chainer, S.chainermn, S.T, S.L, S.F
local comm, rank, size = S.comm, S.rank, S.size
local check, expect, max_diff, mlp = S.check, S.expect, S.max_diff, S.mlp

check('ranks', function()
  expect(rank >= 0 and rank < size, 'rank ' .. rank .. ' outside 0..' .. (size - 1))
  -- one machine: every rank shares the node
  expect(comm.intra_size == size and comm.intra_rank == rank, 'intra ' .. comm.intra_rank .. '/' .. comm.intra_size)
  expect(comm.inter_size == 1 and comm.inter_rank == 0, 'inter ' .. comm.inter_rank .. '/' .. comm.inter_size)
end)

check('allreduce', function()
  -- rank r contributes (r + 1) * x: the sum is size * (size + 1) / 2 * x
  for _, dtype in ipairs({ 'float32', 'float64', 'int32', 'int64' }) do
    local x = T.array({ { 1, 2, 3 }, { 4, 5, 6 } }, dtype)
    local got = comm:allreduce(x * (rank + 1))
    expect(got.dtype == dtype, 'dtype ' .. got.dtype)
    expect(max_diff(got:astype('float64'), x:astype('float64') * (size * (size + 1) / 2)) == 0,
      dtype .. ': ' .. tostring(got))
  end
  local ok, err = pcall(comm.allreduce, comm, T.zeros({ rank + 1 }, 'float64'))
  if size > 1 then
    local listed = {}
    for r = 0, size - 1 do listed[r + 1] = 'rank ' .. r .. ': float64 of shape (' .. (r + 1) .. ')' end
    expect(not ok and err:find('allreduce: the ranks passed different arguments (' .. table.concat(listed, '; ') .. ')',
      1, true), 'shape mismatch: ' .. tostring(err))
  else
    expect(ok, tostring(err))
  end
end)

check('bcast', function()
  for root = 0, size - 1 do
    local mine = T.array({ { root + 0.5, -1 }, { 2, 3 } }, 'float64')
    local got = comm:bcast(rank == root and mine or nil, root)
    expect(got.dtype == 'float64' and table.concat(got.shape, ',') == '2,2', 'got ' .. tostring(got))
    expect(max_diff(got, mine) == 0, 'root ' .. root .. ': ' .. tostring(got))
  end
  local h = comm:bcast(rank == 0 and T.array({ 1.5, 2 }, 'float16') or nil, 0)
  expect(h.dtype == 'float16' and h:get(0) == 1.5, 'float16 ' .. tostring(h))
end)

check('objects', function()
  local v = comm:bcast_obj(rank == 0 and { name = 'x', list = { 1, 2.5, true } } or nil)
  expect(v.name == 'x' and v.list[2] == 2.5 and v.list[3] == true, 'bcast_obj')
  local s = comm:allreduce_obj({ n = rank + 1, t = T.array({ 1, rank }, 'float64') })
  expect(s.n == size * (size + 1) / 2, 'allreduce_obj n ' .. tostring(s.n))
  expect(s.t:get(0) == size and s.t:get(1) == size * (size - 1) / 2, 'allreduce_obj tensor ' .. tostring(s.t))
  local g = comm:gather_obj('from ' .. rank, size - 1)
  if rank == size - 1 then
    expect(#g == size, 'gather_obj length')
    for r = 0, size - 1 do expect(g[r + 1] == 'from ' .. r, 'gather_obj ' .. tostring(g[r + 1])) end
  else
    expect(g == nil, 'gather_obj on a non-root rank')
  end
end)

check('gather and scatter', function()
  -- rank r passes an (r + 1) x 2 tensor of r's: shapes may differ by rank
  local mine = T.full({ rank + 1, 2 }, rank, 'float64')
  local function expect_all(got, what)
    expect(type(got) == 'table' and #got == size, what .. ': ' .. size .. ' tensors')
    for r = 0, size - 1 do
      local y = got[r + 1]
      expect(table.concat(y.shape, ',') == (r + 1) .. ',2' and y.dtype == 'float64', what .. ' shape ' .. tostring(y))
      expect(max_diff(y, T.full({ r + 1, 2 }, r, 'float64')) == 0, what .. ' values ' .. tostring(y))
    end
  end
  for root = 0, size - 1 do
    local g = comm:gather(mine, root)
    if rank == root then expect_all(g, 'gather') else expect(g == nil, 'gather on a non-root rank') end
  end
  expect_all(comm:allgather(mine), 'allgather')
  -- float16 and 0-d tensors travel too
  local h = comm:allgather(T.array(rank + 0.5, 'float16'))
  expect(h[size]:item() == size - 0.5 and h[size].ndim == 0, 'allgather float16 0-d ' .. tostring(h[size]))
  -- alltoall: rank r sends {r, j} repeated j + 1 times to rank j
  local xs = {}
  for j = 0, size - 1 do xs[j + 1] = T.array({ rank, j }, 'int32'):reshape({ 1, 2 }):repeat_(j + 1, 0) end
  local ys = comm:alltoall(xs)
  for r = 0, size - 1 do
    local y = ys[r + 1]
    expect(table.concat(y.shape, ',') == (rank + 1) .. ',2', 'alltoall shape ' .. tostring(y))
    expect(y:get(rank, 0) == r and y:get(rank, 1) == rank, 'alltoall values ' .. tostring(y))
  end
  -- scatter from an array (shapes may differ) and from one tensor's rows
  for root = 0, size - 1 do
    local parts = {}
    for r = 0, size - 1 do parts[r + 1] = T.full({ r + 2 }, 10 * root + r, 'float32') end
    local got = comm:scatter(rank == root and parts or nil, root)
    expect(got.size == rank + 2 and got:get(0) == 10 * root + rank, 'scatter array ' .. tostring(got))
    local rows = T.arange(0, 3 * size, 1, 'int64'):reshape({ size, 3 })
    got = comm:scatter(rank == root and rows or nil, root)
    expect(table.concat(got.shape, ',') == '3' and got:get(0) == 3 * rank, 'scatter rows ' .. tostring(got))
  end
  -- scatter_obj
  local values = {}
  for r = 1, size do values[r] = { index = r, text = 'for ' .. (r - 1) } end
  local v = comm:scatter_obj(rank == 0 and values or nil, 0)
  expect(v.index == rank + 1 and v.text == 'for ' .. rank, 'scatter_obj')
end)

check('gather and scatter refusals', function()
  -- a dtype on one rank only: every rank raises, listing them
  local x = T.zeros({ 2 }, rank == size - 1 and 'float32' or 'float64')
  local ok, err = pcall(comm.allgather, comm, x)
  if size > 1 then
    local listed = {}
    for r = 0, size - 1 do listed[r + 1] = 'rank ' .. r .. ': ' .. (r == size - 1 and 'float32' or 'float64') .. ' of shape (2)' end
    expect(not ok and err:find('allgather: every rank must pass one dtype (' .. table.concat(listed, '; ') .. ')', 1,
      true), 'allgather dtypes: ' .. tostring(err))
  else
    expect(ok, tostring(err))
  end
  -- a bad argument on the last rank
  ok, err = pcall(comm.gather, comm, rank == size - 1 and 'x' or T.zeros({ 1 }), 0)
  expect(not ok and err:find(rank == size - 1 and 'gather: expected a tensor (got string)' or
    ('gather: rank ' .. (size - 1) .. ' passed a bad argument'), 1, true), 'gather: ' .. tostring(err))
  ok, err = pcall(comm.alltoall, comm, rank == size - 1 and { T.zeros({ 1 }) } or (function()
    local xs = {}
    for j = 1, size do xs[j] = T.zeros({ 1 }) end
    return xs
  end)())
  if size > 1 then
    expect(not ok and err:find(rank == size - 1 and 'alltoall: expected ' .. size .. ' tensors, one per rank (got 1)' or
      ('alltoall: rank ' .. (size - 1) .. ' passed a bad argument'), 1, true), 'alltoall: ' .. tostring(err))
  end
  ok, err = pcall(comm.scatter, comm, rank == 0 and T.zeros({ size + 1, 2 }) or nil, 0)
  expect(not ok and err:find(rank == 0 and ('scatter: a tensor must have ' .. size .. ' entries, one per rank') or
    'scatter: the root (rank 0) passed a bad argument', 1, true), 'scatter: ' .. tostring(err))
  ok, err = pcall(comm.scatter_obj, comm, rank == 0 and { print } or nil, 0)
  expect(not ok and err:find(rank == 0 and 'scatter_obj: ' or 'scatter_obj: the root (rank 0) passed values',
    1, true), 'scatter_obj: ' .. tostring(err))
  expect(comm:allreduce_obj(1) == size, 'out of step after the refusals')
end)

-- DataSizeError: a payload larger than one MPI call takes (2 GiB), shown
-- with the limit lowered to 200 bytes; every rank of the collective raises
-- it and the ranks stay in step.
check('data size errors', function()
  local DataSizeError = chainermn.DataSizeError
  local encoded = #require('chainermn._serialize').encode(string.rep('x', 300))
  local function expect_size_error(what, collective, bytes, phrase, ok, e)
    expect(not ok and DataSizeError.is(e), what .. ': expected a DataSizeError, got ' .. tostring(e))
    expect(e.collective == collective and e.size == bytes and e.limit == 200,
      string.format('%s: %s, %s, %s', what, tostring(e.collective), tostring(e.size), tostring(e.limit)))
    expect(tostring(e):find(phrase, 1, true), what .. ' message: ' .. tostring(e))
  end
  chainer.testing.patch('chainermn._message.INT_MAX', 200)(function()
    local big = string.rep('x', 300)
    local last = size - 1
    for root = 0, size - 1 do
      expect_size_error('bcast_obj', 'bcast_obj', encoded,
        rank == root and 'bcast_obj: the value is too large to send (' .. encoded .. ' bytes; one MPI call takes ' ..
        'at most 200)' or "bcast_obj: the root's (rank " .. root .. ') value is too large to send (' .. encoded,
        pcall(comm.bcast_obj, comm, rank == root and big or nil, root))
    end
    expect_size_error('gather_obj', 'gather_obj', rank == last and encoded or nil,
      rank == last and 'gather_obj: the value is too large' or ('gather_obj: rank ' .. last .. "'s value is too " ..
      'large to send (over 200 bytes'), pcall(comm.gather_obj, comm, rank == last and big or 'small', 0))
    local values = {}
    for r = 1, size do values[r] = r == size and big or 'small' end
    expect_size_error('scatter_obj', 'scatter_obj', rank == 0 and encoded or nil,
      rank == 0 and ('scatter_obj: the value for rank ' .. last .. ' is too large') or
      "scatter_obj: the root's (rank 0) values are too large", pcall(comm.scatter_obj, comm, rank == 0 and values or nil, 0))
    -- each value fits; together they do not
    local part = string.rep('y', 150)
    local part_bytes = #require('chainermn._serialize').encode(part)
    if size > 1 then
      expect_size_error('allreduce_obj', 'allreduce_obj', part_bytes * size,
        'allreduce_obj: the values together are too large to send (' .. (part_bytes * size) .. ' bytes',
        pcall(comm.allreduce_obj, comm, part))
    end
    if size > 1 then
      expect_size_error('allgather', 'allgather', 160 * size, 'allgather: the tensors together are too large',
        pcall(comm.allgather, comm, T.zeros({ 20 }, 'float64')))
      -- scatter: the root finds the parts too large together, the others learn it from the root
      expect_size_error('scatter', 'scatter', rank == 0 and 160 * size or nil, rank == 0 and
        'scatter: the tensors together are too large' or "scatter: the root's (rank 0) tensors together are too large",
        pcall(comm.scatter, comm, rank == 0 and (function()
          local parts = {}
          for r = 1, size do parts[r] = T.zeros({ 20 }, 'float64') end
          return parts
        end)() or nil, 0))
    end
    if size > 1 then
      -- alltoall: only the last rank's sends are too large together (every
      -- rank's receives fit); every rank raises instead of the others
      -- waiting in MPI_Alltoallv
      local parts = {}
      for r = 1, size do parts[r] = T.zeros({ rank == last and 20 or 1 }, 'float64') end
      local ok, e = pcall(comm.alltoall, comm, parts)
      expect(not ok and DataSizeError.is(e), 'alltoall: expected a DataSizeError, got ' .. tostring(e))
      expect(e.collective == 'alltoall', 'alltoall: ' .. tostring(e.collective))
    end
    -- send_obj: the sender raises, and so does the receiver
    local nxt, prev = (rank + 1) % size, (rank - 1) % size
    local sent = { pcall(comm.send_obj, comm, big, nxt, 9) }
    local received = { pcall(comm.recv_obj, comm, prev, 9) }
    expect_size_error('send_obj', 'send_obj', encoded, 'send_obj: the value is too large', unpack(sent))
    expect_size_error('recv_obj', 'recv_obj', encoded, 'recv_obj: the value of rank ' .. prev .. ' is too large',
      unpack(received))
  end)()
  expect(comm:bcast_obj(rank == 0 and string.rep('z', 300) or nil) == string.rep('z', 300),
    'out of step after the data size errors')
end)

check('send and recv', function()
  if size == 1 then
    -- objects may go to oneself (MPI_Send buffers small messages)
    comm:send_obj({ 1, 'a' }, 0, 3)
    local v = comm:recv_obj(0, 3)
    expect(v[1] == 1 and v[2] == 'a', 'send_obj to self')
    return
  end
  -- a ring: each rank sends to the next and receives from the previous;
  -- even ranks send first so that the synchronous sends pair up
  local nxt, prev = (rank + 1) % size, (rank - 1) % size
  local function exchange(send_fn, recv_fn)
    if rank % 2 == 0 then send_fn(); return recv_fn() end
    local got = recv_fn(); send_fn(); return got
  end
  local got = exchange(function() comm:send(T.full({ 2, rank + 1 }, rank, 'float32'), nxt, 5) end,
    function() return comm:recv(prev, 5) end)
  expect(T.is_tensor(got) and table.concat(got.shape, ',') == '2,' .. (prev + 1) and got:get(0, 0) == prev,
    'recv tensor ' .. tostring(got))
  got = exchange(function() comm:send({ T.ones({ 3 }, 'int64'), T.zeros({ 1, 1 }, 'int64') }, nxt, 6) end,
    function() return comm:recv(prev) end)
  expect(type(got) == 'table' and #got == 2 and got[1].size == 3 and got[2].ndim == 2 and got[1].dtype == 'int64',
    'recv array')
  got = exchange(function() comm:send_obj({ from = rank }, nxt) end, function() return comm:recv_obj(prev) end)
  expect(got.from == prev, 'recv_obj')
  -- a bad tensor: the sender raises, and the receiver learns why
  local send_ok, send_err, recv_ok, recv_err
  exchange(function() send_ok, send_err = pcall(comm.send, comm, { T.ones({ 1 }), T.ones({ 1 }, 'int32') }, nxt, 7) end,
    function() recv_ok, recv_err = pcall(comm.recv, comm, prev, 7) end)
  expect(not send_ok and send_err:find('send: all tensors must have one dtype (element 1 is float32, element 2 int32)',
    1, true), 'bad send: ' .. tostring(send_err))
  expect(not recv_ok and recv_err:find('recv: rank ' .. prev .. ' could not send: all tensors must have one dtype',
    1, true), 'bad send received: ' .. tostring(recv_err))
  local ok, err
  ok, err = pcall(comm.send, comm, T.ones({ 1 }), size)
  expect(not ok and err:find('send: dest must be a rank in 0..' .. (size - 1) .. ' (got ' .. size .. ')', 1, true),
    'dest: ' .. tostring(err))
  expect(comm:allreduce_obj(1) == size, 'out of step after send and recv')
end)

check('split', function()
  -- one communicator per parity of rank, ordered by descending rank
  local sub = comm:split(rank % 2, size - rank)
  local members = 0
  for r = 0, size - 1 do if r % 2 == rank % 2 then members = members + 1 end end
  expect(sub.size == members and sub.name == comm.name, 'split size ' .. sub.size)
  local all = sub:allgather(T.array({ rank }, 'int32'))
  for i = 2, #all do expect(all[i]:get(0) < all[i - 1]:get(0), 'split order') end
  expect(all[sub.rank + 1]:get(0) == rank, 'split rank')
  expect(sub:allreduce_obj(rank) == comm:allreduce_obj(rank % 2 == 0 and rank or 0) or rank % 2 == 1,
    'split sums')
end)

check('functions', function()
  local MF = chainermn.functions
  local V = chainer.Variable
  local function all_equal(g, value, what)
    expect(g ~= nil, what .. ': no gradient')
    expect(max_diff(g, T.full(g.shape, value, g.dtype)) < 1e-12, what .. ': ' .. tostring(g))
  end
  -- allgather: every rank weighs ys[k] by k, so each x gets size * (its rank + 1)
  local x = V(T.full({ 2, 3 }, rank, 'float64'))
  local ys = MF.allgather(comm, x)
  local loss = F.sum(ys[1])
  for k = 2, #ys do loss = loss + F.sum(ys[k]) * k end
  loss:backward()
  all_equal(x.grad, size * (rank + 1), 'allgather')
  -- alltoall: rank r weighs what came from rank k - 1 by k, so xs[j] on
  -- rank q gets q + 1
  local xs = {}
  for j = 1, size do xs[j] = V(T.full({ j }, 10 * rank + j, 'float64')) end
  ys = MF.alltoall(comm, xs)
  expect(ys[1].array:get(0) == rank + 1, 'alltoall forward')
  loss = F.sum(ys[1])
  for k = 2, #ys do loss = loss + F.sum(ys[k]) * k end
  loss:backward()
  for j = 1, size do all_equal(xs[j].grad, rank + 1, 'alltoall xs[' .. j .. ']') end
  -- bcast: root's gradient is the sum of every rank's (rank + 1)
  x = V(T.full({ 3 }, 7, 'float64'))
  local y = MF.bcast(comm, rank == 0 and x or nil, 0)
  expect(y.array:get(2) == 7, 'bcast forward')
  F.sum(y * (rank + 1)):backward()
  if rank == 0 then all_equal(x.grad, size * (size + 1) / 2, 'bcast') end
  -- gather: root weighs rank k - 1's x by k; the others backward from their empty output
  x = V(T.full({ 2 }, rank, 'float64'))
  ys = MF.gather(comm, x, 0)
  if rank == 0 then
    expect(#ys == size and ys[size].array:get(0) == size - 1, 'gather forward')
    loss = F.sum(ys[1])
    for k = 2, #ys do loss = loss + F.sum(ys[k]) * k end
    loss:backward()
  else
    ys.grad = T.zeros({ 0 }, 'float64')
    ys:backward()
  end
  all_equal(x.grad, rank + 1, 'gather')
  -- scatter: rank r weighs its piece by r + 1
  xs = nil
  if rank == 0 then
    xs = {}
    for j = 1, size do xs[j] = V(T.full({ 2 }, j, 'float64')) end
  end
  y = MF.scatter(comm, xs, 0)
  expect(y.array:get(0) == rank + 1, 'scatter forward')
  F.sum(y * (rank + 1)):backward()
  if rank == 0 then for j = 1, size do all_equal(xs[j].grad, j, 'scatter xs[' .. j .. ']') end end
  -- send/recv: rank 0 sends h = 2x, rank 1 minimises sum(h^2): dL/dx = 8x
  if size > 1 then
    if rank == 0 then
      x = V(T.array({ 1, -2, 3 }, 'float64'))
      local phi = MF.send(x * 2, comm, 1)
      phi:backward()
      expect(max_diff(x.grad, x.array * 8) < 1e-12, 'send: ' .. tostring(x.grad))
    elseif rank == 1 then
      local h = MF.recv(comm, 0)
      expect(h.array:get(1) == -4, 'recv forward')
      F.sum(h * h):backward()
    end
    local ok, err = pcall(MF.send, V(T.zeros({ 1 })), comm, rank)
    expect(not ok and err:find('send: rank must differ from this rank', 1, true), 'self send: ' .. tostring(err))
  end
end)

check('batch normalization', function()
  -- each rank normalises its share of a batch with MultiNodeBatchNormalization;
  -- L.BatchNormalization on the whole batch gives the same outputs, input
  -- gradients and population statistics, and comm.size times the
  -- parameter gradients (each rank holds the mean over ranks)
  for _, shape in ipairs({ { 4 * size, 3 }, { 2 * size, 2, 3, 3 } }) do
    T.random.seed(21)
    local x = T.random.normal(0, 1, shape):astype('float64') * 3 + 1
    local w = T.random.normal(0, 1, shape):astype('float64')
    local whole_bn = L.BatchNormalization(shape[2], { dtype = 'float64' })
    local mn_bn = chainermn.links.MultiNodeBatchNormalization(shape[2], comm, { dtype = 'float64' })
    whole_bn.gamma.array:copy_(T.array({ 1.5, -0.5, 2 }, 'float64'):slice({ 0, shape[2] }))
    mn_bn.gamma.array:copy_(whole_bn.gamma.array)
    local xv = chainer.Variable(x)
    local y = whole_bn(xv)
    F.sum(y * w):backward()
    local per = shape[1] / size
    local lo, hi = rank * per, (rank + 1) * per
    local xm = chainer.Variable(x:slice({ lo, hi }):copy())
    local ym = mn_bn(xm)
    F.sum(ym * w:slice({ lo, hi })):backward()
    local what = 'shape ' .. table.concat(shape, 'x') .. ': '
    expect(max_diff(ym.array, y.array:slice({ lo, hi })) < 1e-12, what .. 'outputs differ')
    expect(max_diff(xm.grad, xv.grad:slice({ lo, hi })) < 1e-12, what .. 'input gradients differ')
    expect(max_diff(mn_bn.gamma.grad * size, whole_bn.gamma.grad) < 1e-12, what .. 'gamma gradients differ')
    expect(max_diff(mn_bn.beta.grad * size, whole_bn.beta.grad) < 1e-12, what .. 'beta gradients differ')
    expect(max_diff(mn_bn.avg_mean, whole_bn.avg_mean) < 1e-12, what .. 'avg_mean differs')
    expect(max_diff(mn_bn.avg_var, whole_bn.avg_var) < 1e-12, what .. 'avg_var differs')
  end
end)

check('allreduce persistent', function()
  -- each rank's population statistics differ; afterwards all hold their mean
  local model = chainer.Sequential(L.Linear(3, 2), L.BatchNormalization(2, { dtype = 'float64' }))
  local bn = model[2]
  bn.avg_mean:copy_(T.array({ rank, 2 * rank }, 'float64'))
  bn.avg_var:copy_(T.array({ 1 + rank, 1 }, 'float64'))
  rawset(bn, 'N', rank + 5)
  chainermn.extensions.AllreducePersistent(model, comm)()
  local mean_rank = (size - 1) / 2
  expect(max_diff(bn.avg_mean, T.array({ mean_rank, 2 * mean_rank }, 'float64')) < 1e-12, 'avg_mean ' .. tostring(bn.avg_mean))
  expect(max_diff(bn.avg_var, T.array({ 1 + mean_rank, 1 }, 'float64')) < 1e-12, 'avg_var ' .. tostring(bn.avg_var))
  expect(bn.N == rank + 5, 'the number N changed')
end)

check('checkpointer without a trainer', function()
  local fs = require 'chainer._fs'
  local dir = os.tmpname()
  os.remove(dir)   -- a fresh name for this rank's folder
  local m = L.Linear(2, 2)
  local cp = chainermn.create_multi_node_checkpointer('unit', comm, { path = dir })
  m.W.array:fill_(3)
  cp:save(m, 1)
  m.W.array:fill_(7)
  cp:save(m, 2)
  m.W.array:fill_(0)
  local it = cp:maybe_load(m)
  expect(it == 2 and m.W.array:get(0, 0) == 7, 'loaded iteration ' .. tostring(it) .. ', W ' .. tostring(m.W.array))
  cp:finalize()
  expect(#(fs.listdir(dir) or {}) == 0, 'finalize left files in ' .. dir)
  os.remove(dir)
end)

check('model parallel', function()
  if size < 2 then return end
  -- x -> A (rank 0) -> B, tanh (rank 1) -> C (rank 0) -> y, against the
  -- same links in one process: the same output and parameter gradients
  local function links()
    T.random.seed(5)
    return L.Linear(4, 5), chainer.Sequential(L.Linear(5, 5), F.tanh), L.Linear(5, 3)
  end
  chainer.config.dtype = 'float64'
  local A, B, C = links()
  local RA, RB, RC = links()
  chainer.config.dtype = 'float32'
  T.random.seed(9)
  local x = T.random.normal(0, 1, { 6, 4 }):astype('float64')
  local w = T.random.normal(0, 1, { 6, 3 }):astype('float64')
  local ref = RC(RB(RA(x)))
  F.sum(ref * w):backward()
  local model = chainermn.links.MultiNodeChainList(comm)
  if rank == 0 then
    model:add_link(A, nil, 1)
    model:add_link(C, 1, nil)
  elseif rank == 1 then
    model:add_link(B, 0, 0)
  end
  if rank > 1 then return end
  local y = model(x)
  if rank == 0 then
    expect(max_diff(y.array, ref.array) < 1e-12, 'model-parallel output differs')
    F.sum(y * w):backward()
    expect(max_diff(A.W.grad, RA.W.grad) < 1e-12 and max_diff(C.W.grad, RC.W.grad) < 1e-12,
      'rank 0 gradients differ')
  else
    y:backward()   -- the delegate variable: waits for rank 0's gradient
    expect(max_diff(B[1].W.grad, RB[1].W.grad) < 1e-12, 'rank 1 gradients differ')
  end
  local ok, err = pcall(model.add_link, model, L.Linear(1, 1), 0, nil)
  if rank == 0 then
    expect(not ok and err:find('only one component may give the model output', 1, true), 'second output: ' .. tostring(err))
  end
end)

check('scatter_dataset', function()
  -- every position 0..n-1, shuffled by root's seed, split in disjoint
  -- shards that cover the dataset (force_equal_length = false); with equal
  -- lengths (the default) the shards have ceil(n / size) examples each
  for _, n in ipairs({ 10, 11 }) do
    local ds = {}
    for i = 1, n do ds[i] = i - 1 end
    local sub = chainermn.scatter_dataset(ds, comm, { shuffle = true, seed = 3, force_equal_length = false })
    local mine = {}
    for i = 1, sub:len() do mine[i] = sub:get_example(i) end
    local all = comm:bcast_obj(comm:gather_obj(mine, 0), 0)
    local seen, count = {}, 0
    for r = 1, size do
      for _, v in ipairs(all[r]) do
        expect(not seen[v], 'example ' .. v .. ' is in two shards')
        seen[v], count = true, count + 1
      end
    end
    expect(count == n, n .. ' examples, shards hold ' .. count)
    local eq = chainermn.scatter_dataset(ds, comm, { shuffle = true, seed = 3 })
    expect(eq:len() == math.ceil(n / size), 'equal length ' .. eq:len())
  end
end)

check('evaluator', function()
  -- each rank evaluates its 8 examples of an 8 * size set in batches of 4; the
  -- means over ranks equal one evaluation of the whole set
  T.random.seed(11)
  local x = T.random.normal(0, 1, { 8 * size, 5 }):astype('float64')
  local t = T.random.randint(0, 3, { 8 * size }):astype('int32')
  local whole = chainer.datasets.TupleDataset(x, t)
  local model = L.Classifier(mlp(5, 'float64'))   -- the same parameters on every rank
  local function evaluator(ds)
    return chainer.training.extensions.Evaluator(chainer.iterators.SerialIterator(ds, 4, { ['repeat'] = false,
      shuffle = false }), model)
  end
  local expected = evaluator(whole)()
  local mn = chainermn.create_multi_node_evaluator(evaluator(chainermn.scatter_dataset(whole, comm)), comm)
  local got = mn()
  local keys = 0
  for k, v in pairs(expected) do
    keys = keys + 1
    expect(type(got[k]) == 'number' and math.abs(got[k] - v) <= 1e-12,
      k .. ': ' .. tostring(got[k]) .. ' (whole set: ' .. tostring(v) .. ')')
  end
  expect(keys == 2 and got['main/accuracy'] ~= nil, 'reported ' .. keys .. ' values')
  -- the ranks saw different halves: their local values differ (the check is not vacuous)
  local local_only = evaluator(chainermn.scatter_dataset(whole, comm))()
  local all = comm:allgather(T.array({ local_only['main/loss'] }, 'float64'))
  if size > 1 then expect(all[1]:item() ~= all[2]:item(), 'both halves gave the same loss') end
end)

-- An MLP trained by a multi-node optimizer, each rank on its share of every
-- batch, against the same MLP trained alone on the whole batches.  Every
-- rank starts from a different initialisation: the first update broadcasts
-- rank 0's (and updates nothing, as ChainerMN).
local function train_check(dtype, tol)
  local batch, steps = 4 * size, 6
  local model = mlp(100 + rank, dtype)
  local reference = mlp(100, dtype)           -- rank 0's initialisation
  -- (MomentumSGD: unlike Adam, a wrong gradient scale changes its steps)
  local opt = chainermn.create_multi_node_optimizer(chainer.optimizers.MomentumSGD({ lr = 0.1 }), comm)
  opt:setup(model)
  local ref_opt = chainer.optimizers.MomentumSGD({ lr = 0.1 })
  ref_opt:setup(reference)
  local function loss_of(m, x, t) return F.softmax_cross_entropy(m(x), t) end

  opt:update()                                -- the broadcast
  for name, p in model:namedparams() do
    local q
    for n2, p2 in reference:namedparams() do if n2 == name then q = p2 end end
    expect(max_diff(p.array, q.array) == 0, 'after the broadcast ' .. name .. ' differs from rank 0')
  end
  expect(opt.t == 0, 'the broadcast must not update (t = ' .. opt.t .. ')')

  T.random.seed(7)                            -- the same batches on every rank
  local per_rank = batch / size
  for _ = 1, steps do
    local x = T.random.normal(0, 1, { batch, 5 }):astype(dtype)
    local t = T.random.randint(0, 3, { batch }):astype('int32')
    local lo = rank * per_rank
    opt:update(loss_of, model, x:slice({ lo, lo + per_rank }), t:slice({ lo, lo + per_rank }))
    ref_opt:update(loss_of, reference, x, t)
  end
  expect(opt.t == steps, 't = ' .. opt.t)
  -- the gradients are the slots of the model's gradient bucket
  -- (chainer/_grad_bucket.lua), where backward wrote them
  for name, p in model:namedparams() do
    expect(p.grad ~= nil and p.grad == rawget(p, '_grad_slot'), name .. ': its gradient is not its bucket slot')
  end
  local worst = 0
  for name, p in model:namedparams() do
    for n2, q in reference:namedparams() do
      if n2 == name then worst = math.max(worst, max_diff(p.array, q.array)) end
    end
  end
  expect(worst <= tol, dtype .. ': parameters differ from the one-process run by ' .. worst)
  -- and they moved: the check is not vacuous
  local start = mlp(100, dtype)
  expect(max_diff(model[1].W.array, start[1].W.array) > 1e-3, 'the parameters did not move')
end

check('training float64', function() train_check('float64', 1e-10) end)
check('training float32', function() train_check('float32', 1e-5) end)

-- multi_node_mean_grad on the gradient bucket's path: the mean (with two
-- ranks by the pair-mean reduction, in the sum's pass), a missing gradient
-- with zero_fill, and models whose layouts differ (on the bucket path on
-- every rank, or on it on some ranks only) an error on every rank.
check('mean grad layouts', function()
  local function model_of(out)
    local m = chainer.Sequential(L.Linear(3, out))
    m[1].W.array:fill_(0)
    return m
  end
  local function set_grads(m, v)
    for _, p in m:namedparams() do p.grad = T.full(p.array.shape, v, p.array.dtype) end
  end
  local m = model_of(2)
  for step = 1, 3 do   -- the first call builds the bucket, the next ones take its path
    set_grads(m, rank + step)
    comm:multi_node_mean_grad(m)
    local want = (size - 1) / 2 + step
    for name, p in m:namedparams() do
      expect(max_diff(p.grad, T.full(p.array.shape, want, p.array.dtype)) == 0,
        'step ' .. step .. ' ' .. name .. ': ' .. tostring(p.grad) .. ' (expected ' .. want .. ')')
      if comm.name ~= 'naive' then   -- naive reduces parameter by parameter, without a bucket
        expect(p.grad == rawget(p, '_grad_slot'), name .. ': the gradient is not its bucket slot')
      end
    end
  end
  -- zero_fill: the last rank has no gradient for the bias
  set_grads(m, 2)
  if rank == size - 1 then m[1].b.grad = nil end
  comm:multi_node_mean_grad(m, true)
  local want_b = size > 1 and 2 * (size - 1) / size or 0
  expect(max_diff(m[1].b.grad, T.full({ 2 }, want_b, 'float32')) == 0, 'zero_fill: ' .. tostring(m[1].b.grad))
  -- the same gradient missing without zero_fill: the last rank leaves the
  -- bucket's path, the others stay on it; all raise
  set_grads(m, 1)
  if rank == size - 1 then m[1].b.grad = nil end
  local ok, err = pcall(comm.multi_node_mean_grad, comm, m)
  if size > 1 then
    expect(not ok and err:find('multi_node_mean_grad: the ranks passed different arguments (rank 0: 2 parameters', 1,
      true), 'a missing gradient on one rank: ' .. tostring(err))
  else
    expect(ok, tostring(err))
  end
  -- different shapes, each rank on its own bucket's path (built here, as
  -- a first successful call would)
  local other = model_of(rank == size - 1 and 4 or 2)
  require('chainer._grad_bucket').of(other)
  set_grads(other, 1)
  ok, err = pcall(comm.multi_node_mean_grad, comm, other)
  if size > 1 then
    expect(not ok and err:find('multi_node_mean_grad: the ranks passed different arguments', 1, true) and
      err:find('/0/W:float32:4x3', 1, true), 'different shapes: ' .. tostring(err))
  else
    expect(ok, tostring(err))
  end
  expect(comm:allreduce_obj(1) == size, 'out of step after the refusals')
end)

-- The gradient mean through shared memory (chainermn/_shm_mean.lua, the
-- default when the ranks share a node) against the mean through
-- MPI_Allreduce: with two ranks the same bits (the same pair-mean
-- function), with more the same values to rounding (MPI's summation order
-- is its algorithm's); gradients written by backward into the bucket and
-- gradients set from outside, over several steps, float32 and float64.
check('mean grad shared memory', function()
  local GradBucket = require 'chainer._grad_bucket'
  local saved = comm.mean_grad_via
  local function run(via, dtype)
    comm.mean_grad_via = via
    local m = mlp(40, dtype)
    local out = {}
    T.random.seed(50 + rank)
    for step = 1, 3 do
      if step == 2 then   -- gradients from outside the bucket
        for _, p in m:namedparams() do p.grad = T.random.normal(0, 1, p.array.shape):astype(dtype) end
      else                -- backward writes them into the bucket
        m:cleargrads()
        local x = T.random.normal(0, 1, { 4, 5 }):astype(dtype)
        F.sum(F.tanh(m(x))):backward()
      end
      comm:multi_node_mean_grad(m)
      for name, p in m:namedparams() do out[step .. name] = p.grad:copy() end
    end
    local bucket = GradBucket.of(m)
    local engine = comm._shared_mean and comm._shared_mean.engine
    return out, engine ~= nil and engine.windows[bucket.buffers[1].tensor] ~= nil
  end
  for _, dtype in ipairs({ 'float32', 'float64' }) do
    local shm, in_window = run('shm', dtype)
    local ref, ref_in_window = run('mpi', dtype)
    expect(not ref_in_window, 'mean_grad_via = mpi used the shared window')
    if size > 1 and comm.name ~= 'naive' then expect(in_window, dtype .. ': the bucket is not in a shared window') end
    local tol = size <= 2 and 0 or (dtype == 'float32' and 1e-6 or 1e-14)
    for key, g in pairs(ref) do
      expect(max_diff(shm[key], g) <= tol, string.format('%s %s: shared memory and MPI differ by %g', dtype, key,
        max_diff(shm[key], g)))
    end
  end
  comm.mean_grad_via = 'sideways'
  local ok, err = pcall(comm.multi_node_mean_grad, comm, mlp(1, 'float32'))
  expect(not ok and err:find("mean_grad_via (or CHAINERMN_MEAN_GRAD) must be 'auto', 'shm' or 'mpi' (got sideways)",
    1, true), 'a bad choice: ' .. tostring(err))
  comm.mean_grad_via = saved
  expect(comm:allreduce_obj(1) == size, 'out of step')
end)

check('refusals', function()
  -- a value that cannot be sent, or no tensor on root: every rank raises
  -- (and the ranks stay in step: the next collective still works)
  local ok, err = pcall(comm.bcast_obj, comm, rank == 0 and { f = print } or nil, 0)
  expect(not ok and err:find(rank == 0 and 'bcast_obj: cannot send the value[f]: a function' or
    'bcast_obj: the root (rank 0) passed a value that cannot be sent', 1, true), 'bcast_obj: ' .. tostring(err))
  ok, err = pcall(comm.gather_obj, comm, rank == size - 1 and print or rank, 0)
  expect(not ok and err:find(rank == size - 1 and 'gather_obj: cannot send the value: a function' or
    ('gather_obj: rank ' .. (size - 1) .. ' passed a value that cannot be sent'), 1, true), 'gather_obj: ' .. tostring(err))
  ok, err = pcall(comm.bcast, comm, 'x', 0)
  expect(not ok and err:find(rank == 0 and 'bcast: the root must pass a tensor (got string)' or
    'bcast: the root (rank 0) passed a bad argument', 1, true), 'bcast: ' .. tostring(err))
  -- a float16 tensor on the last rank only
  local x = rank == size - 1 and T.zeros({ 2 }, 'float16') or T.zeros({ 2 }, 'float64')
  ok, err = pcall(comm.allreduce, comm, x)
  expect(not ok and err:find((size > 1 and 'allreduce: the ranks passed different arguments' or 'allreduce: cannot sum float16'), 1, true)
    and err:find('cannot sum float16 tensors', 1, true), 'allreduce float16: ' .. tostring(err))
  -- models that differ (a parameter missing on the last rank)
  local m = chainer.Sequential(L.Linear(2, 2, rank == size - 1 and { nobias = true } or nil))
  ok, err = pcall(comm.bcast_data, comm, m)
  if size > 1 then
    expect(not ok and err:find('bcast_data: the ranks passed different arguments (rank 0: 2 parameters', 1, true),
      'bcast_data: ' .. tostring(err))
  else
    expect(ok, tostring(err))
  end
  expect(comm:allreduce_obj(1) == size, 'out of step after the refusals')
end)
