#!/usr/bin/env node
// Compile a .ksy with the pinned kaitai-struct-compiler (package.json) and fail on any warning.
//
//   node tools/ksc/compile.js generated/mtok.ksy OUT_DIR python javascript cpp_stl java graphviz
//
// Writes OUT_DIR/<language>/<files>.  The package's API throws on errors but drops warnings, so this
// script loads the compiler with one hook that keeps the problem list of the last precompile; a
// compiler build without the hooked line is refused rather than checked silently.
"use strict";
const fs = require("fs");
const path = require("path");
const yaml = require("js-yaml");

const HOOKED_LINE = "var x1 = $n(problems).find__F1__s_Option(";

function loadCompiler() {
  const source = fs.readFileSync(require.resolve("kaitai-struct-compiler"), "utf8");
  if (source.split(HOOKED_LINE).length !== 2) {
    throw new Error("kaitai-struct-compiler build not recognised: the warning hook has no place to go");
  }
  const hooked = source.replace(HOOKED_LINE, "globalThis.__kscProblems = problems; " + HOOKED_LINE);
  const mod = { exports: {} };
  new Function("module", "exports", "define", hooked).call(globalThis, mod, mod.exports, undefined);
  return mod.exports;
}

function problemMessages() {
  const out = [];
  const problems = globalThis.__kscProblems;
  if (!problems) return out;
  const it = problems.iterator__sc_Iterator();
  while (it.hasNext__Z()) out.push(it.next__O().message__T());
  return out;
}

async function main(argv) {
  const [ksyPath, outDir, ...languages] = argv;
  if (!ksyPath || !outDir || languages.length === 0) {
    console.error("usage: compile.js FILE.ksy OUT_DIR LANGUAGE...");
    return 2;
  }
  const compiler = loadCompiler();
  const ksy = yaml.load(fs.readFileSync(ksyPath, "utf8"));
  const warnings = new Set();  // the same warning comes once per language
  for (const language of languages) {
    globalThis.__kscProblems = undefined;
    let files;
    try {
      files = await compiler.compile(language, ksy, null, false);
    } catch (err) {
      const text = err && typeof err.getMessage === "function" ? err.getMessage() : String(err);
      console.error(`${ksyPath}: ${language}: error: ${text}`);
      return 1;
    }
    for (const message of problemMessages()) warnings.add(message);
    for (const [name, text] of Object.entries(files)) {
      const target = path.join(outDir, language, name);
      fs.mkdirSync(path.dirname(target), { recursive: true });
      fs.writeFileSync(target, text);
    }
  }
  for (const message of warnings) console.error(`${ksyPath}: ${message}`);
  console.log(`kaitai-struct-compiler ${compiler.version}: ${languages.join(", ")}: ${warnings.size} warning(s)`);
  return warnings.size ? 1 : 0;
}

main(process.argv.slice(2)).then((code) => process.exit(code));
