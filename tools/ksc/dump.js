#!/usr/bin/env node
// Parse files with a Kaitai-generated JavaScript parser and print each tree as one JSON line.
//
//   NODE_PATH=tools/ksc/node_modules node tools/ksc/dump.js OUT/javascript/MtokFile.js MtokFile FILE...
//
// Each line: {"file": ..., "ok": true, "tree": ...} or {"file": ..., "ok": false, "error": ...}.
// Objects hold their seq attributes and their instances (getters), names as the JS parser spells
// them (camelCase; an instance that reads an absent optional field is null); bytes are {"__bytes__": hex}; -0, NaN and infinities are {"__f64__": text}.
"use strict";
const fs = require("fs");
const path = require("path");
const KaitaiStream = require("kaitai-struct/KaitaiStream");

function plain(value) {
  if (value === null || value === undefined) return null;
  if (value instanceof Uint8Array) return { __bytes__: Buffer.from(value).toString("hex") };
  if (typeof value === "number") {
    if (Object.is(value, -0)) return { __f64__: "-0" };  // String(-0) is "0": the sign would be lost
    return Number.isFinite(value) ? value : { __f64__: String(value) };
  }
  if (Array.isArray(value)) return value.map(plain);
  if (typeof value !== "object") return value;  // strings, booleans
  const out = {};
  for (const key of Object.keys(value)) {
    if (!key.startsWith("_")) out[key] = plain(value[key]);
  }
  const getters = Object.getOwnPropertyDescriptors(Object.getPrototypeOf(value));
  for (const [key, descriptor] of Object.entries(getters)) {
    if (!descriptor.get || key.startsWith("_")) continue;
    try {
      out[key] = plain(value[key]);
    } catch (err) {
      if (!(err instanceof TypeError)) throw err;
      out[key] = null;  // an instance over an absent optional field (mtok's extension without a program)
    }
  }
  return out;
}

function main(argv) {
  const [parserPath, className, ...files] = argv;
  const Parser = require(path.resolve(parserPath))[className];
  for (const file of files) {
    let line;
    try {
      const tree = new Parser(new KaitaiStream(fs.readFileSync(file)));
      line = { file, ok: true, tree: plain(tree) };
    } catch (err) {
      line = { file, ok: false, error: String(err && err.message ? err.message : err) };
    }
    process.stdout.write(JSON.stringify(line) + "\n");
  }
}

main(process.argv.slice(2));
