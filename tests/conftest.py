import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def run_companion(*args, input_text=None, timeout=120, env_extra=None):
    """Run the real command line in a child process, as a user would."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-m", "companion", *map(str, args)], input=input_text,
                          capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT)


@pytest.fixture
def companion_cli():
    return run_companion
