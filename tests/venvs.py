"""Virtual environments for tests that install with pip, made without downloading anything.

A venv gets hippo from this checkout and borrows this environment's packages (hippo's
dependencies, pip, setuptools) through a ``.pth`` file; pip runs with no index.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def wheel_backend_missing() -> str:
    """Why setuptools cannot build a wheel here without downloading; empty when it can."""
    from importlib.metadata import PackageNotFoundError, version
    from importlib.util import find_spec

    from packaging.version import Version

    try:
        found = version("setuptools")
    except PackageNotFoundError:
        return "building a wheel offline needs setuptools>=70.1 (pip install 'setuptools>=70.1')"
    if Version(found) >= Version("70.1") or find_spec("wheel") is not None:
        return ""
    return (
        f"setuptools {found} builds wheels only with the wheel package, which is not "
        "installed; building one offline needs setuptools>=70.1 (pip install 'setuptools>=70.1')"
    )


def make_venv(folder: Path) -> Path:
    """A virtual environment with ``hippo`` and ``pip``, made without downloading anything."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    bin_dir = folder / ("Scripts" if os.name == "nt" else "bin")
    python = bin_dir / ("python.exe" if os.name == "nt" else "python")
    probe = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    found = subprocess.run([python, "-c", probe], capture_output=True, text=True, check=True)
    site = Path(found.stdout.strip())
    # After the venv's own site-packages: this checkout, then everything importable here.
    here = [sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]
    here += [p for p in sys.path if Path(p).name in ("site-packages", "dist-packages")]
    lines = [str(ROOT), *dict.fromkeys(p for p in here if Path(p).is_dir())]
    (site / "_hippo_tests.pth").write_text("\n".join(lines) + "\n", encoding="utf-8")
    scripts = {"hippo": "hippo_core.cli", "pip": "pip._internal.cli.main"}
    for name, module in scripts.items():
        script = bin_dir / name
        script.write_text(
            f"#!{python}\nimport sys\nfrom {module} import main\nsys.exit(main())\n",
            encoding="utf-8",
        )
        script.chmod(0o755)
    return folder


def offline_env(venv: Path, *before: Path) -> dict[str, str]:
    """The environment of a shell in ``venv``: its scripts first on PATH, pip offline, no
    plugin filter, and none of this machine's pip settings."""
    dropped = ("HIPPO_LOAD_PLUGINS", "PYTHONPATH", "PYTHONHOME")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_") and k not in dropped}
    bin_dir = venv / ("Scripts" if os.name == "nt" else "bin")
    env["PATH"] = os.pathsep.join([str(bin_dir), *map(str, before), env.get("PATH", "")])
    env["VIRTUAL_ENV"] = str(venv)
    env["PIP_CONFIG_FILE"] = os.devnull
    env["PIP_NO_INDEX"] = "1"
    # pip reads this variable backwards: "0" turns build isolation off, so builds use the
    # setuptools that is here instead of downloading one.
    env["PIP_NO_BUILD_ISOLATION"] = "0"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env["PYTHONNOUSERSITE"] = "1"
    return env
