"""Map the top-level folders onto the ``agrag`` import package.

The repository keeps ``components/``, ``pipelines/``, ``flows/``, ``service/`` and ``conf/`` at its root (the
layout users asked for); they install as ``agrag.components`` and so on. ``agrag`` itself stays a namespace
package, so no folder has to pretend to be it.
"""

from pathlib import Path

from setuptools import setup

ROOT = Path(__file__).parent
CODE_FOLDERS = ("components", "pipelines", "flows", "service")


def _code_packages() -> tuple[list[str], dict[str, str]]:
    packages: list[str] = []
    package_dir: dict[str, str] = {}
    for top in CODE_FOLDERS:
        package_dir[f"agrag.{top}"] = top
        for init in sorted((ROOT / top).rglob("__init__.py")):
            parts = init.parent.relative_to(ROOT).parts
            packages.append("agrag." + ".".join(parts))
    return packages, package_dir


packages, package_dir = _code_packages()
package_dir["agrag.conf"] = "conf"
packages.append("agrag.conf")

setup(
    packages=packages,
    package_dir=package_dir,
    package_data={**{p: ["py.typed"] for p in packages}, "agrag.conf": ["*.yaml", "*/*.yaml"]},
)
