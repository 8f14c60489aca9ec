# Checks that the lower layers of src/ include only the layers below them, so
# that dependencies stay one-way. Fails naming every include that breaks a
# rule. Run as
#   cmake -DSOURCE_DIR=<the src/ folder> -P scripts/check_layering.cmake
#
# Each checked layer of src/ lists the other folders of src/ its files may
# include ("synapse/..." is the public include/ folder, always allowed).
# encoding/ is the bottom layer (ggml type ids, names, block layouts, the
# reference codecs): everything that reads, describes or computes on tensor
# bytes builds on it.
cmake_minimum_required(VERSION 3.25)

set(layers encoding format ir kernels model eval quantize)
set(below_encoding "")
set(below_format encoding)
set(below_ir encoding)
set(below_kernels encoding ir)
set(below_model encoding format ir)
# eval/ (perplexity, KL divergence) scores logits an engine hands it; it
# knows no engine.
set(below_eval encoding format)
# quantize/ (llama.cpp's per-tensor type rules, the quantizer) re-encodes
# GGUF files; it runs no model. synth/ builds on it.
set(below_quantize encoding format kernels)

# IS_DIRECTORY is only well defined on absolute paths.
file(REAL_PATH "${SOURCE_DIR}" SOURCE_DIR)
if(NOT IS_DIRECTORY "${SOURCE_DIR}")
  message(FATAL_ERROR "SOURCE_DIR='${SOURCE_DIR}' is not a folder")
endif()

set(violations "")
set(n_violations 0)
foreach(layer IN LISTS layers)
  set(allowed ${layer} ${below_${layer}})
  file(GLOB_RECURSE files RELATIVE "${SOURCE_DIR}" "${SOURCE_DIR}/${layer}/*.h" "${SOURCE_DIR}/${layer}/*.cpp")
  list(SORT files)
  foreach(file IN LISTS files)
    file(STRINGS "${SOURCE_DIR}/${file}" includes REGEX "^[ \t]*#[ \t]*include[ \t]*\"[^\"/]+/")
    foreach(line IN LISTS includes)
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"/]+)/.*" "\\1" folder "${line}")
      # Only folders of src/ are layers; anything else is not ours to judge.
      if(IS_DIRECTORY "${SOURCE_DIR}/${folder}" AND NOT folder IN_LIST allowed)
        string(APPEND violations "\n  src/${file}: ${line}")
        math(EXPR n_violations "${n_violations} + 1")
      endif()
    endforeach()
  endforeach()
endforeach()

if(n_violations GREATER 0)
  message(FATAL_ERROR "${n_violations} includes break the layering:${violations}")
endif()
message(STATUS "layering holds for: ${layers}")
