# chainlua -- the two commands of the README, and the developer targets.
#   make demo   installs what is missing, builds, runs the default demo
#   make test   installs what is missing, builds, runs every test
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
# CHAINLUA_CUDA=ON|OFF|AUTO (make variable or environment): AUTO, the
# default, builds the CUDA backend only on a machine with an NVIDIA driver.
CHAINLUA_CUDA ?=
ifneq ($(CHAINLUA_CUDA),)
CMAKE_FLAGS += -DCHAINLUA_CUDA=$(CHAINLUA_CUDA)
endif
# V=1 shows the compiler's output; otherwise it goes to $(BUILD).build.log
V ?=
ORACLE_DIR ?= ../shared/oracle/vectors-v2
CHAINLUA = $(BUILD)/chainlua

.PHONY: all deps build demo test test-c test-lua test-install memcheck asan fuzz fuzz-ci oracle bench examples-check ffi clean gpu-build gpu-pack gpu-check

all: build

deps:
	@bash scripts/install-deps

$(BUILD)/Makefile: CMakeLists.txt
	@echo "configuring $(BUILD)/ (log: $(BUILD).configure.log)"
	@cmake -S . -B $(BUILD) $(CMAKE_FLAGS) > $(BUILD).configure.log 2>&1 || (cat $(BUILD).configure.log; exit 1)
	@grep -E 'CUDA backend: (not built|nvcc)' $(BUILD).configure.log | sed 's/^-- /  /' || true

build: deps $(BUILD)/Makefile
	@if [ -n "$(CHAINLUA_CUDA)" ] && ! grep -qx 'CHAINLUA_CUDA:STRING=$(CHAINLUA_CUDA)' $(BUILD)/CMakeCache.txt; then \
	  echo "reconfiguring $(BUILD)/ for CHAINLUA_CUDA=$(CHAINLUA_CUDA)"; \
	  cmake -S . -B $(BUILD) $(CMAKE_FLAGS) > $(BUILD).configure.log 2>&1 || { cat $(BUILD).configure.log; exit 1; }; \
	fi
ifneq ($(V),)
	cmake --build $(BUILD) -j $(JOBS)
else
	@echo "building $(BUILD)/ with $(JOBS) jobs (log: $(BUILD).build.log; V=1 shows it)"
	@start=$$(date +%s); cmake --build $(BUILD) -j $(JOBS) > $(BUILD).build.log 2>&1 || \
	  { tail -n 40 $(BUILD).build.log; echo "build failed: the whole log is $(BUILD).build.log"; exit 1; }; \
	  echo "built in $$(( $$(date +%s) - start )) s"
endif

demo: build
	@$(CHAINLUA) examples/demo.lua

test: build
	@bash scripts/run-tests $(BUILD)

test-lua: build
	@bash scripts/run-tests $(BUILD) lua

test-c: build
	@bash scripts/run-tests $(BUILD) c

# luarocks make into a scratch tree under /tmp, then runs both entry points
test-install: build
	@bash scripts/run-tests $(BUILD) install

# The C tests under valgrind (own build folder, debug info, -O1).
memcheck: deps
	@command -v valgrind >/dev/null || bash scripts/install-deps valgrind
	cmake -S . -B $(BUILD)-memcheck -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCHAINLUA_MEMCHECK=ON -DCHAINLUA_CUDA=OFF > $(BUILD)-memcheck.configure.log
	cmake --build $(BUILD)-memcheck -j $(JOBS)
	cd $(BUILD)-memcheck && CHAINLUA_NO_BLOCK_CACHE=1 ctest --output-on-failure

# The C tests and the Lua specs with AddressSanitizer + UBSan, leaks checked
# (scripts/lsan.supp names the few leaks of other libraries we cannot fix).
ASAN_ENV = ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:detect_odr_violation=0:allocator_may_return_null=1 \
	LSAN_OPTIONS=suppressions=$(CURDIR)/scripts/lsan.supp:print_suppressions=0
asan: deps
	cmake -S . -B $(BUILD)-asan -DCMAKE_BUILD_TYPE=Debug -DCHAINLUA_SANITIZE=ON -DCHAINLUA_CUDA=OFF > $(BUILD)-asan.configure.log
	cmake --build $(BUILD)-asan -j $(JOBS)
	cd $(BUILD)-asan && $(ASAN_ENV) ctest --output-on-failure
	$(ASAN_ENV) bash scripts/asan-specs $(BUILD)-asan

# A libFuzzer target per reader (tests/fuzz/, clang + ASan), FUZZ_SECONDS
# (30) each; fails on any crash, hang, leak or sanitizer report.
FUZZ_SECONDS ?= 30
fuzz: deps
	@command -v clang >/dev/null || bash scripts/install-deps clang
	@bash scripts/fuzz $(BUILD)-fuzz $(FUZZ_SECONDS)

# The same at 30 s a target and a fixed seed (CI runs them inside make test,
# with CHAINLUA_FUZZ_SECONDS and CHAINLUA_FUZZ_SEED set: see .ci/run).
fuzz-ci:
	@command -v clang >/dev/null || bash scripts/install-deps clang
	@FUZZ_SEED=1 bash scripts/fuzz $(BUILD)-fuzz 30

oracle: build
	$(CHAINLUA) scripts/oracle.lua $(ORACLE_DIR)

bench: build
	@bash bench/run

examples-check: build
	@bash scripts/examples-check $(BUILD)

# The GPU check (issue 15; docs/cuda.md, "Running the GPU check").
#   make gpu-pack     builds the CUDA backend for GPU_ARCHS only (Release, in
#                     build-gpu/) and packs what a GPU machine needs into
#                     build-gpu-run/ (about 41 MiB)
#   make gpu-check OUT=folder [GPU_BUILD=build-gpu-run]   on the GPU machine
#   make gpu-check OUT=folder GPU_CHECK_FLAGS=--self-test  anywhere, on the CPU
GPU_ARCHS ?= 90
GPU_BUILD ?= build-gpu-run
OUT ?= build-gpu-check
GPU_CHECK_FLAGS ?=
gpu-build:
	cmake -S . -B build-gpu -DCHAINLUA_CUDA=ON -DCHAINLUA_CUDA_ARCHS=$(GPU_ARCHS) -DCMAKE_BUILD_TYPE=Release > build-gpu.configure.log
	cmake --build build-gpu -j $(JOBS) > build-gpu.build.log 2>&1 || { tail -n 40 build-gpu.build.log; exit 1; }

gpu-pack: gpu-build
	bash scripts/gpu-pack build-gpu $(GPU_BUILD)

gpu-check:
	bash scripts/gpu-check $(OUT) --build $(GPU_BUILD) $(GPU_CHECK_FLAGS)

# Regenerates lua/chainer/_ffi.lua and _ops.lua from runtime/include/chainlua.h and chainlua_ops.h.
ffi:
	luajit scripts/gen-ffi.lua runtime/include/chainlua.h lua/chainer

clean:
	rm -rf $(BUILD) $(BUILD).configure.log $(BUILD).build.log
