"""Build hook: copy the data folders (patterns/, kb/, site/) into the wheel as analyzer/_data/.

The pattern library and the knowledge base live at the top of the repository, where
contributors find them; an installed `triage` must carry them, so the build copies them
beside the package. Everything else is declared in pyproject.toml.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

DATA_DIRS = ("patterns", "kb", "site")  # site/: the templates and assets of `triage site build`


class BuildWithData(build_py):
    def run(self) -> None:
        super().run()
        root = Path(__file__).parent
        for name in DATA_DIRS:
            src = root / name
            if not src.is_dir():
                continue
            dest = Path(self.build_lib) / "analyzer" / "_data" / name
            shutil.rmtree(dest, ignore_errors=True)
            shutil.copytree(src, dest, ignore=shutil.ignore_patterns("_build", "__pycache__"))


setup(cmdclass={"build_py": BuildWithData})
