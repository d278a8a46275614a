# lit configuration for blocc's golden tests. Every *.bir file under this
# directory is a test: its `// RUN:` lines call blocc-opt and FileCheck.
# Run through the build tree (`lit build/tests/lit`, `ninja check-lit` or
# `ctest -R lit`), which provides lit.site.cfg.py with the tool paths.
import os
import sys

import lit.formats

config.name = "blocc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".bir"]
config.excludes = ["CMakeLists.txt", "README.md"]

if not hasattr(config, "blocc_opt"):
    lit_config.fatal(
        "run the lit tests from the build tree (lit <build>/tests/lit), "
        "which holds lit.site.cfg.py with the tool paths")

config.test_source_root = config.blocc_lit_source_dir
config.test_exec_root = config.blocc_lit_binary_dir

# The internal shell runs `not` itself; blocc-opt and FileCheck are found
# by name on a PATH that starts with this build's tools.
tool_dirs = [os.path.dirname(config.blocc_opt), os.path.dirname(config.filecheck)]
config.environment["PATH"] = os.pathsep.join(
    tool_dirs + [config.environment.get("PATH", os.environ.get("PATH", ""))])
config.substitutions.append(("%blocc-opt", config.blocc_opt))
# blocc-compile's tests (compile/): the kernel library tests/aot builds,
# and a shared library that exports no kernels.
config.substitutions.append(("%blocc_compile", config.blocc_compile))
config.substitutions.append(("%aot_kernels", config.blocc_aot_kernels))
config.substitutions.append(("%no_kernels", config.blocc_no_kernels))
config.substitutions.append(("%FileCheck", config.filecheck))
# Tests too wide for RUN lines (a loop over files and configurations) are
# Python scripts beside them, run by the interpreter running lit.
config.substitutions.append(("%python", sys.executable))
