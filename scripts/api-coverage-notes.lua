-- api-coverage-notes.lua: the reasons behind docs/api-coverage.md, read by
-- scripts/api-coverage.lua.  Each note is {status, reason}:
--   'different'  chainlua covers the name another way, on purpose
--   'elsewhere'  being added on another branch of this session (in progress)
--   'absent'     not in chainlua, with the reason
-- A note on a name that chainlua has (other than 'different') is reported as
-- stale when the page is regenerated: delete it then.
local CHAINERX = 'ChainerX only (chainlua has no ChainerX backend; its C runtime plays that role)'
local IDEEP = 'iDeep (Intel64) only; chainlua\'s CPU kernels use OpenBLAS and OpenMP directly'
local STATIC_INTERNALS = { 'different', 'the classes of Chainer\'s implementation; chainlua\'s static_graph ' ..
  'records with graph_optimizations/trace.lua and replays with schedule.lua (docs/static_graph.md)' }
local function absent(reason) return { 'absent', reason } end
local function different(reason) return { 'different', reason } end

local LAYOUT_NIL = different('nil for the standard layout (Chainer\'s None), a layout name of ' ..
  'chainer.memory_layouts otherwise (docs/autograd.md, "Memory layouts")')
local NODE_LAYOUTS = different('set by apply once some Variable has a non-standard memory layout (a ' ..
  'table with n, nil for the standard layout); nil before, where Chainer holds a tuple of Nones')
local VARIABLE_NOTES = {
  chx_array = absent(CHAINERX), from_chx = absent(CHAINERX), to_chx = absent(CHAINERX),
  to_intel64 = absent(IDEEP),
  layout = LAYOUT_NIL,
}
local PARAMETER_NOTES = {
  creator = different('nil, as Chainer\'s None (a Parameter has no creator)'),
  creator_node = different('nil, as Chainer\'s None'),
  initializer = different('the initializer a Parameter was made with; nil for one made from a ' ..
    'tensor, where Chainer keeps the array itself'),
}
for k, v in pairs(VARIABLE_NOTES) do PARAMETER_NOTES[k] = v end
local LINK_NOTES = {
  device_resident_accept = different('Chainer\'s DeviceResident visitor; a chainlua link moves its ' ..
    'parameters and children itself in to_device'),
  from_chx = absent(CHAINERX), to_chx = absent(CHAINERX), to_intel64 = absent(IDEEP),
}

return {
  -- where a Chainer module lives in chainlua when not at the same path
  module_alias = {},

  -- a note for every name of a module (unless the name has its own)
  module_default = {
  },

  names = {
    ['chainer.graph_optimizations.static_graph'] = {
      ArrayInfo = STATIC_INTERNALS, ScheduleInfo = STATIC_INTERNALS, ScheduleManager = STATIC_INTERNALS,
      StaticScheduleFunction = STATIC_INTERNALS,
    },
    ['chainer.testing'] = {
      BackendConfig = different('the device matrix is built in: FunctionTestCase and LinkTestCase run ' ..
        'on the CPU and, when present, the GPU (docs/testing.md)'),
      inject_backend_tests = different('see BackendConfig'),
    },
    ['chainer.Variable'] = VARIABLE_NOTES,
    ['chainer.Parameter'] = PARAMETER_NOTES,
    ['chainer.Link'] = LINK_NOTES, ['chainer.Chain'] = LINK_NOTES, ['chainer.ChainList'] = LINK_NOTES,
    ['chainer.Sequential'] = LINK_NOTES,
    ['chainer.FunctionNode'] = {
      chainerx_device = absent(CHAINERX), forward_chainerx = absent(CHAINERX),
      input_layouts = NODE_LAYOUTS, output_layouts = NODE_LAYOUTS,
      forward_cpu = different('a subclass defines them; FunctionNode:forward then dispatches on the ' ..
        'inputs\' device as Chainer\'s does (there is no default method to inherit)'),
      forward_gpu = different('see forward_cpu'),
      output_data = different('a method, `node:output_data()` (a Chainer property computed on each read; ' ..
        'FunctionNode keeps its fields plain for the speed of apply)'),
      local_function_hooks = different('nil until node:add_hook(hook, name) creates it (Chainer: an ' ..
        'empty OrderedDict)'),
      lazy_grad_sum = different('chainlua reads `chainer.config.lazy_grad_sum` in backprop; a node has ' ..
        'no copy of it'),
    },
    ['chainer.UpdateRule'] = { update_core_chainerx = absent(CHAINERX) },
    ['chainer.training.updaters.StandardUpdater'] = {
      device = different('nil unless given, as Chainer\'s None'),
      input_device = different('nil unless input_device or device is given, as Chainer\'s None'),
    },
    ['chainer.training.Extension'] = {
      name = different('nil unless set, as Chainer\'s None'),
      default_name = different('`ext:get_default_name()` (a method: the class name unless the ' ..
        'extension or make_extension set one)'),
    },
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
    },
    ['chainer.links'] = {
      TheanoFunction = absent('Theano-specific: it wraps a compiled Theano graph'),
    },
    ['chainer.iterators'] = {
      DaliIterator = absent('wraps an NVIDIA DALI pipeline, which is built and serialized with DALI\'s ' ..
        'Python API; DALI\'s C API (libdali) could run a serialized pipeline, but DALI is neither packaged ' ..
        'for Debian nor on the machines chainlua is built and tested on, so an iterator over it could not ' ..
        'be tested'),
    },
    ['chainer.training.updaters'] = {
      MultiprocessParallelUpdater = different('Chainer\'s semantics (one iterator and one forked worker ' ..
        'process per device, gradients summed into the master, lr / n or eps * n) on CPU devices, with ' ..
        'shared memory in place of NCCL; a GPU device is an error (for several GPUs: ParallelUpdater in one ' ..
        'process, ChainerMN for one process per GPU)'),
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
      get_cudnn_dropout_states = different('the per-device cuDNN dropout states that Chainer\'s cuDNN RNN ' ..
        'path keeps; chainlua\'s n-step RNNs apply F.dropout, whose masks come from the counter-based RNG ' ..
        '(seeded by CHAINER_SEED / chainer.random) on every device, so there is no state object to fetch'),
      get_cudnn_dropout_states_core = different('see get_cudnn_dropout_states'),
    },
  },

  -- the closing section of the page
  closing = {
    'What chainlua leaves out is:',
    '',
    '- **ChainerX and iDeep**: `ChainerxDevice`, `from_chx`, `to_chx`, `Fallback`, `get_compute_mode`,',
    '  `Intel64Device`. chainlua\'s C runtime is its ChainerX; iDeep\'s role is OpenBLAS + OpenMP.',
    '- **Theano**: `links.TheanoFunction`.',
    '- **NVIDIA DALI**: `DaliIterator` (DALI is not packaged for Debian; nothing here could test it).',
    '- **Members of the core classes** (the class sections above): ChainerX/iDeep conversions',
    '  (`to_chx`, `from_chx`, `to_intel64`, `chx_array`).',
    '',
    'The name list covers the modules above and the members of the 16 classes listed; other',
    'classes\' members (every link\'s, every extension\'s) are checked by their own specs against',
    'Chainer\'s signatures, not here.',
  },
}
