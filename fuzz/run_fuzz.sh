#!/usr/bin/env bash
# run_fuzz.sh FUZZER SYNAPSE CORPUS_DIR SECONDS
# Seeds an empty corpus for the target (fuzz_gguf: small synthetic models;
# fuzz_tokenizer: texts; fuzz_chat_template: the test chat templates;
# fuzz_request: request bodies; fuzz_imatrix: a GGUF and a legacy imatrix;
# fuzz_safetensors: small valid safetensors files and an index; fuzz_frame:
# none, its inputs build frames), then fuzzes for SECONDS.
set -euo pipefail
fuzzer=$1 synapse=$2 corpus=$3 seconds=$4
repo=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$corpus"

seed_models() {
  for arch in llama qwen2 qwen3 olmoe; do
    for type in f16 q8_0 q4_k; do
      "$synapse" synth --arch "$arch" --preset tiny --type "$type" --n-layer 1 --n-vocab 300 \
        --n-embd 256 --n-ff 256 -o "$corpus/seed-$arch-$type.gguf" >/dev/null
    done
  done
}

# A seed is one byte choosing tokenizer and flags, then the text.
seed_texts() {
  local texts=("$repo/README.md" "$repo/src/tokenizer/tokenizer.cpp")
  printf '<|im_start|>user\nHello, world! 123 caf\xc3\xa9 \xe6\x97\xa5\xf0\x9f\xa6\x99\xff\xc3<|im_end|>\n<s> the thing' \
    >"$corpus/chat.txt"
  texts+=("$corpus/chat.txt")
  local control i=0
  for control in $(seq 0 23); do
    { printf "\\x$(printf %02x "$control")"; head -c 2048 "${texts[i % ${#texts[@]}]}"; } \
      >"$corpus/seed-$control"
    i=$((i + 1))
  done
  rm "$corpus/chat.txt"
}

# A seed is one byte choosing the endpoint (even: completions), then a body.
seed_requests() {
  printf '\x00{"prompt": "Once upon", "max_tokens": 8, "temperature": 0.7, "stop": ["\\n"], "logprobs": 2}' \
    >"$corpus/seed-completion"
  printf '\x00{"prompt": [[1, 2, 3]], "stream": true, "seed": -1, "n_probs": 3, "top_k": 40}' >"$corpus/seed-ids"
  printf '\x01{"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": [{"type": "text", "text": "Hi"}]}], "stream": true, "stream_options": {"include_usage": true}, "logprobs": true, "top_logprobs": 2, "max_completion_tokens": 16}' \
    >"$corpus/seed-chat"
}

# Two imatrix entries (a matrix, and three experts of which one saw no
# tokens) as write_imatrix writes them (GGUF), and as a legacy .dat file.
seed_imatrix() {
  base64 -d >"$corpus/seed.gguf" <<'B64'
R0dVRgMAAAAEAAAAAAAAAAQAAAAAAAAADAAAAAAAAABnZW5lcmFsLnR5cGUIAAAABwAAAAAAAABpbWF0cml4EAAAAAAAAABpbWF0
cml4LmRhdGFzZXRzCQAAAAgAAAABAAAAAAAAAAgAAAAAAAAAd2lraS50eHQTAAAAAAAAAGltYXRyaXguY2h1bmtfY291bnQEAAAA
AwAAABIAAAAAAAAAaW1hdHJpeC5jaHVua19zaXplBAAAAEAAAAAbAAAAAAAAAGJsay4wLmF0dG5fcS53ZWlnaHQuaW5fc3VtMgEA
AAAIAAAAAAAAAAAAAAAAAAAAAAAAABoAAAAAAAAAYmxrLjAuYXR0bl9xLndlaWdodC5jb3VudHMBAAAAAQAAAAAAAAAAAAAAIAAA
AAAAAAAgAAAAAAAAAGJsay4wLmZmbl91cF9leHBzLndlaWdodC5pbl9zdW0yAgAAAAIAAAAAAAAAAwAAAAAAAAAAAAAAQAAAAAAA
AAAfAAAAAAAAAGJsay4wLmZmbl91cF9leHBzLndlaWdodC5jb3VudHMCAAAAAQAAAAAAAAADAAAAAAAAAAAAAABgAAAAAAAAAAAA
gD8AAABAAABAQAAAgEAAAKBAAADAQAAA4EAAAABBAACAQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAIA/AAAAQAAAQEAA
AIBAAACgQAAAwEAAAAAAAAAAAAAAAEAAAAAAAADAQAAAAAAAAAAAAAAAAAAAAAAAAAAA
B64
  base64 -d >"$corpus/seed.dat" <<'B64'
AgAAABMAAABibGsuMC5hdHRuX3Eud2VpZ2h0BAAAAAgAAAAAAIA/AAAAQAAAQEAAAIBAAACgQAAAwEAAAOBAAAAAQRgAAABibGsu
MC5mZm5fdXBfZXhwcy53ZWlnaHQCAAAABgAAAAAAgD8AAABAAABAQAAAgEAAAKBAAADAQAMAAAAIAAAAd2lraS50eHQ=
B64
}

# A safetensors file: FILE, then the header JSON (padded with spaces to a
# multiple of 8 bytes, as writers pad it), then DATA_BYTES bytes of data.
write_safetensors() {
  local file=$1 header=$2 data_bytes=$3 n i
  while (( ${#header} % 8 )); do header+=" "; done
  n=${#header}
  {
    for i in 0 1 2 3 4 5 6 7; do printf "\\x$(printf %02x $(( (n >> (8 * i)) & 255 )))"; done
    printf '%s' "$header"
    head -c "$data_bytes" /dev/zero | tr '\0' '\1'
  } >"$file"
}

# Valid files (every dtype size, a scalar, an empty tensor, metadata), the
# shared stories model's real header with its tensors made empty (so the file
# stays small and valid), and a sharded model's index.
seed_safetensors() {
  write_safetensors "$corpus/seed-mixed.safetensors" \
    '{"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},"b":{"dtype":"BF16","shape":[4],"data_offsets":[24,32]},"c":{"dtype":"I64","shape":[],"data_offsets":[32,40]},"d":{"dtype":"F16","shape":[0,5],"data_offsets":[40,40]},"e":{"dtype":"U8","shape":[3],"data_offsets":[40,43]}}' 43
  write_safetensors "$corpus/seed-dtypes.safetensors" \
    '{"f4":{"dtype":"F4","shape":[2],"data_offsets":[0,1]},"f6":{"dtype":"F6_E2M3","shape":[4],"data_offsets":[1,4]},"e8":{"dtype":"F8_E8M0","shape":[1],"data_offsets":[4,5]},"b":{"dtype":"BOOL","shape":[1,1],"data_offsets":[5,6]},"i16":{"dtype":"I16","shape":[1],"data_offsets":[6,8]},"c64":{"dtype":"C64","shape":[1],"data_offsets":[8,16]},"f64":{"dtype":"F64","shape":[1],"data_offsets":[16,24]},"u32":{"dtype":"U32","shape":[2],"data_offsets":[24,32]}}' 32
  write_safetensors "$corpus/seed-empty.safetensors" '{}' 0
  local model="$repo/../shared/data/hf-models/stories260K-hf/model.safetensors" n header
  if [ -f "$model" ]; then
    n=$(od -An -tu8 -N8 "$model" | tr -d ' ')
    header=$(head -c $((8 + n)) "$model" | tail -c +9 |
      sed -E 's/"shape":\[[0-9,]*\]/"shape":[0]/g; s/"data_offsets":\[[0-9]+,[0-9]+\]/"data_offsets":[0,0]/g; s/ +$//')
    write_safetensors "$corpus/seed-stories.safetensors" "$header" 0
  fi
  printf '{"metadata":{"total_size":1536},"weight_map":{"lm_head.weight":"model-00002-of-00002.safetensors","model.embed_tokens.weight":"model-00001-of-00002.safetensors"}}' \
    >"$corpus/seed-index.json"
  # config.json (the same target reads it): a MoE one with rope scaling.
  printf '{"model_type":"qwen2_moe","hidden_size":64,"intermediate_size":128,"num_hidden_layers":2,"num_attention_heads":4,"num_key_value_heads":2,"vocab_size":512,"max_position_embeddings":512,"rms_norm_eps":1e-6,"num_experts":4,"num_experts_per_tok":2,"moe_intermediate_size":32,"shared_expert_intermediate_size":64,"rope_scaling":{"type":"yarn","factor":4.0,"original_max_position_embeddings":128},"eos_token_id":[2,3]}' \
    >"$corpus/seed-config.json"
  local config="$repo/../shared/data/hf-models/stories260K-hf/config.json"
  if [ -f "$config" ]; then cp "$config" "$corpus/seed-stories-config.json"; fi
}

max_len=65536  # covers the model seeds' headers; tensor data past it is not where parsers break
case "$(basename "$fuzzer")" in
  fuzz_tokenizer)
    [ -n "$(ls -A "$corpus")" ] || seed_texts
    max_len=4096
    spm_model="$repo/../shared/data/stories260K/tok512.model"
    if [ -f "$spm_model" ]; then export SYNAPSE_FUZZ_SPM_MODEL=$spm_model; fi
    ;;
  fuzz_chat_template)
    [ -n "$(ls -A "$corpus")" ] || cp "$repo"/tests/data/chat_templates/*.jinja "$corpus"/
    max_len=8192
    ;;
  fuzz_request)
    [ -n "$(ls -A "$corpus")" ] || seed_requests
    max_len=4096
    ;;
  fuzz_imatrix)
    [ -n "$(ls -A "$corpus")" ] || seed_imatrix
    max_len=4096
    ;;
  fuzz_safetensors)
    [ -n "$(ls -A "$corpus")" ] || seed_safetensors
    max_len=16384
    ;;
  fuzz_frame)  # its inputs are recipes for frames: no seeds needed
    max_len=512
    ;;
  *)
    [ -n "$(ls -A "$corpus")" ] || seed_models
    ;;
esac
exec "$fuzzer" "$corpus" -max_total_time="$seconds" -max_len="$max_len" -timeout=10 \
  -rss_limit_mb=2048 -print_final_stats=1
