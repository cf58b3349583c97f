"""The test suite: ``tests/unit`` (fakes, seconds), ``tests/integration`` (real models), ``tests/server`` (real
servers). Helpers every tier imports live in ``tests.support``.

Every native library runs on one thread, in the test process and in every child it starts (the test
machines have 2 noisy cores): set here, before any test module loads numpy or onnxruntime.
"""

import os

THREAD_ENV = {
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
    "VECLIB_MAXIMUM_THREADS": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "LLAMA_LOG_LEVEL": "error",
}
for _name, _value in THREAD_ENV.items():
    os.environ.setdefault(_name, _value)
