import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { completeUtf8, readSlice } from "../src/studio/home-files.js";

/* The console reader's byte windows: never a cut UTF-8 sequence, never a byte from outside LI_HOME. */

const bytes = (s: string) => Buffer.from(s, "utf8");

test("completeUtf8 stops before a sequence the window cut, and keeps whole ones", () => {
  const text = bytes("aé€😀");
  // a(1) é(2) €(3) 😀(4): every cut inside a sequence steps back to its lead byte.
  const cuts: [number, number][] = [[1, 1], [2, 1], [3, 3], [4, 3], [5, 3], [6, 6], [7, 6], [8, 6], [9, 6], [10, 10]];
  for (const [n, want] of cuts) expect([n, completeUtf8(text, n)]).toEqual([n, want]);
  // Bytes that are not UTF-8 at all are passed on rather than held back forever.
  expect(completeUtf8(Buffer.from([0x80, 0x80, 0x80, 0x80, 0x80]), 5)).toBe(5);
  expect(completeUtf8(Buffer.alloc(0), 0)).toBe(0);
});

describe("readSlice", () => {
  let home: string;
  const saved = process.env.LI_HOME;
  beforeEach(() => {
    home = fs.mkdtempSync(path.join(os.tmpdir(), "li-slice-"));
    process.env.LI_HOME = home;
  });
  afterEach(() => {
    process.env.LI_HOME = saved;
    fs.rmSync(home, { recursive: true, force: true });
  });

  test("pages through a file on sequence boundaries and joins back to the whole", () => {
    const file = path.join(home, "console.log");
    const whole = "😀é".repeat(1000) + "end";
    fs.writeFileSync(file, whole);
    let at = 0;
    let got = "";
    for (let i = 0; i < 10_000 && at < Buffer.byteLength(whole); i++) {
      const s = readSlice(file, at, 7);
      expect(s.end).toBeGreaterThan(s.offset);
      got += s.text;
      at = s.end;
    }
    expect(got).toBe(whole);
    // A window narrower than one sequence still moves on.
    expect(readSlice(file, 0, 1).end).toBe(1);
    const tail = readSlice(file, undefined, 3);
    expect([tail.text, tail.total]).toEqual(["end", Buffer.byteLength(whole)]);
  });

  test("a file outside LI_HOME, a symlink out of it, a directory and a missing file all read as empty", () => {
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), "li-out-"));
    try {
      fs.writeFileSync(path.join(outside, "secret"), "secret");
      fs.symlinkSync(path.join(outside, "secret"), path.join(home, "link"));
      fs.mkdirSync(path.join(home, "dir"));
      for (const f of [path.join(outside, "secret"), path.join(home, "link"), path.join(home, "dir"), path.join(home, "missing"), path.join(home, "..", path.basename(outside), "secret")])
        expect([f, readSlice(f, 0, 100)]).toEqual([f, { text: "", offset: 0, end: 0, total: 0 }]);
    } finally {
      fs.rmSync(outside, { recursive: true, force: true });
    }
  });
});
