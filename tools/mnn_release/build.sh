#!/bin/sh
# Build mnn_tok from a released MNN (a tag that reads .mtok: 3.5.0, 3.6.0, 3.6.1), to check the
# mnn@VERSION semantics against it (tests/runtime/mnn/test_mnn_versions.py, MNN_VERSION_BINS;
# tools/mnn_versions.py records its answers):
#   MNN_REPO=<git dir of alibaba/MNN> OUT=<work dir> VERSION=3.6.1 tools/mnn_release/build.sh
# As ../shared/tools/mnn-reference/build.sh (the same stub headers), from the tag instead of HEAD;
# the driver is the reference mnn_tok.cpp with mnn_tok-release.patch: releases before 75e53afe5
# have no post-processor program (encode(text) only) and 3.5.0 no set_chat_template_context.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
ref=${MNN_REFERENCE:-$here/../../../shared/tools/mnn-reference}
: "${MNN_REPO:?set MNN_REPO}" "${OUT:?set OUT}" "${VERSION:?set VERSION (a tag, e.g. 3.6.1)}"
mkdir -p "$OUT/src"
git -C "$MNN_REPO" archive "$VERSION" transformers/llm/engine/src/tokenizer transformers/llm/engine/src/ujson.hpp \
    3rd_party/rapidjson | tar -x -C "$OUT/src"
git -C "$MNN_REPO" rev-parse "$VERSION^{commit}" > "$OUT/MNN_COMMIT"
T=$OUT/src/transformers/llm/engine/src/tokenizer
cp "$ref/mnn_tok.cpp" "$OUT/mnn_tok.cpp"
patch -s -d "$OUT" -p1 < "$here/mnn_tok-release.patch"
flags="-DMNN_NO_POST_PROCESSOR"
grep -q set_chat_template_context "$T/tokenizer.hpp" || flags="$flags -DMNN_NO_SET_CONTEXT"
g++ -O2 -std=c++17 -DLLM_USE_JINJA $flags -I "$ref/stub" -I "$OUT/src/3rd_party" -I "$T" \
    "$OUT/mnn_tok.cpp" "$T/tokenizer.cpp" "$T/unicode.cpp" "$T/unicode_data.cpp" -o "$OUT/mnn_tok"
echo "built $OUT/mnn_tok (MNN $VERSION, $(cat "$OUT/MNN_COMMIT"))"
