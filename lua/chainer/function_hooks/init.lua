-- chainer.function_hooks: the concrete FunctionHooks.
return {
  TimerHook = require 'chainer.function_hooks.timer',
  PrintHook = require 'chainer.function_hooks.print',
  CupyMemoryProfileHook = require 'chainer.function_hooks.memory_profile',
  CUDAProfileHook = require 'chainer.function_hooks.cuda_profile',
}
