-- chainer: Chainer's define-by-run deep learning framework for LuaJIT.
local chainer = {}
local lib = require 'chainer._lib'
local C, ffi = lib.C, lib.ffi

chainer.tensor = require 'chainer.tensor'

-- The collector starts a cycle when the heap reaches 150 % of what the last
-- cycle kept (LuaJIT's default: 200 %): less memory for each cycle to sweep,
-- measured faster by CPU time on the per-node, batch-1 inference and small
-- MLP loops (bench/README.md, session 12; 100 and 400 were slower).  A
-- program sets its own with collectgarbage('setpause', P) after this require.
collectgarbage('setpause', 150)
chainer.__version__ = ffi.string(C.ch_version())

function chainer.set_num_threads(n) C.ch_set_num_threads(n) end
function chainer.get_num_threads() return C.ch_get_num_threads() end
-- adaptive threads (docs/threads.md): one thread while another process keeps
-- our cores busy; on unless CHAINLUA_ADAPTIVE_THREADS=0
function chainer.set_adaptive_threads(on)
  if type(on) ~= 'boolean' then
    error(string.format('set_adaptive_threads: on must be a boolean (got %s)', type(on)), 2)
  end
  C.ch_set_adaptive_threads(on and 1 or 0)
end
function chainer.get_threads_in_use() return C.ch_threads_in_use() end

-- classes
local class = require 'chainer.class'
chainer.class = class
chainer.Object = class.Object
chainer.isinstance = class.isinstance

-- configuration
local cfg = require 'chainer.config'
chainer.config = cfg.config
chainer.global_config = cfg.config
chainer.using_config = cfg.using_config
chainer.no_backprop_mode = cfg.no_backprop_mode
chainer.force_backprop_mode = cfg.force_backprop_mode
chainer.is_debug = cfg.is_debug
chainer.set_debug = cfg.set_debug
chainer.get_dtype = cfg.get_dtype
chainer.mixed16 = cfg.mixed16
chainer.DebugMode = cfg.DebugMode
-- Chainer's flag (default false); chainlua also honours the environment variable
chainer.disable_experimental_feature_warning = os.getenv('CHAINER_DISABLE_EXPERIMENTAL_FEATURE_WARNING') == '1'

-- autograd core
local Variable = require 'chainer.variable'
chainer.Variable = Variable
chainer.variable = { Variable = Variable, VariableNode = Variable.VariableNode }
chainer.as_variable = Variable.as_variable
chainer.as_array = Variable.as_array
chainer.Parameter = require 'chainer.parameter'
chainer.FunctionNode = require 'chainer.function_node'
chainer.Function = require 'chainer.function'
chainer.FunctionAdapter = chainer.Function.FunctionAdapter
local hooks = require 'chainer.function_hook'
chainer.FunctionHook = hooks.FunctionHook
chainer.get_function_hooks = hooks.get_function_hooks
local backprop = require 'chainer.backprop'
chainer.backward = backprop.backward
chainer.grad = backprop.grad

-- chainer.utils.<name> loads lua/chainer/utils/<name>.lua on first access;
-- Chainer's top-level helpers are fields of the module that holds them.
local utils_helpers = {
  get_conv_outsize = 'conv', get_deconv_outsize = 'conv',
  force_array = 'array', force_type = 'array', size_of_shape = 'array', sum_to = 'array',
  experimental = 'experimental', get_order = 'sparse', nondeterministic = 'nondeterministic',
  final = 'final', enable_final = 'final',
}
chainer.utils = setmetatable({}, {
  __index = function(t, k)
    local holder = utils_helpers[k]
    if holder then
      local fn = require('chainer.utils.' .. holder)[k]
      rawset(t, k, fn)
      return fn
    end
    local ok, mod = pcall(require, 'chainer.utils.' .. k)
    if not ok then
      if tostring(mod):find("module 'chainer.utils." .. k .. "' not found", 1, true) then return nil end
      error(mod, 2)
    end
    rawset(t, k, mod)
    return mod
  end,
})

-- Everything else loads on first access: a program carries only the modules
-- it uses (a smaller live heap for the collector to walk; bench/README.md,
-- session 12).  These two tables are chainer's listing: the REPL's Tab
-- completion reads them, and chainer._lazy.load_all(chainer, true) loads
-- them all.

-- chainer.<name> is a module (or what the function returns; nil: no member)
local modules = {
  functions = 'chainer.functions',
  function_hooks = 'chainer.function_hooks',
  link_hooks = 'chainer.link_hooks',
  gradient_check = 'chainer.gradient_check',
  memory_layouts = 'chainer.memory_layouts',
  testing = 'chainer.testing',
  computational_graph = 'chainer.computational_graph',
  dataset = 'chainer.dataset',
  datasets = 'chainer.datasets',
  iterators = 'chainer.iterators',
  links = 'chainer.links',
  initializers = 'chainer.initializers',
  serializers = 'chainer.serializers',
  serializer = 'chainer.serializer',
  training = 'chainer.training',
  optimizers = 'chainer.optimizers',
  optimizer_hooks = 'chainer.optimizer_hooks',
  optimizer = 'chainer.optimizer',
  distributions = 'chainer.distributions',
  graph_optimizations = 'chainer.graph_optimizations',
  reporter = 'chainer.reporter',
  backend = 'chainer.backend',
  Sequential = 'chainer.sequential',
  print_runtime_info = 'chainer.runtime_info',
  link_hook = function() return { LinkHook = require('chainer.link_hook').LinkHook } end,
  -- chainer.cuda when the CUDA module exists (it loads without a GPU)
  cuda = function()
    local ok, mod = pcall(require, 'chainer.cuda')
    if ok then return mod end
    if not tostring(mod):find("module 'chainer.cuda' not found", 1, true) then error(mod, 0) end
  end,
  -- chainer.backends.cuda is chainer.cuda, as in Chainer
  backends = function(t) return { cuda = t.cuda } end,
}

-- chainer.<name> is the field <name> of a module: Chainer's top-level names
local fields = {
  Link = 'chainer.link', Chain = 'chainer.link', ChainList = 'chainer.link',
  LinkHook = 'chainer.link_hook', get_link_hooks = 'chainer.link_hook',
  Reporter = 'chainer.reporter', report = 'chainer.reporter', report_scope = 'chainer.reporter',
  get_current_reporter = 'chainer.reporter', Summary = 'chainer.reporter', DictSummary = 'chainer.reporter',
  get_device = 'chainer.backend', using_device = 'chainer.backend', is_arrays_compatible = 'chainer.backend',
  Distribution = 'chainer.distributions', kl_divergence = 'chainer.distributions',
  cross_entropy = 'chainer.distributions', register_kl = 'chainer.distributions',
  Optimizer = 'chainer.optimizer', GradientMethod = 'chainer.optimizer', UpdateRule = 'chainer.optimizer',
  Serializer = 'chainer.serializer', Deserializer = 'chainer.serializer',
  AbstractSerializer = 'chainer.serializer',
  Initializer = 'chainer.initializers',
  should_use_cudnn = 'chainer.cuda', should_use_cudnn_tensor_core = 'chainer.cuda',
  static_graph = 'chainer.graph_optimizations', static_code = 'chainer.graph_optimizations',
}

return require('chainer._lazy')(chainer, modules, fields)
