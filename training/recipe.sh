#!/usr/bin/env bash
# Rebuilds the bundled call recogniser from nothing: the corpus, the shipped network, one
# network per voice family left out, the confidence fitted on those, and the network the
# benchmark hears festival with. About three hours on 2 cores (run one training at a time:
# two torch trainings side by side on 2 cores each run several times slower).
# Needs: pip install -e '.[train]', and Debian's espeak-ng festival festvox-kdlpc16k.
set -euo pipefail
cd "$(dirname "$0")/.."
augment=(--feature-noise 0.3 --time-masks 2)
python -m training.build --out build/speech --seed 22
# More speakers from the same voices: each clip's formants moved (vocal tract length warp).
python -m training.build --out build/speech --seed 22 --warp 0.85 1.18
# More again: warped, said faster or slower at the same pitch, and the Spanish words said
# the other ways people say them.
python -m training.build --out build/speech --seed 22 --warp 0.82 1.22 --tempo 0.85 1.18 --respell
python -m training.train --data build/speech --out companion/listen/call_model.npz \
    --epochs 40 --seed 22 "${augment[@]}"
for family in espeak piper kokoro festival; do
    python -m training.train --data build/speech --leave-out "$family" --epochs 20 --seed 22 \
        "${augment[@]}" --out "build/lofo/$family.npz"
done
python -m training.confidence --data build/speech --models build/lofo \
    --out companion/listen/call_confidence.json
# The network the speech benchmark hears festival with: trained as the shipped one, without
# festival, and its confidence fitted without festival too.
python -m training.train --data build/speech --leave-out festival --epochs 40 --seed 22 \
    "${augment[@]}" --out build/lofo-shipped/festival.npz
python -m training.confidence --data build/speech --models build/lofo --leave-out festival \
    --out build/lofo-shipped/festival.confidence.json
