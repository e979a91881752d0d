-- The busted helper (.busted): runs once before the specs.  The specs and
-- the programs they start read datasets from a writable mirror of the
-- dataset root (links to its files, see spec/helpers.lua), so nothing they
-- convert, cache or download is written into the shared data folder.
require('helpers').use_scratch_dataset_root()
