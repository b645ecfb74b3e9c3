// stream_loop.js: the streaming loop of a hold table (mtokspec hold-table FILE -o hold.json), written
// from the JSON's "algorithm" alone, as an app would write it in C++, Kotlin or Swift.
//
//   node examples/stream_loop.js hold.json [--skip-special] ID...
//   node examples/stream_loop.js hold.json --cases cases.json    ([{"ids": [...], "skip": bool}, ...])
//
// prints one JSON array: the text each id adds, then what flush() adds (with --cases, one such
// array per case). Joined, they are Hugging Face tokenizers' decode(ids).
// (tests/runtime/test_stream.py runs it on the corpus tables.)
"use strict";
const fs = require("fs");

function fromHex(hex) {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.substr(2 * i, 2), 16);
  return out;
}

class Stream {
  constructor(table, skipSpecial) {
    if (table.format !== "mtokspec-hold-table" || table.version !== 1) throw new Error("not a hold table v1");
    this.tokens = new Map(table.tokens.map((e) => [e.id, e]));
    this.skipSpecial = skipSpecial;
    this.strip = table.strip;
    this.first = true;
    this.run = [];
    // TextDecoder replaces each maximal invalid subpart with one U+FFFD and, with stream: true,
    // keeps an incomplete character pending: the "bytes" decoder of the algorithm
    this.utf8 = table.utf8 === "bytes" ? new TextDecoder("utf-8", { fatal: false }) : null;
    this.lead = this.strip ? this.strip.start : 0;
    this.held = "";
  }

  step(id) {
    const e = this.tokens.get(id);
    if (e === undefined || (this.skipSpecial && e.special)) return "";
    const piece = this.first && "first" in e ? e.first : e.next;
    this.first = false;
    if (typeof piece === "number") {
      this.run.push(piece);
      return "";
    }
    const bytes = fromHex(piece);
    const text = this.closeRun() + (this.utf8 ? this.utf8.decode(bytes, { stream: true }) : new TextDecoder().decode(bytes));
    return this.emit(text);
  }

  flush() {
    let text = this.closeRun();
    if (this.utf8) text += this.utf8.decode();
    const out = this.emit(text);
    this.held = "";
    return out;
  }

  closeRun() {
    if (this.run.length === 0) return "";
    const bytes = Uint8Array.from(this.run);
    let text;
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch (err) {
      text = "\ufffd".repeat(bytes.length);
    }
    this.run = [];
    return text;
  }

  emit(text) {
    if (!this.strip) return text;
    const c = this.strip.char;
    let chars = Array.from(text); // code points, as the algorithm counts characters
    if (this.lead > 0) {
      let k = 0;
      while (k < this.lead && k < chars.length && chars[k] === c) k++;
      chars = chars.slice(k);
      this.lead = chars.length ? 0 : this.lead - k;
    }
    const s = Array.from(this.held).concat(chars);
    let k = 0;
    while (k < this.strip.stop && k < s.length && s[s.length - 1 - k] === c) k++;
    this.held = s.slice(s.length - k).join("");
    return s.slice(0, s.length - k).join("");
  }
}

function run(table, ids, skip) {
  const stream = new Stream(table, skip);
  const steps = ids.map((id) => stream.step(id));
  steps.push(stream.flush());
  return steps;
}

function main(argv) {
  const table = JSON.parse(fs.readFileSync(argv[0], "utf-8"));
  if (argv[1] === "--cases") {
    const cases = JSON.parse(fs.readFileSync(argv[2], "utf-8"));
    process.stdout.write(JSON.stringify(cases.map((c) => run(table, c.ids, c.skip))) + "\n");
    return;
  }
  const skip = argv.includes("--skip-special");
  const ids = argv.slice(1).filter((a) => a !== "--skip-special").map(Number);
  process.stdout.write(JSON.stringify(run(table, ids, skip)) + "\n");
}

main(process.argv.slice(2));
