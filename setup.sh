#!/usr/bin/env bash
# Sets up companion on a fresh Debian/Ubuntu machine (or a Raspberry Pi OS):
# system packages for speech, sound and the camera, then a virtual environment in .venv.
set -euo pipefail
cd "$(dirname "$0")"

# espeak-ng: the voice (pyttsx3) and test speech; sox: audio conversion for the speech
# benchmark; libportaudio2: the microphone (sounddevice); alsa-utils: playback of the voice;
# libgl1, libglib2.0-0: OpenCV's runtime.
packages=(espeak-ng sox libportaudio2 alsa-utils libgl1 libglib2.0-0 python3-venv)
missing=()
for pkg in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    echo "setup: installing ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[test]'
echo "setup: done; run .venv/bin/companion --help"
