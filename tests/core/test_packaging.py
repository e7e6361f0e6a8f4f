"""The package installed from a wheel works on its own (issue 12, case 12).

The demo files ship inside the package (``budgetdag_core/_data``, read with
``importlib.resources``): a regular install finds them from any directory,
without the repository's folders.
"""

from __future__ import annotations

import os
import runpy
import shutil
import site
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import sys
from pathlib import Path

import budgetdag_core
from budgetdag_core import load_demo
from budgetdag_core.datasets import find_file

demo = load_demo("landsat")
print(Path(budgetdag_core.__file__).resolve())
print(find_file("landsat_train.csv.gz").resolve())
print(demo.X_train.shape, demo.X_test.shape, demo.spec.n_sensors)
print(*(load_demo(name).train.shape for name in ("letter", "pima", "spam")))
"""


def _site_dirs() -> list[str]:
    """This interpreter's site directories (a virtualenv's, when in one)."""
    dirs = site.getsitepackages()
    if site.ENABLE_USER_SITE:
        dirs.append(site.getusersitepackages())
    return [path for path in dirs if Path(path).is_dir()]


def test_wheel_install_loads_demos_from_any_directory(tmp_path):
    # Build from a copy of the sources, so the build leaves the checkout alone.
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(
        ROOT / "budgetdag_core",
        src / "budgetdag_core",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    dist = tmp_path / "dist"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    subprocess.run(
        [*pip, "wheel", "--no-deps", "-q", "-w", str(dist), str(src)],
        check=True,
        capture_output=True,
    )
    # The wheel's version is _version.py's: the one place it is written.
    version = runpy.run_path(str(ROOT / "budgetdag_core" / "_version.py"))
    (wheel,) = dist.glob(f"budgetdag-{version['__version__']}-*.whl")

    # The venv sees the dependencies installed where this test runs (offline):
    # a .pth file adds this interpreter's site directories after the venv's
    # own. (``system_site_packages`` would add the base interpreter's, which
    # lack them when the tests run inside a virtualenv.) The venv's copy of
    # the package shadows any development install, which Python finds after it.
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    (Path(purelib) / "running_interpreter.pth").write_text(
        "import site; "
        + "; ".join(f"site.addsitedir({path!r})" for path in _site_dirs())
        + "\n"
    )
    subprocess.run(
        [*pip, "--python", str(python), "install", "-q", "--no-deps", "--no-index"]
        + ["--force-reinstall", str(wheel)],
        check=True,
        capture_output=True,
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {
        k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "BUDGETDAG_DATA")
    }
    # The probe fits nothing: no warm-up child compiling for the wheel's copy.
    env["BUDGETDAG_WARM_UP"] = "0"
    out = subprocess.run(
        [str(python), "-c", PROBE],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    package, data_file, shapes, others = out.stdout.strip().splitlines()
    site = (env_dir / "lib").resolve()
    assert Path(package).is_relative_to(site)
    assert Path(data_file).is_relative_to(site)
    assert Path(data_file).parent.name == "_data"
    assert shapes == "(4435, 36) (2000, 36) 4"
    assert others == "(16000, 17) (576, 9) (3450, 58)"
