"""Only what pyproject.toml cannot say: the wheel, editable or not, carries ``unpredictabench-lm-eval.pth`` at its
root (site-packages), so plain ``lm_eval`` finds our tasks and models (``unpredictabench_lm_eval_hook``).
Everything else is in pyproject.toml."""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.editable_wheel import editable_wheel

PTH = "unpredictabench-lm-eval.pth"
PTH_SOURCE = Path(__file__).resolve().parent / PTH


class BuildPyWithPth(build_py):
    """build_py, plus the ``.pth`` file at the root of the build (the wheel's site-packages root)."""

    def run(self):
        super().run()
        self.copy_file(str(PTH_SOURCE), str(Path(self.build_lib) / PTH), preserve_mode=False)

    def get_outputs(self, include_bytecode=True):
        return [*super().get_outputs(include_bytecode), str(Path(self.build_lib) / PTH)]


class EditableWheelWithPth(editable_wheel):
    """An editable wheel does not take build_py's extra files: the ``.pth`` goes into the unpacked wheel, which
    setuptools writes as it is (``_run_build_commands`` is setuptools' own step, present since editable wheels
    exist: setuptools >= 64). Without that step the install still works, without the hook, and says so."""

    def _run_build_commands(self, dist_name, unpacked_wheel, build_lib, tmp_dir):
        out = super()._run_build_commands(dist_name, unpacked_wheel, build_lib, tmp_dir)
        shutil.copyfile(PTH_SOURCE, Path(unpacked_wheel) / PTH)
        return out


if not hasattr(editable_wheel, "_run_build_commands"):  # pragma: no cover - a setuptools we have not seen
    print(f"setup.py: this setuptools has no editable_wheel._run_build_commands: an editable install lacks {PTH} "
          "(plain lm_eval will not find our tasks; use ub-lm-eval or --include_path \"$(ub tasks-dir)\")")
    EditableWheelWithPth = editable_wheel  # noqa: F811

setup(cmdclass={"build_py": BuildPyWithPth, "editable_wheel": EditableWheelWithPth})
