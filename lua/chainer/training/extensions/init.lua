-- chainer.training.extensions: the built-in trainer extensions.
local snap = require 'chainer.training.extensions.snapshot'
local dg = require 'chainer.training.extensions.dump_graph'

local M = {}
M.Evaluator = require 'chainer.training.extensions.evaluator'
M.MicroAverage = require 'chainer.training.extensions.micro_average'
M.LogReport = require 'chainer.training.extensions.log_report'
M.PrintReport = require 'chainer.training.extensions.print_report'
M.ProgressBar = require 'chainer.training.extensions.progress_bar'
M.PlotReport = require 'chainer.training.extensions.plot_report'
M.snapshot = snap.snapshot
M.snapshot_object = snap.snapshot_object
M.snapshot_writers = require 'chainer.training.extensions.snapshot_writers'
M.ExponentialShift = require 'chainer.training.extensions.exponential_shift'
M.LinearShift = require 'chainer.training.extensions.linear_shift'
M.MultistepShift = require 'chainer.training.extensions.multistep_shift'
M.PolynomialShift = require 'chainer.training.extensions.polynomial_shift'
M.StepShift = require 'chainer.training.extensions.step_shift'
M.WarmupShift = require 'chainer.training.extensions.warmup_shift'
M.InverseShift = require 'chainer.training.extensions.inverse_shift'
M.observe_value = require 'chainer.training.extensions.observe_value'
M.observe_lr = require 'chainer.training.extensions.observe_lr'
M.ParameterStatistics = require 'chainer.training.extensions.parameter_statistics'
M.VariableStatisticsPlot = require 'chainer.training.extensions.variable_statistics_plot'
M.FailOnNonNumber = require 'chainer.training.extensions.fail_on_non_number'
M.DumpGraph = dg.DumpGraph
M.dump_graph = dg.dump_graph
M.unchain_variables = require 'chainer.training.extensions.unchain_variables'
M.make_extension = require('chainer.training.extension').make_extension
return M
