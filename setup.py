"""Map the top-level folders onto the ``agrag`` import package.

The repository keeps ``components/``, ``pipelines/``, ``flows/``, ``service/`` and ``conf/`` at its root (the
layout users asked for); they install as ``agrag.components`` and so on. Each folder of ``facade/`` installs as one
more ``agrag.*`` package (``facade/retrieval`` as ``agrag.retrieval``): the public import paths of the spec.
``agrag`` itself stays a namespace package, so no folder has to pretend to be it.
"""

from pathlib import Path

from setuptools import setup

ROOT = Path(__file__).parent
CODE_FOLDERS = ("components", "pipelines", "flows", "service")
# facade/ holds the spec's public import paths: facade/retrieval installs as agrag.retrieval, and so on.
FACADE = "facade"


def _code_packages() -> tuple[list[str], dict[str, str]]:
    packages: list[str] = []
    package_dir: dict[str, str] = {}
    for top in CODE_FOLDERS:
        package_dir[f"agrag.{top}"] = top
        for init in sorted((ROOT / top).rglob("__init__.py")):
            parts = init.parent.relative_to(ROOT).parts
            packages.append("agrag." + ".".join(parts))
    for top in sorted(d for d in (ROOT / FACADE).iterdir() if (d / "__init__.py").is_file()):
        package_dir[f"agrag.{top.name}"] = f"{FACADE}/{top.name}"
        for init in sorted(top.rglob("__init__.py")):
            packages.append("agrag." + ".".join(init.parent.relative_to(ROOT / FACADE).parts))
    return packages, package_dir


packages, package_dir = _code_packages()
# conf/ holds YAML only: each folder is a data-only package (agrag.conf, agrag.conf.recipe, ...).
conf_packages = ["agrag.conf"] + [
    "agrag.conf." + ".".join(d.relative_to(ROOT / "conf").parts)
    for d in sorted((ROOT / "conf").rglob("*"))
    if d.is_dir()
]
package_dir["agrag.conf"] = "conf"

setup(
    packages=packages + conf_packages,
    package_dir=package_dir,
    package_data={**{p: ["py.typed"] for p in packages}, **{p: ["*.yaml"] for p in conf_packages}},
)
