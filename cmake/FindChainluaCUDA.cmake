# FindChainluaCUDA.cmake -- locates the CUDA toolkit, cuBLAS and cuDNN for
# libchainlua_cuda.  Included from the top-level CMakeLists.txt (directory
# scope, so enable_language(CUDA) below applies to the whole project).
#
# Search order for the toolkit, as Chainer's installer did:
#   1. $CUDA_PATH (its bin/nvcc),  2. nvcc on PATH,  3. /usr/local/cuda.
# cuDNN is looked for in the toolkit, then $CUDNN_PATH / $CUDNN_ROOT_DIR,
# then the system include and library directories.
#
# Sets:
#   CHAINLUA_CUDA_FOUND          TRUE when nvcc, cuBLAS and cuDNN were all found
#   CHAINLUA_CUDA_ROOT           the toolkit root
#   CHAINLUA_CUDA_NVCC           the nvcc used (also CMAKE_CUDA_COMPILER)
#   CHAINLUA_CUDA_VERSION        nvcc's release, e.g. 13.0
#   CHAINLUA_CUDNN_INCLUDE_DIR   directory of cudnn.h
#   CHAINLUA_CUDNN_LIBRARY       libcudnn
#   CHAINLUA_CUDNN_VERSION       e.g. 9.13.0
#   CHAINLUA_CUDA_ARCHS_EFFECTIVE  CUDA_ARCHITECTURES value: "<a>-real;...;<newest>"
#                                (the newest also embeds PTX for future GPUs)
#   CHAINLUA_CUDA_NOT_FOUND_REASON  why not, when not found

set(CHAINLUA_CUDA_FOUND FALSE)
set(CHAINLUA_CUDA_NOT_FOUND_REASON "")

# ---- nvcc --------------------------------------------------------------------
set(_cl_nvcc "")
if(DEFINED ENV{CUDA_PATH} AND NOT "$ENV{CUDA_PATH}" STREQUAL "")
  if(EXISTS "$ENV{CUDA_PATH}/bin/nvcc")
    set(_cl_nvcc "$ENV{CUDA_PATH}/bin/nvcc")
  else()
    message(STATUS "CUDA backend: CUDA_PATH=$ENV{CUDA_PATH} has no bin/nvcc; searching PATH")
  endif()
endif()
if(NOT _cl_nvcc)
  find_program(CHAINLUA_NVCC_ON_PATH nvcc NO_CACHE)
  # (EXISTS follows links: a dangling /usr/local/bin/nvcc does not count)
  if(CHAINLUA_NVCC_ON_PATH AND EXISTS "${CHAINLUA_NVCC_ON_PATH}")
    set(_cl_nvcc "${CHAINLUA_NVCC_ON_PATH}")
  elseif(EXISTS "/usr/local/cuda/bin/nvcc")
    set(_cl_nvcc "/usr/local/cuda/bin/nvcc")
  endif()
endif()
# An explicit -DCMAKE_CUDA_COMPILER=... wins over the search.
if(CMAKE_CUDA_COMPILER AND EXISTS "${CMAKE_CUDA_COMPILER}")
  set(_cl_nvcc "${CMAKE_CUDA_COMPILER}")
endif()

if(NOT _cl_nvcc)
  set(CHAINLUA_CUDA_NOT_FOUND_REASON "nvcc not found (checked CUDA_PATH, PATH, /usr/local/cuda)")
  return()
endif()
get_filename_component(_cl_nvcc "${_cl_nvcc}" REALPATH)
get_filename_component(_cl_bin "${_cl_nvcc}" DIRECTORY)
# nvcc on PATH may be a wrapper script (this project's CI has
# /usr/local/bin/nvcc -> exec /usr/local/cuda-13.0/bin/nvcc): ask nvcc where
# it really lives (_HERE_ of a dry run) and use the toolkit's own binary.
execute_process(COMMAND "${_cl_nvcc}" --dryrun -E -x cu /dev/null
  OUTPUT_VARIABLE _cl_dry ERROR_VARIABLE _cl_dry RESULT_VARIABLE _cl_rc)
if(_cl_dry MATCHES "#\\$ _HERE_=([^\r\n]+)")
  string(STRIP "${CMAKE_MATCH_1}" _cl_here)
  if(EXISTS "${_cl_here}/nvcc")
    set(_cl_bin "${_cl_here}")
    get_filename_component(_cl_nvcc "${_cl_here}/nvcc" REALPATH)
  endif()
endif()
get_filename_component(CHAINLUA_CUDA_ROOT "${_cl_bin}" DIRECTORY)
set(CHAINLUA_CUDA_NVCC "${_cl_nvcc}")

execute_process(COMMAND "${_cl_nvcc}" --version
  OUTPUT_VARIABLE _cl_ver_out ERROR_QUIET RESULT_VARIABLE _cl_rc)
if(NOT _cl_rc EQUAL 0)
  set(CHAINLUA_CUDA_NOT_FOUND_REASON "${_cl_nvcc} --version failed")
  return()
endif()
string(REGEX MATCH "release ([0-9]+\\.[0-9]+)" _cl_m "${_cl_ver_out}")
set(CHAINLUA_CUDA_VERSION "${CMAKE_MATCH_1}")

# ---- cuBLAS and cuDNN -----------------------------------------------------------
set(_cl_libdirs "${CHAINLUA_CUDA_ROOT}/lib64" "${CHAINLUA_CUDA_ROOT}/lib"
  "${CHAINLUA_CUDA_ROOT}/targets/x86_64-linux/lib" "${CHAINLUA_CUDA_ROOT}/targets/sbsa-linux/lib")
find_library(CHAINLUA_CUBLAS_LIBRARY NAMES cublas PATHS ${_cl_libdirs} NO_DEFAULT_PATH)
find_library(CHAINLUA_CUBLAS_LIBRARY NAMES cublas)
if(NOT CHAINLUA_CUBLAS_LIBRARY)
  set(CHAINLUA_CUDA_NOT_FOUND_REASON "libcublas not found under ${CHAINLUA_CUDA_ROOT}")
  return()
endif()

set(_cl_cudnn_roots "${CHAINLUA_CUDA_ROOT}")
foreach(_v CUDNN_PATH CUDNN_ROOT_DIR CUDNN_HOME)
  if(DEFINED ENV{${_v}} AND NOT "$ENV{${_v}}" STREQUAL "")
    list(APPEND _cl_cudnn_roots "$ENV{${_v}}")
  endif()
endforeach()
set(_cl_cudnn_inc "")
set(_cl_cudnn_lib "")
foreach(_r ${_cl_cudnn_roots})
  list(APPEND _cl_cudnn_inc "${_r}/include" "${_r}/targets/x86_64-linux/include")
  list(APPEND _cl_cudnn_lib "${_r}/lib64" "${_r}/lib" "${_r}/targets/x86_64-linux/lib")
endforeach()
find_path(CHAINLUA_CUDNN_INCLUDE_DIR cudnn.h PATHS ${_cl_cudnn_inc} NO_DEFAULT_PATH)
find_path(CHAINLUA_CUDNN_INCLUDE_DIR cudnn.h PATH_SUFFIXES x86_64-linux-gnu aarch64-linux-gnu)
find_library(CHAINLUA_CUDNN_LIBRARY NAMES cudnn PATHS ${_cl_cudnn_lib} NO_DEFAULT_PATH)
find_library(CHAINLUA_CUDNN_LIBRARY NAMES cudnn)
if(NOT CHAINLUA_CUDNN_INCLUDE_DIR OR NOT CHAINLUA_CUDNN_LIBRARY)
  set(CHAINLUA_CUDA_NOT_FOUND_REASON "cuDNN not found (cudnn.h: ${CHAINLUA_CUDNN_INCLUDE_DIR}, libcudnn: ${CHAINLUA_CUDNN_LIBRARY}; set CUDNN_PATH)")
  return()
endif()
# cuDNN 8+ keeps the version macros in cudnn_version.h, older ones in cudnn.h.
set(CHAINLUA_CUDNN_VERSION "unknown")
foreach(_h cudnn_version.h cudnn.h)
  if(EXISTS "${CHAINLUA_CUDNN_INCLUDE_DIR}/${_h}")
    file(STRINGS "${CHAINLUA_CUDNN_INCLUDE_DIR}/${_h}" _cl_lines REGEX "^#define CUDNN_(MAJOR|MINOR|PATCHLEVEL) +[0-9]+")
    if(_cl_lines)
      string(REGEX REPLACE ".*CUDNN_MAJOR +([0-9]+).*" "\\1" _maj "${_cl_lines}")
      string(REGEX REPLACE ".*CUDNN_MINOR +([0-9]+).*" "\\1" _min "${_cl_lines}")
      string(REGEX REPLACE ".*CUDNN_PATCHLEVEL +([0-9]+).*" "\\1" _pat "${_cl_lines}")
      set(CHAINLUA_CUDNN_VERSION "${_maj}.${_min}.${_pat}")
      break()
    endif()
  endif()
endforeach()

# ---- architectures ---------------------------------------------------------------
# Keep the requested architectures that this nvcc can still compile real
# code for (CUDA 12 dropped sm_35..sm_50, CUDA 13 dropped sm_70/sm_72).
# CHAINLUA_CUDA_ARCHS empty: the GPUs of this machine when nvidia-smi tells
# their compute capability (a first build compiles for them only), else the
# usual list (CI, or a machine without a GPU, with CHAINLUA_CUDA=ON).
set(_cl_archs "${CHAINLUA_CUDA_ARCHS}")
if(NOT _cl_archs)
  find_program(_cl_smi nvidia-smi NO_CACHE)
  if(_cl_smi)
    execute_process(COMMAND ${_cl_smi} --query-gpu=compute_cap --format=csv,noheader
      OUTPUT_VARIABLE _cl_caps ERROR_QUIET RESULT_VARIABLE _cl_smi_rc)
    if(_cl_smi_rc EQUAL 0)
      string(REGEX MATCHALL "[0-9]+\\.[0-9]+" _cl_caps "${_cl_caps}")
      foreach(_c ${_cl_caps})
        string(REPLACE "." "" _c "${_c}")
        list(APPEND _cl_archs "${_c}")
      endforeach()
    endif()
  endif()
  if(_cl_archs)
    message(STATUS "CUDA backend: building for the GPUs present (sm_${_cl_archs}; set CHAINLUA_CUDA_ARCHS for others)")
  else()
    set(_cl_archs "70;75;80;86;89;90")
  endif()
endif()
execute_process(COMMAND "${_cl_nvcc}" --list-gpu-code
  OUTPUT_VARIABLE _cl_codes ERROR_QUIET RESULT_VARIABLE _cl_rc)
set(_cl_kept "")
set(_cl_dropped "")
foreach(_a ${_cl_archs})
  string(REGEX REPLACE "-(real|virtual)$" "" _num "${_a}")
  if(_cl_rc EQUAL 0 AND NOT _cl_codes MATCHES "sm_${_num}([^0-9a-z]|$)")
    list(APPEND _cl_dropped "${_num}")
  else()
    list(APPEND _cl_kept "${_num}")
  endif()
endforeach()
if(_cl_dropped)
  string(REPLACE ";" ", sm_" _cl_msg "${_cl_dropped}")
  message(STATUS "CUDA backend: nvcc ${CHAINLUA_CUDA_VERSION} cannot compile sm_${_cl_msg}; dropped from CHAINLUA_CUDA_ARCHS")
endif()
if(NOT _cl_kept)
  set(CHAINLUA_CUDA_NOT_FOUND_REASON "none of the CUDA architectures (${_cl_archs}) is supported by nvcc ${CHAINLUA_CUDA_VERSION}")
  return()
endif()
list(REMOVE_DUPLICATES _cl_kept)
list(SORT _cl_kept COMPARE NATURAL)
list(POP_BACK _cl_kept _cl_newest)
set(CHAINLUA_CUDA_ARCHS_EFFECTIVE "")
foreach(_a ${_cl_kept})
  list(APPEND CHAINLUA_CUDA_ARCHS_EFFECTIVE "${_a}-real")
endforeach()
# a plain number means SASS and PTX: the PTX lets newer GPUs JIT the kernels
list(APPEND CHAINLUA_CUDA_ARCHS_EFFECTIVE "${_cl_newest}")

# ---- the CUDA language ------------------------------------------------------------
if(NOT CMAKE_CUDA_COMPILER)
  set(CMAKE_CUDA_COMPILER "${_cl_nvcc}" CACHE FILEPATH "CUDA compiler (found by FindChainluaCUDA)")
endif()
# Pins the architecture of CMake's own compiler check, so that it does not
# depend on nvcc's changing default.
if(NOT CMAKE_CUDA_ARCHITECTURES)
  set(CMAKE_CUDA_ARCHITECTURES "${_cl_newest}")
endif()
enable_language(CUDA)

set(CHAINLUA_CUDA_FOUND TRUE)
message(STATUS "CUDA backend: nvcc ${CHAINLUA_CUDA_VERSION} (${_cl_nvcc}), cuDNN ${CHAINLUA_CUDNN_VERSION} (${CHAINLUA_CUDNN_LIBRARY}), archs ${CHAINLUA_CUDA_ARCHS_EFFECTIVE}")
