-- api-coverage-notes.lua: the reasons behind docs/api-coverage.md, read by
-- scripts/api-coverage.lua.  Each note is {status, reason}:
--   'different'  chainlua covers the name another way, on purpose
--   'elsewhere'  being added on another branch of this session (in progress)
--   'absent'     not in chainlua, with the reason
-- A note on a name that chainlua has (other than 'different') is reported as
-- stale when the page is regenerated: delete it then.
local CHAINERX = 'ChainerX only (chainlua has no ChainerX backend; its C runtime plays that role)'
local IDEEP = 'iDeep (Intel64) only; chainlua\'s CPU kernels use OpenBLAS and OpenMP directly'
local MN = { 'elsewhere', 'ChainerMN\'s API, being added on another branch (issue 17)' }
local STATIC = { 'elsewhere', 'static_graph, being added on another branch (issue 17)' }
local TESTING = { 'elsewhere', 'chainer.testing for busted, being added on another branch (issue 17)' }
local WRITERS = { 'elsewhere', 'snapshot writers, being added on another branch (issue 17)' }

local function absent(reason) return { 'absent', reason } end
local function different(reason) return { 'different', reason } end

return {
  -- where a Chainer module lives in chainlua when not at the same path
  module_alias = {},

  -- a note for every name of a module (unless the name has its own)
  module_default = {
    ['chainer.testing'] = TESTING,
    ['chainer.graph_optimizations'] = STATIC,
    ['chainer.graph_optimizations.static_graph'] = STATIC,
    ['chainer.training.extensions.snapshot_writers'] = WRITERS,
    ['chainermn'] = MN, ['chainermn.communicators'] = MN, ['chainermn.datasets'] = MN,
    ['chainermn.extensions'] = MN, ['chainermn.functions'] = MN, ['chainermn.iterators'] = MN,
    ['chainermn.links'] = MN,
  },

  names = {
    chainer = {
      DeviceResident = different('Chainer\'s base of Link and WalkerAlias; in chainlua those two (and ' ..
        'Variable) carry to_device/to_cpu/to_gpu themselves, and there is no separate base class or ' ..
        'device visitor to subclass'),
      Fallback = absent(CHAINERX .. ': the value a FunctionNode\'s forward_chainerx returns to fall back ' ..
        'to the array path'),
      get_compute_mode = absent(CHAINERX .. ': config.compute_mode selects ChainerX\'s modes'),
      get_array_types = different('one tensor type serves every device: test with ' ..
        '`chainer.tensor.is_tensor(x)` (Lua has no type objects to pass to isinstance)'),
      get_cpu_array_types = different('one tensor type serves every device: a host tensor is ' ..
        '`chainer.tensor.is_tensor(x) and x.device == \'cpu\'`'),
      mixed16 = { 'elsewhere', 'mixed precision, being added on another branch (issue 17)' },
      static_code = STATIC,
      static_graph = STATIC,
    },
    ['chainer.links'] = {
      TheanoFunction = absent('Theano-specific: it wraps a compiled Theano graph'),
    },
    ['chainer.datasets'] = {
      PickleDataset = absent('Python pickle files: unpickling runs Python code and needs Python\'s ' ..
        'object model; chainlua\'s datasets read NPZ, HDF5, images, text and zip files'),
      PickleDatasetWriter = absent('Python pickle files (see PickleDataset)'),
      open_pickle_dataset = absent('Python pickle files (see PickleDataset)'),
      open_pickle_dataset_writer = absent('Python pickle files (see PickleDataset)'),
    },
    ['chainer.iterators'] = {
      DaliIterator = absent('wraps an NVIDIA DALI Python pipeline; DALI has no C API chainlua could drive ' ..
        'as a data source'),
    },
    ['chainer.training.updaters'] = {
      MultiprocessParallelUpdater = absent('one Python process per GPU sharing gradients by NCCL; in ' ..
        'chainlua, ParallelUpdater drives several GPUs from one process, and ChainerMN\'s API (MPI, NCCL ' ..
        'where present) runs one process per GPU'),
    },
    ['chainer.function_hooks'] = {
      CUDAProfileHook = absent('brackets each function with NVTX ranges for nvprof; chainlua does not ' ..
        'link NVTX (Nsight Systems traces the CUDA kernels without it)'),
      CupyMemoryProfileHook = absent('needs cumulative allocation counters in the CUDA caching allocator ' ..
        '(CuPy\'s memory hooks); chainlua\'s pool reports live and cached bytes ' ..
        '(`cuda.memory_pool():used_bytes()`), not bytes requested per call'),
    },
    ['chainer.utils'] = {
      final = absent('marks a method that subclasses may not override, checked by a Python metaclass ' ..
        'when a subclass is created; a chainlua subclass gets its methods one assignment at a time ' ..
        'after extend, so there is no moment where such a check could run'),
      enable_final = absent('the switch for `final` (see final)'),
    },
    ['chainer.backend'] = {
      ChainerxDevice = absent(CHAINERX),
      from_chx = absent(CHAINERX),
      to_chx = absent(CHAINERX),
      Intel64Device = absent(IDEEP),
    },
    ['chainer.backends.cuda'] = {
      cupy = different('the array module of every device is `chainer.tensor` (`device.xp`)'),
      ndarray = different('one tensor type for every device; a CUDA tensor is a tensor whose ' ..
        '`device` is \'cuda:N\''),
      fuse = absent('CuPy\'s kernel fusion of Python functions; chainlua fuses where it pays in C ' ..
        '(LSTM cell, softmax cross-entropy, optimizer updates) and takes user kernels through ' ..
        '`cuda.elementwise`/`cuda.reduce`'),
      raw = absent('CuPy\'s RawKernel (CUDA C source with a hand-made launch); chainlua\'s user kernels ' ..
        'are `cuda.elementwise` and `cuda.reduce`, compiled by NVRTC'),
      Stream = absent('chainlua runs each device\'s work on one stream; to_gpu/to_cpu refuse a ' ..
        '`stream` argument with an error that says so'),
      Event = absent('CUDA events belong to the stream API (see Stream); `device:synchronize()` waits'),
      get_cudnn_dropout_states = absent('cuDNN dropout states; chainlua\'s dropout draws its mask ' ..
        'from the counter-based RNG on every device'),
      get_cudnn_dropout_states_core = absent('see get_cudnn_dropout_states'),
      get_max_workspace_size = absent('chainlua\'s GPU kernels call no workspace-taking cuDNN ' ..
        'algorithm (convolutions are im2col + cuBLAS), so there is no workspace limit to read or set'),
      set_max_workspace_size = absent('see get_max_workspace_size'),
    },
  },

  -- the closing section of the page
  closing = {
    'Apart from the names marked "in progress elsewhere" (chainer.testing, static_graph, snapshot',
    'writers, mixed16 and ChainerMN\'s modules, being merged from other branches), what chainlua',
    'leaves out is:',
    '',
    '- **ChainerX and iDeep**: `ChainerxDevice`, `from_chx`, `to_chx`, `Fallback`, `get_compute_mode`,',
    '  `Intel64Device`. chainlua\'s C runtime is its ChainerX; iDeep\'s role is OpenBLAS + OpenMP.',
    '- **Theano and Python formats**: `links.TheanoFunction`; the pickle datasets.',
    '- **Python-only libraries and mechanisms**: `DaliIterator` (NVIDIA DALI\'s Python pipelines),',
    '  `utils.final`/`enable_final` (a metaclass check), `MultiprocessParallelUpdater` (one Python process',
    '  per GPU; ParallelUpdater and ChainerMN cover the same ground).',
    '- **CuPy internals**: `Stream`, `Event`, `fuse`, `raw`, the cuDNN dropout states and workspace',
    '  limit, `CUDAProfileHook` (NVTX) and `CupyMemoryProfileHook` (cumulative allocator counters).',
    '  Each would need new C runtime support; none is what a ported model or training script calls.',
  },
}
