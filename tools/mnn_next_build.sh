#!/bin/sh
# Build MNN's tokenizer with the format-next patch (patches/mnn/*.patch) and run MNN's own device test on it.
#   MNN_REPO=<git dir of alibaba/MNN> OUT=<work dir> [MODELS=<dir>] tools/mnn_next_build.sh [HF_FOLDER ...]
# Checks that MNN_REPO's HEAD is patches/mnn/MNN_COMMIT and that the patches apply with `git apply --check`
# to an export of it, builds $OUT/mnn_tok and $OUT/test_tokenizer with ../shared/tools/mnn-reference
# (PATCHES= applies them), then writes `mtokspec goldens` of each HF folder with its `--target mnn-next`
# file into $MODELS (default $OUT/models) and runs test_tokenizer over them.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
ref=${MNN_REFERENCE:-$root/../shared/tools/mnn-reference}
: "${MNN_REPO:?set MNN_REPO}" "${OUT:?set OUT}"
want=$(cat "$root/patches/mnn/MNN_COMMIT")
have=$(git -C "$MNN_REPO" rev-parse HEAD)
[ "$want" = "$have" ] || { echo "MNN_REPO is at $have, the patches are for $want" >&2; exit 1; }
check=$(mktemp -d)
trap 'rm -rf "$check"' EXIT
git -C "$MNN_REPO" archive HEAD transformers/llm/engine/src/tokenizer | tar -x -C "$check"
(cd "$check" && git init -q . && git apply --check "$root"/patches/mnn/*.patch)
echo "patches apply (git apply --check) to MNN $want"
MNN_REPO=$MNN_REPO OUT=$OUT PATCHES=$root/patches/mnn sh "$ref/build.sh"
MNN_REPO=$MNN_REPO OUT=$OUT PATCHES=$root/patches/mnn sh "$ref/build-test.sh"
[ $# -gt 0 ] || exit 0
models=${MODELS:-$OUT/models}
PYTHON=${PYTHON:-python3}
for folder in "$@"; do
    name=$(basename "$folder")
    mkdir -p "$models/$name"
    # exit 3: written, and the report lists where the patched MNN still differs from HF
    (cd "$root" && "$PYTHON" -m mtokspec convert "$folder" --target mnn-next -o "$models/$name/tokenizer.mtok" \
        --force >/dev/null 2>&1) || [ $? -eq 3 ]
    (cd "$root" && "$PYTHON" -m mtokspec goldens "$folder" -o "$models/$name/test_cases.jsonl" >/dev/null)
done
"$OUT/test_tokenizer" "$models"
