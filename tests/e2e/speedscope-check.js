// SPDX-License-Identifier: MIT
// speedscope-check.js - checks a speedscope file against the published file format schema
// (https://www.speedscope.app/file-format-schema.json, from speedscope's
// src/lib/file-format-spec.ts), for tests/e2e/t302-flame-speedscope.sh. Written out by
// hand (no validator package): every "required" list, type and enum of the schema's
// FileFormat.File, FileFormat.Frame and FileFormat.SampledProfile (EventedProfile is
// rejected: nettrace-flame writes sampled profiles only), plus what speedscope's importer
// assumes and the schema cannot say: frame indexes in range, as many weights as samples,
// endValue >= startValue.
// Prints "PASS ..."/"FAIL ..." lines, then "PROFILE name<TAB>sum of weights<TAB>samples
// <TAB>endValue - startValue" per profile (weights and samples of the non-empty samples: an
// empty sample is time without one) and "FRAMES n". With --replay, the profiles are played
// in time order as speedscope's "Time Order" view does: "REPLAY name<TAB>start<TAB>weight
// <TAB>frame names joined by ';'" per non-empty sample, start = startValue plus the weights
// before it.
//   node speedscope-check.js [--replay] FILE.json
"use strict";
const fs = require("fs");

const UNITS = ["bytes", "microseconds", "milliseconds", "nanoseconds", "none", "seconds"];
let failures = 0;
const replay = process.argv.includes("--replay");
function check(cond, d, why) {
	if (cond) {
		console.log("PASS " + d);
	} else {
		failures++;
		console.log("FAIL " + d + (why === undefined ? "" : ": " + why));
	}
	return cond;
}
const isObj = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
const isNum = (v) => typeof v === "number" && isFinite(v);

let f;
try {
	f = JSON.parse(fs.readFileSync(process.argv[process.argv.length - 1], "utf8"));
} catch (e) {
	check(false, "the file is JSON", e.message);
	process.exit(0);
}
check(true, "the file is JSON");
if (!check(isObj(f), "FileFormat.File is an object"))
	process.exit(0);
for (const k of ["$schema", "profiles", "shared"])
	check(k in f, "File has required property " + k);
check(f.$schema === "https://www.speedscope.app/file-format-schema.json",
      "$schema is the speedscope schema URL", f.$schema);
if ("name" in f) check(typeof f.name === "string", "name is a string");
if ("exporter" in f) check(typeof f.exporter === "string", "exporter is a string");
if ("activeProfileIndex" in f)
	check(isNum(f.activeProfileIndex), "activeProfileIndex is a number");

const frames = isObj(f.shared) && Array.isArray(f.shared.frames) ? f.shared.frames : null;
check(isObj(f.shared) && "frames" in f.shared, "shared has required property frames");
if (check(frames !== null, "shared.frames is an array")) {
	let bad = 0;
	for (const fr of frames) {
		if (!isObj(fr) || typeof fr.name !== "string" ||
		    ("file" in fr && typeof fr.file !== "string") ||
		    ("line" in fr && !isNum(fr.line)) || ("col" in fr && !isNum(fr.col)))
			bad++;
	}
	check(bad === 0, "every frame is a FileFormat.Frame {name: string}", bad + " bad");
}
const nf = frames ? frames.length : 0;

if (check(Array.isArray(f.profiles), "profiles is an array")) {
	check(f.profiles.length > 0, "there is at least one profile");
	if ("activeProfileIndex" in f)
		check(f.activeProfileIndex >= 0 && f.activeProfileIndex < f.profiles.length,
		      "activeProfileIndex names a profile");
	f.profiles.forEach((p, i) => {
		const n = "profile " + i + " (" + (p && p.name) + ")";
		if (!check(isObj(p), n + " is an object"))
			return;
		for (const k of ["endValue", "name", "samples", "startValue", "type", "unit", "weights"])
			check(k in p, n + " has required property " + k);
		check(p.type === "sampled", n + " is a sampled profile", p.type);
		check(typeof p.name === "string", n + ": name is a string");
		check(UNITS.includes(p.unit), n + ": unit is a FileFormat.ValueUnit", p.unit);
		check(isNum(p.startValue) && isNum(p.endValue), n + ": startValue and endValue are numbers");
		check(p.endValue >= p.startValue, n + ": endValue >= startValue");
		const okS = Array.isArray(p.samples) && p.samples.every((s) => Array.isArray(s) &&
			s.every((x) => isNum(x)));
		check(okS, n + ": samples is an array of number arrays");
		const okW = Array.isArray(p.weights) && p.weights.every(isNum);
		check(okW, n + ": weights is an array of numbers");
		if (!okS || !okW)
			return;
		check(p.samples.length === p.weights.length, n + ": one weight per sample",
		      p.samples.length + " vs " + p.weights.length);
		const out = p.samples.reduce((a, s) => a + s.filter((x) =>
			!Number.isInteger(x) || x < 0 || x >= nf).length, 0);
		check(out === 0, n + ": every frame index is in shared.frames", out + " out of range");
		check(p.weights.every((w) => w >= 0), n + ": weights are not negative");
		const sum = p.weights.reduce((a, w) => a + w, 0);
		check(Math.abs(sum - (p.endValue - p.startValue)) <= 1e-6 * Math.max(1, sum) + 0.001,
		      n + ": endValue - startValue is the sum of the weights", sum + " vs " + p.endValue);
		let busy = 0, nbusy = 0;
		p.samples.forEach((st, i) => { if (st.length) { busy += p.weights[i]; nbusy++; } });
		console.log("PROFILE " + p.name + "\t" + busy + "\t" + nbusy + "\t" +
			    (p.endValue - p.startValue));
		if (replay) {
			let at = p.startValue;
			p.samples.forEach((st, i) => {
				if (st.length)
					console.log("REPLAY " + p.name + "\t" + at + "\t" + p.weights[i] + "\t" +
						    st.map((x) => frames[x].name).join(";"));
				at += p.weights[i];
			});
		}
	});
}
console.log("FRAMES " + nf);
process.exit(0);
