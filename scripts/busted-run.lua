-- busted's command line as a Lua script, for scripts/gpu-check: run by the
-- chainlua under test (`chainlua scripts/busted-run.lua --tags=gpu FILE`), so
-- the GPU specs need neither a luajit nor a busted executable on the GPU
-- machine (busted's modules come from the bundle's lua/ or the system).
require 'busted.runner'({ standalone = false })
